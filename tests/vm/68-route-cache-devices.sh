#!/bin/bash
# Cached routes never keep a network device alive. The director caches
# each real server's route (per CPU), and a route holds a reference on the
# device it leaves by; a device is freed only once every reference is
# gone: until then deleting it blocks, and the kernel logs
# "unregister_netdevice: waiting for DEV to become free". For IPv4 and
# IPv6, with NAT, DR and TUN real servers whose routes are cached: the
# director's link to the real server is deleted and must be gone within
# seconds; rebuilt, traffic flows again (the caches refill). Then a link
# goes down and up under cached routes, and last a director namespace
# with cached routes and live services is deleted. Same test for IPVS.
#
#   switch "sw" bridges cl c0, lb d0 and rs f0: 10.0.0.0/24, 2001:db8:a::/64
#   switch "lnk" bridges lb d1 (172.16.0.1, 2001:db8:16::1), rs r0 (.2, ::2)
#     and the NAT server rsn n0 (.3, ::3, default route via lb)
#   VIPs on lb's lo and on rs's lo (DR/TUN; rs answers over the switch).
. "$(dirname "$0")/../lib.sh"

adm_init rr
VIP4=10.0.100.1 VIP6=2001:db8:100::1
newns SW sw; newns LNK lnk; newns CL cl; newns LB lb; newns RS rs; newns RSN rsn
switch3 "$SW" "$CL" "$LB" "$RS"
nsip "$LNK" <<IP
link add br1 type bridge
link set br1 up
link add lr type veth peer name r0 netns $RS
link add ln type veth peer name n0 netns $RSN
link set lr master br1 up
link set ln master br1 up
IP
nsip "$CL" <<IP
link set c0 up
addr add 10.0.0.2/24 dev c0
addr add 2001:db8:a::2/64 dev c0 nodad
route add $VIP4/32 via 10.0.0.1
route add $VIP6/128 via 2001:db8:a::1
IP
nsip "$LB" <<IP
link set d0 up
addr add 10.0.0.1/24 dev d0
addr add 2001:db8:a::1/64 dev d0 nodad
addr add $VIP4/32 dev lo
addr add $VIP6/128 dev lo
IP
nsip "$RS" <<IP
link set f0 up
addr add 10.0.0.3/24 dev f0
addr add 2001:db8:a::3/64 dev f0 nodad
link set r0 up
addr add 172.16.0.2/24 dev r0
addr add 2001:db8:16::2/64 dev r0 nodad
addr add $VIP4/32 dev lo
addr add $VIP6/128 dev lo
link set tunl0 up
link set ip6tnl0 up
IP
nsip "$RSN" <<IP
link set n0 up
addr add 172.16.0.3/24 dev n0
addr add 2001:db8:16::3/64 dev n0 nodad
route add default via 172.16.0.1
route add default via 2001:db8:16::1
IP
nsysctl "$RS" net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2 \
  net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
  net.ipv4.conf.tunl0.rp_filter=0 net.ipv4.conf.r0.rp_filter=0
# (IPv6 addresses stay on a device that goes down, as IPv4's do.)
nsysctl "$LB" net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 \
  net.ipv4.conf.all.send_redirects=0 net.ipv4.conf.default.send_redirects=0 \
  net.ipv6.conf.all.keep_addr_on_down=1 net.ipv6.conf.default.keep_addr_on_down=1

# The director's link to the real servers (again after each deletion),
# with the same MAC address each time, so the servers' neighbour entries
# for the director stay right.
link_up() {
  nsip "$LB" <<IP
link add d1 address 02:00:00:00:16:01 type veth peer name l0 netns $LNK
link set d1 up
addr add 172.16.0.1/24 dev d1
addr add 2001:db8:16::1/64 dev d1 nodad
IP
  nsip "$LNK" <<<"link set l0 master br1 up"
}

