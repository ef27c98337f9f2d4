#!/bin/bash
# TUN with GUE and GRE (--tun-type gue|gre, --tun-port, --tun-csum,
# --tun-remcsum): the director wraps requests in UDP+GUE or GRE, with or
# without the tunnel checksum, or (GUE) with remote checksum offload, where
# the real server completes the inner checksum; the real server's own
# decapsulation (fou + tunl0, gre devices) accepts them, which it does only
# with correct checksums; nftables counters on the real server see the
# encapsulation on the wire. Same on IPVS.
. "$(dirname "$0")/../lib.sh"

adm_init rr
mk_test_tmp
topo_direct tgg
rs=${RS[1]} rip=${RIP[1]}

nsysctl "$rs" net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2 \
  net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
  net.ipv4.conf.r0.rp_filter=0 net.ipv4.conf.f0.rp_filter=0
ip -n "$rs" addr add $VIP/32 dev lo
nsysctl "$LB" net.ipv4.ip_forward=0 net.ipv4.conf.all.send_redirects=0 net.ipv4.conf.default.send_redirects=0

# What reaches the real server, counted before decapsulation.
ip netns exec "$rs" nft -f - <<'NFT' || fail "nft rules on the real server"
table ip wire {
  counter gue_csum {}
  counter gue_nocsum {}
  counter gue_remcsum {}
  counter gre_csum {}
  counter gre_nocsum {}
  chain in {
    type filter hook prerouting priority -300;
    udp dport 6080 udp checksum 0 counter name gue_nocsum
    udp dport 6080 udp checksum != 0 @th,67,5 0 counter name gue_csum
    udp dport 6080 udp checksum != 0 @th,67,5 2 @th,80,16 1 @th,96,1 1 counter name gue_remcsum
    ip protocol gre @th,0,1 1 counter name gre_csum
    ip protocol gre @th,0,1 0 counter name gre_nocsum
  }
}
NFT
wire() { nft_counter "$rs" ip wire "$1"; }
# The path MTU the client learnt toward the VIP from the director's own
# "fragmentation needed": the link's 1500 less the encapsulation.
client_mtu() { ip -n "$CL" route get $VIP | grep -o 'mtu [0-9]*' | cut -d' ' -f2; }
expect_client_mtu() {
  local got; got=$(client_mtu)
  assert_eq "${got:-none}" "$1" "$2: path MTU the client learnt toward the VIP"
  ip -n "$CL" route flush cache
}

adm_ok "$LB" -A -t $VIP:8080 -s rr

# --- GUE: fou on the real server hands the inner packet to tunl0.
ip -n "$rs" fou add port 6080 gue || fail "ip fou add (CONFIG_NET_FOU?)"
ip -n "$rs" link set tunl0 up 2>/dev/null || { ip -n "$rs" link add tunl0 type ipip; ip -n "$rs" link set tunl0 up; }
nsysctl "$rs" net.ipv4.conf.tunl0.rp_filter=0
# With remcsum, the GUE option (hlen 2, private flags with REMCSUM) is on
# the packets whose checksum the director left to the device.
for mode in nocsum csum remcsum; do
  adm_ok "$LB" -a -t $VIP:8080 -r $rip:8080 -i --tun-type gue --tun-port 6080 --tun-$mode
  listing=$(adm "$LB" -L -n --tun-info) || fail "-L --tun-info: $listing"
  case $mode in csum) want=gue:6080:+c ;; remcsum) want=gue:6080:r+c ;; *) want=gue:6080:-c ;; esac
  echo "$listing" | grep -q "Tunnel  $want " || fail "GUE $mode: listing lacks $want: $listing"
  before=$(wire gue_$mode)
  check_transfer "$CL" "$rs" $VIP 8080 8080 32 "GUE $mode"
  check_transfer "$CL" "$rs" $VIP 8080 8080 102400 "GUE $mode"
  # 20 (IPv4) + 8 (UDP) + 4 (GUE), + 8 for the remote checksum option.
  case $mode in remcsum) expect_client_mtu 1460 "GUE $mode" ;; *) expect_client_mtu 1468 "GUE $mode" ;; esac
  after=$(wire gue_$mode)
  [ "$after" -gt "$before" ] || fail "GUE $mode: no GUE packets with that checksum mode reached the real server"
  log "GUE $mode: $((after - before)) encapsulated packets seen on the real server"
  adm_ok "$LB" -d -t $VIP:8080 -r $rip:8080
done
[ "$(wire gue_csum)" -gt 0 ] && [ "$(wire gue_nocsum)" -gt 0 ] || fail "GUE checksum modes not both seen"
ip -n "$rs" fou del port 6080

# --- GRE without checksum: the namespace's fallback device gre0.
ip -n "$rs" link set gre0 up || fail "no gre0 (CONFIG_NET_IPGRE?)"
nsysctl "$rs" net.ipv4.conf.gre0.rp_filter=0
adm_ok "$LB" -a -t $VIP:8080 -r $rip:8080 -i --tun-type gre
echo "$(adm "$LB" -L -n --tun-info)" | grep -q "Tunnel  gre:-c " || fail "GRE listing"
check_transfer "$CL" "$rs" $VIP 8080 8080 102400 "GRE nocsum"
expect_client_mtu 1476 "GRE nocsum" # 20 + 4
[ "$(wire gre_nocsum)" -gt 0 ] || fail "GRE nocsum: no plain GRE packets on the wire"

# --- GRE with checksum: a device that insists on checksums (icsum); it
# drops packets with a wrong one.
ip -n "$rs" link add grec type gre local $rip icsum || fail "ip link add gre icsum"
ip -n "$rs" link set grec up
nsysctl "$rs" net.ipv4.conf.grec.rp_filter=0
adm_ok "$LB" -e -t $VIP:8080 -r $rip:8080 -i --tun-type gre --tun-csum
echo "$(adm "$LB" -L -n --tun-info)" | grep -q "Tunnel  gre:+c " || fail "GRE csum listing"
check_transfer "$CL" "$rs" $VIP 8080 8080 102400 "GRE csum"
expect_client_mtu 1472 "GRE csum" # 20 + 8
[ "$(wire gre_csum)" -gt 0 ] || fail "GRE csum: no checksummed GRE packets on the wire"
errs=$(ip -n "$rs" -s link show grec | awk '/RX:/ {getline; print $3}')
log "grec receive errors (bad checksums): ${errs:-?}"
[ "${errs:-0}" = 0 ] || fail "GRE csum: the real server counted $errs bad packets"

if [ "$ADM" = rvsadm ]; then
  # JSON names the tunnel; the module refuses what it does not do.
  adm "$LB" -L -n --json | python3 -c '
import json, sys
d = json.load(sys.stdin)["services"][0]["dests"][0]
assert d["tunnel"] == {"type": "gre", "checksum": "csum"}, d' || fail "JSON tunnel"
  out=$(adm "$LB" -a -t $VIP:8080 -r 172.16.0.9:8080 -i --tun-type gre --tun-remcsum 2>&1) &&
    fail "remcsum accepted with GRE"
  log "remcsum with gre: $out"
fi
pass "GUE and GRE tunnels, with and without checksums, delivered intact"
