#!/bin/bash
# NAT (masquerading, -m): bytes sent by a client to VIP:port reach the real
# server intact (32 B and ~100 KB), also with port mapping VIP:80 -> RIP:8080.
#   client 10.0.0.2 -- director (VIP 10.0.100.1 on lo) -- real server 10.0.1.1
. "$(dirname "$0")/../lib.sh"

adm_init rr
mk_test_tmp
topo_nat nat 1

# Same port on both sides.
adm_ok "$LB" -A -t $VIP:8000 -s rr
adm_ok "$LB" -a -t $VIP:8000 -r ${RIP[1]}:8000 -m -w 1
check_transfer "$CL" "${RS[1]}" $VIP 8000 8000 32 "NAT 8000->8000"
check_transfer "$CL" "${RS[1]}" $VIP 8000 8000 102400 "NAT 8000->8000"

# Port mapping: the service listens on 80, the real server on 8080.
adm_ok "$LB" -A -t $VIP:80 -s rr
adm_ok "$LB" -a -t $VIP:80 -r ${RIP[1]}:8080 -m -w 1
check_transfer "$CL" "${RS[1]}" $VIP 80 8080 32 "NAT 80->8080"
check_transfer "$CL" "${RS[1]}" $VIP 80 8080 102400 "NAT 80->8080"

# The client saw the VIP, never the real server: its reply traffic came back
# with the VIP as source (a request/answer round trip checks the return path).
serve_name "${RS[1]}" tcp 8080 rs1
expect_balance "$CL" tcp $VIP 80 3 "rs1:3" "NAT replies through the director"
pass "NAT forwarding intact, with and without port mapping"
