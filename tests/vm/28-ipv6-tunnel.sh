#!/bin/bash
# IPv6 services by direct routing and tunnels, with real traffic:
# DR, IPv6-in-IPv6 with path MTU discovery (ICMPv6 "packet too big"), and a
# mixed-family tunnels (an IPv6 service served by an IPv4 real server over
# 6in4, an IPv4 service by an IPv6 real server over 4in6), as IPVS allows; GUE and GRE with IPv6 inside and outside. Same
# ipvsadm syntax for both engines.
. "$(dirname "$0")/../lib.sh"

adm_init rr
mk_test_tmp
VIP=2001:db8:100::1

# --- DR and TUN ----------------------------------------------------------------
#   switch "sw" bridges cl (2001:db8:a::2), lb (2001:db8:a::1) and rs (f0 2001:db8:a::3)
#   lb d1 2001:db8:16::1/64 ---- rs r0 2001:db8:16::2/64 (RIP6), 172.16.0.1/24 -- 172.16.0.2/24 (RIP4)
newns SW sw; newns DCL dcl; newns DLB dlb; newns DRS drs
RIP6=2001:db8:16::2 RIP4=172.16.0.2
switch3 "$SW" "$DCL" "$DLB" "$DRS"
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
# Mixed families the other way: an IPv4 service, an IPv6 real server
# reached over 4in6 (an ipip6 tunnel device on the real server takes IPv4
# inside IPv6 to its address). The server answers over the switch, from
# the IPv4 VIP on its loopback.
VIP4=10.9.100.1
nsip "$DCL" <<IP
addr add 10.9.0.2/24 dev c0
route add $VIP4/32 via 10.9.0.1
IP
nsip "$DLB" <<IP
addr add 10.9.0.1/24 dev d0
addr add $VIP4/32 dev lo
IP
nsip "$DRS" <<IP
addr add 10.9.0.3/24 dev f0
addr add $VIP4/32 dev lo
IP
ip -n "$DRS" -6 tunnel add t4in6 mode ipip6 local $RIP6 || fail "no ipip6 tunnel (CONFIG_IPV6_TUNNEL?)"
ip -n "$DRS" link set t4in6 up
nsysctl "$DRS" net.ipv4.conf.t4in6.rp_filter=0 net.ipv4.conf.f0.rp_filter=0 \
  net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2
serve_name "$DRS" tcp 82 drs6
adm_ok "$DLB" -A -t $VIP4:82 -s rr
adm_ok "$DLB" -a -t $VIP4:82 -r "[$RIP6]:82" -i
expect_balance "$DCL" tcp $VIP4 82 3 "drs6:3" "IPv4 service, IPv6 real server (4in6)"
list=$(adm "$DLB" -L -n) || fail "$ADM -L -n failed"
printf '%s\n' "$list" | grep -q -- "-> \[$RIP6\]:82 *Tunnel" || fail "4in6 real server not listed: $list"
conns=$(adm "$DLB" -L -n -c) || fail "$ADM -L -n -c failed"
printf '%s\n' "$conns" | grep -q "$VIP4:82 *\[$RIP6\]:82" ||
  fail "4in6 connection not listed with the IPv6 real server: $conns"
# Away with it: for IPv6-in-IPv6 to the same address it would be the best
# match, and drop what it does not carry (ip6ip6 inside GUE, below).
ip -n "$DRS" link del t4in6

# --- GUE and GRE with IPv6 ------------------------------------------------------
# The real server decapsulates with its own stack (fou for GUE on both
# families, the fallback ip6gre0 device for GRE over IPv6, ip6tnl0 and sit0
# for the inner packet), which drops anything with a wrong checksum; nft
# counts the encapsulations on the wire before that.
ip netns exec "$DRS" nft -f - <<'NFT' || fail "nft rules on the real server"
table inet wire {
  counter gue6_csum {}
  counter gue6_nocsum {}
  counter gue6_remcsum {}
  counter gre6_csum {}
  counter gre6_nocsum {}
  counter gue4 {}
  chain in {
    type filter hook prerouting priority -300;
    meta nfproto ipv6 udp dport 6080 udp checksum 0 counter name gue6_nocsum
    meta nfproto ipv6 udp dport 6080 udp checksum != 0 @th,67,5 0 counter name gue6_csum
    meta nfproto ipv6 udp dport 6080 udp checksum != 0 @th,67,5 2 counter name gue6_remcsum
    ip6 nexthdr gre @th,0,1 1 counter name gre6_csum
    ip6 nexthdr gre @th,0,1 0 counter name gre6_nocsum
    meta nfproto ipv4 udp dport 6080 counter name gue4
  }
}
NFT
wire() { nft_counter "$DRS" inet wire "$1"; }
ip -n "$DRS" fou add port 6080 gue -6 || fail "ip fou add -6 (CONFIG_NET_FOU, IPv6)"
ip -n "$DRS" fou add port 6080 gue || fail "ip fou add"
ip -n "$DRS" link set ip6gre0 up || fail "no ip6gre0 (CONFIG_IPV6_GRE?)"
adm_ok "$DLB" -A -t "[$VIP]:8082" -s rr
for t in "gue --tun-port 6080 --tun-nocsum:gue6_nocsum" "gue --tun-port 6080 --tun-csum:gue6_csum" \
  "gue --tun-port 6080 --tun-remcsum:gue6_remcsum" \
  "gre --tun-nocsum:gre6_nocsum" "gre --tun-csum:gre6_csum"; do
  opts=${t%%:*} counter=${t##*:}
  if [ "$counter" = gre6_csum ]; then
    # Checksummed GRE needs a device that expects it (icsum; the fallback
    # device drops it as a checksum mismatch), and it drops wrong sums.
    ip -n "$DRS" link add g6c type ip6gre local $RIP6 icsum || fail "ip link add ip6gre icsum"
    ip -n "$DRS" link set g6c up
  fi
  # shellcheck disable=SC2086 # the tunnel options are words
  adm_ok "$DLB" -a -t "[$VIP]:8082" -r "[$RIP6]:8082" -i --tun-type $opts
  before=$(wire "$counter")
  check_transfer "$DCL" "$DRS" $VIP 8082 8082 102400 "IPv6 over IPv6 in $opts"
  after=$(wire "$counter")
  log "$opts: $((after - before)) encapsulated packets on the real server's wire"
  [ "$after" -gt "$before" ] || fail "$opts: nothing counted as $counter on the real server"
  adm_ok "$DLB" -d -t "[$VIP]:8082" -r "[$RIP6]:8082"
done
# IPv6 in GUE over IPv4 (an IPv4 real server of the IPv6 service).
adm_ok "$DLB" -a -t "[$VIP]:8082" -r $RIP4:8082 -i --tun-type gue --tun-port 6080 --tun-csum
before=$(wire gue4)
check_transfer "$DCL" "$DRS" $VIP 8082 8082 102400 "IPv6 in GUE over IPv4"
after=$(wire gue4)
[ "$after" -gt "$before" ] || fail "IPv6 in GUE over IPv4: no GUE packets over IPv4 on the real server"
errs=$(ip -n "$DRS" -s link show g6c | awk '/RX:/ {getline; print $3}')
log "g6c receive errors (bad GRE checksums): ${errs:-?}"
[ "${errs:-0}" = 0 ] || fail "GRE csum over IPv6: the real server counted $errs bad packets"

pass "IPv6 NAT, DR, TUN (ip6ip6, GUE, GRE) and mixed-family tunnels balance real traffic"
