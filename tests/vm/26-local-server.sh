#!/bin/bash
# A Local real server (forwarding method 1, IPVS's LOCALNODE, listed
# "Local"): the director serves those connections itself. Its packets go on
# unchanged to the director's own socket on the VIP, next to a NAT server
# of the same service, for remote clients (LOCAL_IN) and for a client on
# the director (LOCAL_OUT). Neither ipvsadm nor rvsadm has an option for
# it; tests/py/add_local_dest.py sends the netlink message, to the IPVS
# family on IPVS.
. "$(dirname "$0")/../lib.sh"
adm_init rr
topo_nat locn 1
serve_name "${RS[1]}" tcp 80 rs1
serve_name "$LB" tcp 80 director
adm_ok "$LB" -A -t $VIP:80 -s rr
adm_ok "$LB" -a -t $VIP:80 -r ${RIP[1]}:80 -m -w 1
family=RVS; [ "$ADM" = ipvsadm ] && family=IPVS
ip netns exec "$LB" python3 "$RVS_ROOT/tests/py/add_local_dest.py" $family $VIP 80 10.0.1.254 80 ||
  fail "cannot add a Local real server"
list=$(adm "$LB" -L -n)
printf '%s\n' "$list" | sed 's/^/#   /' >&2
printf '%s\n' "$list" | grep -Eq -- "-> 10.0.1.254:80 +Local +1 " || fail "-L -n does not list the Local server"
expect_balance "$CL" tcp $VIP 80 4 "director:2 rs1:2" "remote client, rr over a NAT and a Local server"
expect_balance "$LB" tcp $VIP 80 4 "director:2 rs1:2" "client on the director, rr over a NAT and a Local server"
# The Local server alone (the NAT one quiesced): every connection local.
adm_ok "$LB" -e -t $VIP:80 -r ${RIP[1]}:80 -m -w 0
# IPVS's listing shows counters its estimator folded in (every 2 s), and
# -Z zeroes only what was folded: wait until the 4 earlier connections
# are in before zeroing, or they arrive after it.
local_conns() { adm "$LB" -L -n --stats | awk '$2 == "10.0.1.254:80" {print $3}'; }
assert_eq "$(settled 4 local_conns)" 4 "connections the Local server counted before -Z"
adm_ok "$LB" -Z
expect_balance "$CL" tcp $VIP 80 3 "director:3" "remote client, Local server only"
assert_eq "$(settled 3 local_conns)" 3 "connections the Local server counted"
pass "Local real servers serve from the director, remote and local clients"
