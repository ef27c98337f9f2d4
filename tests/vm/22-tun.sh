#!/bin/bash
# TUN (ipip, -i): the director encapsulates requests in IPIP to the real
# server, which decapsulates on tunl0, holds the VIP and answers the client
# directly. Topology as in the kernel's selftest ipvs.sh (topo_direct).
. "$(dirname "$0")/../lib.sh"

adm_init rr
mk_test_tmp
topo_direct tun
rs=${RS[1]}

# The real server: tunl0 up (the ipip fallback device of the namespace),
# VIP on lo, no ARP for it, no reverse-path filter (requests arrive on
# tunl0, replies leave via f0).
ip -n "$rs" link set tunl0 up 2>/dev/null || { ip -n "$rs" link add tunl0 type ipip 2>/dev/null; ip -n "$rs" link set tunl0 up; } ||
  fail "no tunl0 in the real server's namespace (CONFIG_NET_IPIP?)"
nsysctl "$rs" net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2 \
  net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
  net.ipv4.conf.tunl0.rp_filter=0 net.ipv4.conf.r0.rp_filter=0 net.ipv4.conf.f0.rp_filter=0
ip -n "$rs" addr add $VIP/32 dev lo
# The director only encapsulates: no forwarding, no redirects.
nsysctl "$LB" net.ipv4.ip_forward=0 net.ipv4.conf.all.send_redirects=0 net.ipv4.conf.default.send_redirects=0

adm_ok "$LB" -A -t $VIP:8080 -s rr
adm_ok "$LB" -a -t $VIP:8080 -r ${RIP[1]}:8080 -i -w 1
check_transfer "$CL" "$rs" $VIP 8080 8080 32 "TUN"

# Full-size segments do not fit in IPIP over a 1500 MTU link: the director
# must answer with ICMP "fragmentation needed" (MTU 1480) so the client's
# path MTU discovery shrinks its segments.
check_transfer "$CL" "$rs" $VIP 8080 8080 102400 "TUN (path MTU discovery)"
pmtu=$(ip -n "$CL" route get $VIP 2>/dev/null | grep -o 'mtu [0-9]*' | cut -d' ' -f2)
assert_eq "${pmtu:-none}" 1480 "path MTU the client learnt toward the VIP (1500 less ipip's 20)"

# UDP through TUN, answered from the VIP.
serve_udp_on "$rs" $VIP 53 rs1
adm_ok "$LB" -A -u $VIP:53 -s rr
adm_ok "$LB" -a -u $VIP:53 -r ${RIP[1]}:53 -i -w 1
expect_balance "$CL" udp $VIP 53 3 "rs1:3" "UDP through TUN"
pass "TUN forwarding intact (TCP and UDP)"