# del_link NS DEV LABEL: deletes DEV; fails if that still waits after
# 30 s (deletion blocks until the last reference to the device is gone).
del_link() {
  local ns=$1 dev=$2 label=$3 t0 pid i
  t0=$(date +%s%N)
  ip -n "$ns" link del "$dev" &
  pid=$!
  for i in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -0 "$pid" 2>/dev/null &&
    fail "$label: deleting $dev still waits after 30 s: something holds a reference to it"
  wait "$pid" || fail "$label: ip link del $dev failed"
  log "$label: $dev deleted in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
}

# traffic LABEL: 2 TCP connections to each service (NAT :80 to rsn, DR
# :81 and TUN :82 to rs) of both families must reach their real server.
traffic() {
  local vip
  for vip in $VIP4 $VIP6; do
    expect_balance "$CL" tcp $vip 80 2 "rsn:2" "$1, NAT $vip"
    expect_balance "$CL" tcp $vip 81 2 "rs:2" "$1, DR $vip"
    expect_balance "$CL" tcp $vip 82 2 "rs:2" "$1, TUN $vip"
  done
}

link_up
serve_name_bg "$RSN" tcp 80 rsn; serve_name_bg "$RS" tcp 81 rs; serve_name_bg "$RS" tcp 82 rs
wait_listen "$RSN" tcp 80; wait_listen "$RS" tcp 81; wait_listen "$RS" tcp 82
# One service per method and family: "VIP RSN RS" with brackets for IPv6.
for svc in "$VIP4 172.16.0.3 172.16.0.2" "[$VIP6] [2001:db8:16::3] [2001:db8:16::2]"; do
  set -- $svc
  adm_ok "$LB" -A -t "$1:80" -s rr
  adm_ok "$LB" -a -t "$1:80" -r "$2:80" -m
  adm_ok "$LB" -A -t "$1:81" -s rr
  adm_ok "$LB" -a -t "$1:81" -r "$3:81" -g
  adm_ok "$LB" -A -t "$1:82" -s rr
  adm_ok "$LB" -a -t "$1:82" -r "$3:82" -i
done
traffic "routes cached"

del_link "$LB" d1 "link deleted under cached routes"
out=$(lb_names "$CL" tcp $VIP6 80 1) || true
case $out in rsn) fail "a NAT connection reached the real server without its link" ;; esac
link_up
traffic "link rebuilt"

# Down and up: the routes via d1 go and come back; the caches follow.
nsip "$LB" <<<"link set d1 down"
nsip "$LB" <<<"link set d1 up"
sleep 1
traffic "link down and up"

# The whole director namespace, with live services and cached routes.
# Its teardown runs in the background (cleanup_net) and waits for every
# device's references; the kernel says so after
# netdev_unregister_timeout_secs (lowered to 3 here, from 10).
tmo=/proc/sys/net/core/netdev_unregister_timeout_secs
old_tmo=$(cat $tmo)
echo 3 >$tmo || fail "cannot set $tmo"
at_exit "echo $old_tmo >$tmo"
mark=$(kmsg_mark)
ip netns del "$LB" || fail "ip netns del of the director"
sleep 8
dmesg_since "$mark" | grep "unregister_netdevice: waiting" | head -3 | sed 's/^/# /' >&2
dmesg_since "$mark" | grep -q "unregister_netdevice: waiting" &&
  fail "a device of the deleted director namespace waited for its references"
if [ "$ADM" = rvsadm ]; then
  # rvs's own exit for that namespace ran: rmmod would wait for a teardown
  # still blocked on a device.
  rmmod rvs &
  pid=$!
  for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -0 "$pid" 2>/dev/null && fail "rmmod rvs still waits after 20 s: the director namespace's teardown is stuck"
  wait "$pid" || fail "rmmod rvs failed"
  insmod "$RVS_ROOT/rvs.ko" || fail "insmod rvs.ko"
fi
pass "no cached route kept a device alive (IPv4 and IPv6, NAT, DR, TUN)"
