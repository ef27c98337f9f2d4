#!/bin/bash
# ICMP errors about the director's own tunnel packets (TUN: ipip, GUE,
# GRE): a router between director and real server with a smaller MTU
# answers the director's tunnel packets with "fragmentation needed". The
# kernel has no tunnel device for them and would drop the error: the
# director would keep sending too big, a black hole for the client. rvs
# (as IPVS) lowers the route's MTU and tells the client, about its own
# packet and from the VIP, the MTU less the tunnel's overhead; a 100 KB
# upload then arrives intact. The same script passes against IPVS.
#
#   switch "sw" bridges client "cl" c0 10.0.0.2, director "lb" d0 10.0.0.1
#   (VIP 10.0.100.1 on lo) and real server "rs" f0 10.0.0.3 (its replies);
#   lb d1 172.16.0.1 -- e0 172.16.0.254 router "rt" e1 172.16.1.254 (MTU
#   1400) -- r0 172.16.1.2 rs (RIP, where the tunnels end)
. "$(dirname "$0")/../lib.sh"
adm_init rr
mk_test_tmp
newns SW itn-sw; newns CL itn-cl; newns LB itn-lb; newns RT itn-rt; newns RS itn-rs
VIP=10.0.100.1 RIP=172.16.1.2 PATH_MTU=1400
switch3 "$SW" "$CL" "$LB" "$RS"
nsip "$CL" <<IP
link set c0 up
addr add 10.0.0.2/24 dev c0
route add $VIP/32 via 10.0.0.1
IP
nsip "$LB" <<IP
link set d0 up
addr add 10.0.0.1/24 dev d0
addr add $VIP/32 dev lo
link add d1 type veth peer name e0 netns $RT
link set d1 up
addr add 172.16.0.1/24 dev d1
route add 172.16.1.0/24 via 172.16.0.254
IP
nsip "$RT" <<IP
link set e0 up
addr add 172.16.0.254/24 dev e0
link add e1 type veth peer name r0 netns $RS
link set e1 mtu $PATH_MTU
link set e1 up
addr add 172.16.1.254/24 dev e1
IP
nsip "$RS" <<IP
link set f0 up
addr add 10.0.0.3/24 dev f0
link set r0 up
addr add $RIP/24 dev r0
route add 172.16.0.0/24 via 172.16.1.254
addr add $VIP/32 dev lo
IP
nsysctl "$RT" net.ipv4.ip_forward=1
nsysctl "$LB" net.ipv4.conf.all.send_redirects=0 net.ipv4.conf.default.send_redirects=0
nsysctl "$RS" net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2 \
  net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
  net.ipv4.conf.r0.rp_filter=0 net.ipv4.conf.f0.rp_filter=0
# Decapsulation on the real server: tunl0 (ipip), fou (GUE), gre0 (GRE).
ip -n "$RS" link set tunl0 up 2>/dev/null || { ip -n "$RS" link add tunl0 type ipip; ip -n "$RS" link set tunl0 up; }
ip -n "$RS" fou add port 6080 gue || fail "ip fou add (CONFIG_NET_FOU?)"
ip -n "$RS" link set gre0 up || fail "no gre0 (CONFIG_NET_IPGRE?)"
nsysctl "$RS" net.ipv4.conf.tunl0.rp_filter=0 net.ipv4.conf.gre0.rp_filter=0

icmp_stats() {
  local ns
  for ns in "$CL" "$LB" "$RT" "$RS"; do
    log "${ns#$NS_PREFIX-}: $(ip netns exec "$ns" awk '/^Icmp:/ {print}' /proc/net/snmp | tail -1)"
  done
}
at_exit '[ "$rc" = 0 ] || icmp_stats'
# The path MTU a namespace has cached toward an address ("" if none).
cached_mtu() { ip -n "$1" route get "$2" 2>/dev/null | grep -o 'mtu [0-9]*' | cut -d' ' -f2 || true; }

adm_ok "$LB" -A -t $VIP:8080 -s rr
# type options : bytes the tunnel adds (outer IPv4 header + UDP/GUE or GRE)
for t in "ipip:20" "gue --tun-port 6080:32" "gre:24"; do
  opts=${t%:*} overhead=${t##*:} kind=${t%% *}
  kind=${kind%:*}
  # shellcheck disable=SC2086 # the tunnel options are words
  adm_ok "$LB" -a -t $VIP:8080 -r $RIP:8080 -i --tun-type $opts
  # Each case starts with no path MTU learnt anywhere.
  ip -n "$CL" route flush cache; ip -n "$LB" route flush cache
  check_transfer "$CL" "$RS" $VIP 8080 8080 102400 "$kind through a $PATH_MTU-byte hop"
  lb_mtu=$(cached_mtu "$LB" $RIP) cl_mtu=$(cached_mtu "$CL" $VIP)
  log "$kind: director's route to the real server: mtu ${lb_mtu:-none}; client's route to the VIP: mtu ${cl_mtu:-none}"
  assert_eq "$lb_mtu" "$PATH_MTU" "$kind: path MTU the director learnt toward the real server"
  assert_eq "$cl_mtu" "$((PATH_MTU - overhead))" "$kind: path MTU the client learnt (the hop's less the tunnel's $overhead bytes)"
  adm_ok "$LB" -d -t $VIP:8080 -r $RIP:8080
done
pass "fragmentation needed about ipip, GUE and GRE tunnel packets reaches the client, less the tunnel overhead"
