#!/bin/bash
# IPv6 services with real traffic: NAT (TCP and UDP, two real servers,
# round robin), direct routing, IPv6-in-IPv6 tunnelling with path MTU
# discovery (ICMPv6 "packet too big"), and a mixed-family tunnel (an IPv6
# service served by an IPv4 real server over 6in4), as IPVS allows. Same
# ipvsadm syntax for both engines ([ADDR]:PORT).
. "$(dirname "$0")/../lib.sh"

adm_init rr
mk_test_tmp

# --- NAT ---------------------------------------------------------------------
#   cl c0 2001:db8::2/64 --- d0 2001:db8::1/64 lb, VIP 2001:db8:100::1 on lo
#                            br0 2001:db8:1::254/64 -- rsI r0 2001:db8:1::I/64
newns CL cl; newns LB lb; newns RS1 rs1; newns RS2 rs2
VIP=2001:db8:100::1
{
  echo "link add d0 type veth peer name c0 netns $CL"
  echo "link set d0 up"
  echo "addr add 2001:db8::1/64 dev d0 nodad"
  echo "addr add $VIP/128 dev lo"
  echo "link add br0 type bridge"
  echo "link set br0 up"
  echo "addr add 2001:db8:1::254/64 dev br0 nodad"
  for i in 1 2; do
    r=RS$i
    echo "link add lbr$i type veth peer name r0 netns ${!r}"
    echo "link set lbr$i master br0 up"
  done
} | nsip "$LB"
nsip "$CL" <<IP
link set c0 up
addr add 2001:db8::2/64 dev c0 nodad
route add default via 2001:db8::1
IP
for i in 1 2; do
  r=RS$i
  nsip "${!r}" <<IP
link set r0 up
addr add 2001:db8:1::$i/64 dev r0 nodad
route add default via 2001:db8:1::254
IP
done
nsysctl "$LB" net.ipv6.conf.all.forwarding=1
# The bridge's own address needs its port up before it leaves "tentative".
sleep 1

serve_name_bg "$RS1" tcp 8080 rs1; serve_name_bg "$RS2" tcp 8080 rs2
serve_name_bg "$RS1" udp 5353 rs1; serve_name_bg "$RS2" udp 5353 rs2
wait_listen "$RS1" tcp 8080; wait_listen "$RS2" tcp 8080
wait_listen "$RS1" udp 5353; wait_listen "$RS2" udp 5353

adm_ok "$LB" -A -t "[$VIP]:80" -s rr
adm_ok "$LB" -a -t "[$VIP]:80" -r "[2001:db8:1::1]:8080" -m
adm_ok "$LB" -a -t "[$VIP]:80" -r "[2001:db8:1::2]:8080" -m
adm_ok "$LB" -A -u "[$VIP]:53" -s rr
adm_ok "$LB" -a -u "[$VIP]:53" -r "[2001:db8:1::1]:5353" -m
adm_ok "$LB" -a -u "[$VIP]:53" -r "[2001:db8:1::2]:5353" -m

expect_balance "$CL" tcp $VIP 80 6 "rs1:3 rs2:3" "IPv6 NAT TCP"
expect_balance "$CL" udp $VIP 53 6 "rs1:3 rs2:3" "IPv6 NAT UDP"

conns=$(adm "$LB" -L -n -c) || fail "$ADM -L -n -c failed"
printf '%s\n' "$conns" | sed 's/^/#   /' >&2
printf '%s\n' "$conns" | grep -q "\[2001:db8::2\]:[0-9]* *\[$VIP\]:80 *\[2001:db8:1::[12]\]:8080" ||
  fail "no IPv6 NAT connection in the listing"
printf '%s\n' "$conns" | grep -q "^UDP .*\[$VIP\]:53 *\[2001:db8:1::[12]\]:5353" ||
  fail "no IPv6 UDP connection in the listing"
stats=$(adm "$LB" -L -n --stats) || fail "$ADM -L -n --stats failed"
printf '%s\n' "$stats" | grep -q "^TCP  \[$VIP\]:80 *6 " || fail "IPv6 service did not count 6 connections: $stats"

# A client on the director itself (LOCAL_OUT request, LOCAL_IN reply).
expect_balance "$LB" tcp $VIP 80 2 "rs1:1 rs2:1" "IPv6 NAT TCP, client on the director"

# IPv4 next to IPv6 in the same namespace, to the same (dual-stack) servers.
nsip "$LB" <<IP
addr add 10.0.0.1/24 dev d0
addr add 10.0.100.1/32 dev lo
addr add 10.0.1.254/24 dev br0
IP
nsip "$CL" <<IP
addr add 10.0.0.2/24 dev c0
route add default via 10.0.0.1
IP
for i in 1 2; do
  r=RS$i
  printf 'addr add 10.0.1.%s/24 dev r0\nroute add default via 10.0.1.254\n' $i | nsip "${!r}"
done
nsysctl "$LB" net.ipv4.ip_forward=1
adm_ok "$LB" -A -t 10.0.100.1:80 -s rr
adm_ok "$LB" -a -t 10.0.100.1:80 -r 10.0.1.1:8080 -m
adm_ok "$LB" -a -t 10.0.100.1:80 -r 10.0.1.2:8080 -m
expect_balance "$CL" tcp 10.0.100.1 80 2 "rs1:1 rs2:1" "IPv4 NAT next to IPv6"
expect_balance "$CL" tcp $VIP 80 2 "rs1:1 rs2:1" "IPv6 NAT next to IPv4"
adm_ok "$LB" -C

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
