#!/bin/bash
# Scheduling over NAT with three real servers that answer their name:
# rr spreads evenly, wrr follows the weights exactly, weight 0 quiesces a
# server, a deleted server gets nothing, a deleted service balances nothing.
. "$(dirname "$0")/../lib.sh"

adm_init rr wrr
topo_nat bal 3
for i in 1 2 3; do serve_name_bg "${RS[$i]}" tcp 80 rs$i; done
for i in 1 2 3; do wait_listen "${RS[$i]}" tcp 80; done
svc="-t $VIP:80"

adm_ok "$LB" -A $svc -s rr
for i in 1 2 3; do adm_ok "$LB" -a $svc -r ${RIP[$i]}:80 -m -w 1; done
expect_balance "$CL" tcp $VIP 80 30 "rs1:10 rs2:10 rs3:10" "rr, weights 1:1:1"

adm_ok "$LB" -E $svc -s wrr
adm_ok "$LB" -e $svc -r ${RIP[1]}:80 -m -w 3
adm_ok "$LB" -e $svc -r ${RIP[2]}:80 -m -w 2
adm_ok "$LB" -e $svc -r ${RIP[3]}:80 -m -w 1
expect_balance "$CL" tcp $VIP 80 60 "rs1:30 rs2:20 rs3:10" "wrr, weights 3:2:1"

adm_ok "$LB" -e $svc -r ${RIP[1]}:80 -m -w 0
expect_balance "$CL" tcp $VIP 80 30 "rs2:20 rs3:10" "wrr, weights 0:2:1"

adm_ok "$LB" -d $svc -r ${RIP[2]}:80
expect_balance "$CL" tcp $VIP 80 10 "rs3:10" "wrr, rs2 deleted, weights 0:-:1"

adm_ok "$LB" -D $svc
# Nothing listens on the director's own VIP:80, so the connections are refused.
got=$(lb_names "$CL" tcp $VIP 80 5 | count_names)
log "service deleted: 5 connections -> $got"
case "$got" in
  *rs[0-9]*) fail "a real server still answered after the service was deleted: $got" ;;
esac
pass "rr, wrr, weight 0, -d and -D schedule exactly"
