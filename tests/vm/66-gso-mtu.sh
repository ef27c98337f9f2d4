#!/bin/bash
# The path-MTU check also holds for GSO packets (several TCP segments in
# one skb, as a veth or GRO delivers them): their segments must fit the
# route to the real server, else the director answers "fragmentation
# needed" itself, from the VIP and quoting the packet as the client sent
# it (to the VIP). Skipping GSO packets leaves the check to the output
# path after NAT, whose error quotes the real server's address: the
# client's TCP cannot match it and never learns the path MTU.
#
# NAT topology; the director's link to the real servers has an MTU of
# 1400 while the real server's own link has 1500 (so it offers an MSS of
# 1460). nftables on the client counts "fragmentation needed" errors by
# the destination they quote: the VIP (right) or the real server (wrong).
. "$(dirname "$0")/../lib.sh"

adm_init rr
mk_test_tmp
topo_nat gso 1
rs=${RS[1]}
ip -n "$LB" link set br0 mtu 1400
ip -n "$LB" link set lbr1 mtu 1400
ip netns exec "$CL" nft -f - <<NFT || fail "nft on the client"
table ip t {
  chain in {
    type filter hook input priority 0;
    icmp type destination-unreachable icmp code frag-needed @th,192,32 $(printf '0x%02x%02x%02x%02x' ${VIP//./ }) ip saddr $VIP counter name quoting_vip
    icmp type destination-unreachable icmp code frag-needed @th,192,32 $(printf '0x%02x%02x%02x%02x' ${RIP[1]//./ }) counter name quoting_rip
    icmp type destination-unreachable icmp code frag-needed counter name all_frag_needed
  }
  counter quoting_vip {}
  counter quoting_rip {}
  counter all_frag_needed {}
}
NFT
count() { nft_counter "$CL" ip t "$1"; }

adm_ok "$LB" -A -t $VIP:80 -s rr
adm_ok "$LB" -a -t $VIP:80 -r ${RIP[1]}:8080 -m
check_transfer "$CL" "$rs" $VIP 80 8080 307200 "NAT over a 1400-byte hop"
vip=$(count quoting_vip) rip=$(count quoting_rip) all=$(count all_frag_needed)
mtu=$(ip -n "$CL" route get $VIP | grep -o 'mtu [0-9]*' || true)
log "fragmentation needed at the client: $all in all, $vip from the VIP quoting the VIP, $rip quoting the real server; client route: ${mtu:-no mtu}"
assert_eq "$rip" 0 "errors quoting the real server's address (after NAT)"
[ "$vip" -ge 1 ] || fail "no 'fragmentation needed' from the VIP quoting the VIP ($all in all)"
assert_eq "$mtu" "mtu 1400" "the client's path MTU to the VIP"
pass "GSO packets get the path-MTU check before NAT"
