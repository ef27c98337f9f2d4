#!/bin/bash
# UDP NAT service: datagrams reach the real servers and their answers come
# back from the VIP; each new flow (new client port) is scheduled rr.
. "$(dirname "$0")/../lib.sh"

adm_init rr
topo_nat udp 3
for i in 1 2 3; do serve_name_bg "${RS[$i]}" udp 53 rs$i; done
for i in 1 2 3; do wait_listen "${RS[$i]}" udp 53; done
# An echo service for content checks, on the first real server only.
ip netns exec "${RS[1]}" socat UDP4-RECVFROM:7,fork PIPE </dev/null >/dev/null 2>&1 &
bg_track $!
wait_listen "${RS[1]}" udp 7

adm_ok "$LB" -A -u $VIP:53 -s rr
for i in 1 2 3; do adm_ok "$LB" -a -u $VIP:53 -r ${RIP[$i]}:53 -m -w 1; done
# Source ports 21000.. are fresh flows, one datagram each.
expect_balance "$CL" udp $VIP 53 30 "rs1:10 rs2:10 rs3:10" "UDP rr" 21000

# Port mapping VIP:7777 -> RIP:7, payload echoed intact.
adm_ok "$LB" -A -u $VIP:7777 -s rr
adm_ok "$LB" -a -u $VIP:7777 -r ${RIP[1]}:7 -m -w 1
token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
reply=$(printf '%s\n' "$token" | timeout 10 ip netns exec "$CL" socat -T 3 - "UDP4:$VIP:7777,sourceport=22000" 2>&1)
assert_eq "$reply" "$token" "UDP echo through VIP:7777 -> RIP:7"
log "UDP echo of a 48-byte token intact"

# Several datagrams of one flow stay on one server.
got=$(lb_names "$CL" udp $VIP 53 5 23000 0 | count_names)
log "5 datagrams from one client port -> $got"
case "$got" in rs[123]:5) ;; *) fail "one UDP flow was spread over servers: $got" ;; esac

adm_ok "$LB" -D -u $VIP:53
got=$(lb_names "$CL" udp $VIP 53 2 24000 | count_names)
log "service deleted: 2 datagrams -> $got"
case "$got" in *rs[0-9]*) fail "a real server still answered after -D: $got" ;; esac
pass "UDP NAT forwards, answers from the VIP, balances rr per flow"
