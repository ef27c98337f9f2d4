#!/bin/bash
# A client on the director itself (the LOCAL_OUT path) reaches a NAT
# service: data intact and rr balancing.
. "$(dirname "$0")/../lib.sh"

adm_init rr
mk_test_tmp
topo_nat loc 2
for i in 1 2; do serve_name_bg "${RS[$i]}" tcp 80 rs$i; done
for i in 1 2; do wait_listen "${RS[$i]}" tcp 80; done

adm_ok "$LB" -A -t $VIP:80 -s rr
for i in 1 2; do adm_ok "$LB" -a -t $VIP:80 -r ${RIP[$i]}:80 -m -w 1; done
expect_balance "$LB" tcp $VIP 80 10 "rs1:5 rs2:5" "local client, rr"

adm_ok "$LB" -A -t $VIP:8000 -s rr
adm_ok "$LB" -a -t $VIP:8000 -r ${RIP[1]}:8080 -m -w 1
check_transfer "$LB" "${RS[1]}" $VIP 8000 8080 32 "local client NAT 8000->8080"
check_transfer "$LB" "${RS[1]}" $VIP 8000 8080 102400 "local client NAT 8000->8080"

# The remote client still works alongside.
expect_balance "$CL" tcp $VIP 80 4 "rs1:2 rs2:2" "remote client, rr"
pass "local client reaches the NAT service"
