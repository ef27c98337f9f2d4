#!/bin/bash
# conntrack=1 with tunnels: the packet the director encapsulates must not
# leave with the inner packet's conntrack entry. An nftables masquerade on
# the director's link to the real server applies to what leaves there;
# if the tunnel packet still carried the inner TCP connection's entry, NAT
# would rewrite "the TCP header" at the outer packet's transport offset,
# that is inside the inner IP header (ipip) or the GUE/GRE header, and the
# real server would receive garbage. IPVS confirms the inner entry and
# resets it before sending (ip_vs_tunnel_xmit_prepare), so the outer packet
# gets an entry of its own. 100 KB through ipip, GUE and GRE must arrive
# intact with conntrack=1 and the masquerade in place.
. "$(dirname "$0")/../lib.sh"

adm_init rr
mk_test_tmp
topo_direct ctt
rs=${RS[1]} rip=${RIP[1]}
tun_rs
ip -n "$rs" fou add port 6080 gue || fail "ip fou add (CONFIG_NET_FOU?)"
ip -n "$rs" link add gre1 type gre remote 172.16.0.1 local $rip || fail "gre device"
ip -n "$rs" link set gre1 up
nsysctl "$rs" net.ipv4.conf.gre1.rp_filter=0

ip netns exec "$LB" nft -f - <<'NFT' || fail "nft setup"
table ip rvstest {
  chain post {
    type nat hook postrouting priority srcnat; policy accept;
    oifname "d1" counter masquerade
  }
}
NFT
set_opt conntrack 1

adm_ok "$LB" -A -t $VIP:8080 -s rr
for t in ipip gue gre; do
  case $t in
    ipip) opts=() ;;
    gue) opts=(--tun-type gue --tun-port 6080) ;;
    gre) opts=(--tun-type gre) ;;
  esac
  adm_ok "$LB" -a -t $VIP:8080 -r $rip:8080 -i "${opts[@]}"
  check_transfer "$CL" "$rs" $VIP 8080 8080 102400 "$t with conntrack=1 and a masquerade"
  adm_ok "$LB" -d -t $VIP:8080 -r $rip:8080
done
pass "tunnelled packets leave with their own conntrack entry"
