#!/bin/bash
# IPv6 NAT services with real traffic: TCP and UDP, two real servers,
# round robin, a client on the director, the connection listing, and an
# IPv4 service next to the IPv6 one. Same ipvsadm syntax for both engines
# ([ADDR]:PORT). DR and tunnels: 29-ipv6-tunnel.sh.
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
pass "IPv6 NAT (TCP, UDP, local client) balances real traffic, next to IPv4"
