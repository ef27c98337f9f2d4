#!/bin/bash
# Fragmented UDP through a NAT service, both ways, IPv4 and IPv6 (large
# DNS answers, EDNS0): a request larger than the client's MTU arrives in
# fragments, and so does the real server's larger answer.
#  - IPv4 answers cross the director at FORWARD, where the stack does not
#    reassemble (without conntrack): rvs must gather the fragments, or only
#    the first (the one with the ports) gets the VIP as its source and the
#    client cannot reassemble the answer.
#  - IPv6 requests reach LOCAL_IN fragment by fragment (the stack
#    reassembles after it): rvs must have netfilter's IPv6 defragmentation
#    on, or the request misses the service.
# The real server answers each datagram with as many bytes as it asks for
# and says which address the request came to ("rs1 <n>" padded); the
# client checks size, source and content.
. "$(dirname "$0")/../lib.sh"

adm_init rr
mk_test_tmp
topo_nat frag 1
rs=${RS[1]}
topo_nat_ipv6

ip netns exec "$rs" python3 -c '
import socket
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.bind(("::", 5353))
while True:
    data, peer = s.recvfrom(65535)
    try:
        want = int(data.split(b" ")[0])
    except ValueError:
        continue
    head = ("rs1 %d got %d " % (want, len(data))).encode()
    s.sendto(head + b"y" * (want - len(head)), peer)
' </dev/null >/dev/null 2>&1 &
bg_track $!
wait_listen "$rs" udp 5353

adm_ok "$LB" -A -u $VIP:53 -s rr
adm_ok "$LB" -a -u $VIP:53 -r ${RIP[1]}:5353 -m
adm_ok "$LB" -A -u "[$VIP6]:53" -s rr
adm_ok "$LB" -a -u "[$VIP6]:53" -r "[2001:db8:1::1]:5353" -m
sleep 1

# ask ADDR REQ_BYTES ANSWER_BYTES: prints "from=ADDR len=N head" or ERR:...
ask() {
  timeout 20 ip netns exec "$CL" python3 -c '
import socket, sys
addr, req, ans = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
s = socket.socket(fam, socket.SOCK_DGRAM)
s.settimeout(3)
msg = ("%d " % ans).encode()
msg += b"x" * (req - len(msg))
for attempt in range(2):
    s.sendto(msg, (addr, 53))
    try:
        data, peer = s.recvfrom(65535)
    except socket.timeout:
        continue
    ok = data.endswith(b"y" * 16) or len(data) < 32
    print("from=%s len=%d %s%s" % (peer[0], len(data), b" ".join(data.split(b" ")[:4]).decode(), "" if ok else " CORRUPT"))
    sys.exit(0)
print("ERR:timeout")
' "$1" "$2" "$3" 2>&1
}
expect_answer() {
  local got
  got=$(ask "$1" "$2" "$3")
  log "$4: request $2 bytes, answer $3 bytes -> $got"
  assert_eq "$got" "$5" "$4"
}

expect_answer $VIP 100 100 "IPv4, no fragments" "from=$VIP len=100 rs1 100 got 100"
expect_answer $VIP 100 4000 "IPv4, fragmented answer" "from=$VIP len=4000 rs1 4000 got 100"
expect_answer $VIP 4000 100 "IPv4, fragmented request" "from=$VIP len=100 rs1 100 got 4000"
expect_answer $VIP6 100 100 "IPv6, no fragments" "from=$VIP6 len=100 rs1 100 got 100"
expect_answer $VIP6 4000 100 "IPv6, fragmented request" "from=$VIP6 len=100 rs1 100 got 4000"
expect_answer $VIP6 100 4000 "IPv6, fragmented answer" "from=$VIP6 len=4000 rs1 4000 got 100"
expect_answer $VIP6 4000 4000 "IPv6, fragmented both ways" "from=$VIP6 len=4000 rs1 4000 got 4000"
expect_answer $VIP 4000 4000 "IPv4, fragmented both ways" "from=$VIP len=4000 rs1 4000 got 4000"
pass "fragmented UDP requests and answers cross NAT whole, IPv4 and IPv6"
