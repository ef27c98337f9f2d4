#!/bin/bash
# IPv6 services by direct routing and tunnels, with real traffic:
# DR, IPv6-in-IPv6 with path MTU discovery (ICMPv6 "packet too big"), and a
# mixed-family tunnel (an IPv6 service served by an IPv4 real server over
# 6in4), as IPVS allows. Same ipvsadm syntax for both engines.
. "$(dirname "$0")/../lib.sh"

adm_init rr
mk_test_tmp
VIP=2001:db8:100::1

# --- DR and TUN ----------------------------------------------------------------
#   switch "sw" bridges cl (2001:db8:a::2), lb (2001:db8:a::1) and rs (f0 2001:db8:a::3)
#   lb d1 2001:db8:16::1/64 ---- rs r0 2001:db8:16::2/64 (RIP6), 172.16.0.1/24 -- 172.16.0.2/24 (RIP4)
newns SW sw; newns DCL dcl; newns DLB dlb; newns DRS drs
RIP6=2001:db8:16::2 RIP4=172.16.0.2
nsip "$SW" <<IP
link add br0 type bridge
link set br0 up
link add swc type veth peer name c0 netns $DCL
link add swl type veth peer name d0 netns $DLB
link add sws type veth peer name f0 netns $DRS
link set swc master br0 up
link set swl master br0 up
link set sws master br0 up
IP
nsip "$DCL" <<IP
link set c0 up
addr add 2001:db8:a::2/64 dev c0 nodad
route add $VIP/128 via 2001:db8:a::1
IP
nsip "$DLB" <<IP
link set d0 up
addr add 2001:db8:a::1/64 dev d0 nodad
addr add $VIP/128 dev lo
link add d1 type veth peer name r0 netns $DRS
link set d1 up
addr add 2001:db8:16::1/64 dev d1 nodad
addr add 172.16.0.1/24 dev d1
IP
nsip "$DRS" <<IP
link set f0 up
addr add 2001:db8:a::3/64 dev f0 nodad
link set r0 up
addr add $RIP6/64 dev r0 nodad
addr add $RIP4/24 dev r0
addr add $VIP/128 dev lo
link set ip6tnl0 up
link set sit0 up
IP
nsysctl "$DRS" net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 net.ipv4.conf.sit0.rp_filter=0 net.ipv4.conf.r0.rp_filter=0
nsysctl "$DLB" net.ipv6.conf.all.forwarding=0
sleep 1
serve_name "$DRS" tcp 80 drs

adm_ok "$DLB" -A -t "[$VIP]:80" -s rr
adm_ok "$DLB" -a -t "[$VIP]:80" -r "[$RIP6]:80" -g
expect_balance "$DCL" tcp $VIP 80 3 "drs:3" "IPv6 DR"
adm_ok "$DLB" -e -t "[$VIP]:80" -r "[$RIP6]:80" -i
expect_balance "$DCL" tcp $VIP 80 3 "drs:3" "IPv6 TUN (ip6ip6)"
# Full-size segments do not fit with 40 bytes of outer header: the director
# answers "packet too big" (MTU 1460) and the client's segments shrink.
adm_ok "$DLB" -A -t "[$VIP]:8080" -s rr
adm_ok "$DLB" -a -t "[$VIP]:8080" -r "[$RIP6]:8080" -i
check_transfer "$DCL" "$DRS" $VIP 8080 8080 102400 "IPv6 TUN (path MTU discovery)"
pmtu=$(ip -n "$DCL" -6 route get $VIP 2>/dev/null | grep -o 'mtu [0-9]*' || true)
log "client's route to the VIP after the transfer: ${pmtu:-no cached mtu}"
assert_eq "$pmtu" "mtu 1460" "path MTU learnt from ICMPv6 packet too big"

# Mixed families: an IPv6 service, an IPv4 real server reached over 6in4.
serve_name "$DRS" tcp 81 drs4
adm_ok "$DLB" -A -t "[$VIP]:81" -s rr
out=$(adm "$DLB" -a -t "[$VIP]:81" -r $RIP4:81 -m 2>&1) &&
  fail "a NAT IPv4 real server of an IPv6 service was accepted"
log "refused as expected: $out"
adm_ok "$DLB" -a -t "[$VIP]:81" -r $RIP4:81 -i
expect_balance "$DCL" tcp $VIP 81 3 "drs4:3" "IPv6 service, IPv4 real server (6in4)"
list=$(adm "$DLB" -L -n) || fail "$ADM -L -n failed"
printf '%s\n' "$list" | sed 's/^/#   /' >&2
printf '%s\n' "$list" | grep -q -- "-> $RIP4:81 *Tunnel" || fail "mixed-family real server not listed"
if [ "$ADM" = rvsadm ]; then
  conns=$(adm "$DLB" -L -n -c) || fail "rvsadm -L -n -c failed"
  printf '%s\n' "$conns" | grep -q "\[$VIP\]:81 *$RIP4:81" ||
    fail "mixed-family connection not listed with the IPv4 real server: $conns"
fi
pass "IPv6 NAT, DR, TUN and a mixed-family tunnel balance real traffic"
