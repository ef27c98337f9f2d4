#!/bin/bash
# IPv6 NAT services with real traffic: TCP and UDP, two real servers,
# round robin, one-packet scheduling, a client on the director, the
# connection listing, conntrack (untracked by default, tracked with
# conntrack=1), and an
# IPv4 service next to the IPv6 one. Then IPv6 firewall-mark services
# (-f MARK -6): nftables marks TCP to VIP:81 of both families with 6; the
# IPv6 mark service balances the IPv6 packets, an IPv4 mark service with
# the same mark only the IPv4 ones (IPVS keys mark services by family and
# mark), persistence by /64, listing and save/restore. Same ipvsadm syntax
# for both engines ([ADDR]:PORT, -f 6 -6). DR and tunnels:
# 28-ipv6-tunnel.sh.
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
# conns_of KIND ID: the Conns column of one service in -L -n --stats.
conns_of() { adm "$LB" -L -n --stats | awk -v k="$1" -v id="$2" '$1 == k && $2 == id {print $3; exit}'; }
n=$(settled 6 conns_of TCP "[$VIP]:80")
assert_eq "$n" 6 "connections the IPv6 service counted"

# IPv6 one-packet scheduling (-o): ten datagrams from one socket are
# scheduled one by one (rr alternates) and leave no entry. The replies are
# not translated back (no entry to do it with, as in IPVS): the client
# reads them on an unconnected socket.
adm_ok "$LB" -A -u "[$VIP]:54" -s rr -o
for i in 1 2; do adm_ok "$LB" -a -u "[$VIP]:54" -r "[2001:db8:1::$i]:5353" -m; done
got=$(timeout 60 ip netns exec "$CL" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.bind(("::", 25000))
s.settimeout(3)
for _ in range(10):
    s.sendto(b"who\n", (sys.argv[1], 54))
    try:
        print(s.recvfrom(256)[0].decode().strip())
    except socket.timeout:
        print("ERR:timeout")
' "$VIP" | count_names)
log "IPv6 -o: 10 datagrams from one socket -> $got"
assert_eq "$got" "rs1:5 rs2:5" "IPv6 one-packet scheduling spreads one socket's datagrams"
n=$(adm "$LB" -L -n -c | grep -c "^UDP .*\[$VIP\]:54 ")
assert_eq "$n" 0 "connection entries left by IPv6 one-packet datagrams"
adm_ok "$LB" -D -u "[$VIP]:54"

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

# conntrack with IPv6 NAT: the director's postrouting counts, by conntrack
# state, the requests it sends to the real servers: untracked with
# conntrack=0 (the default), tracked with 1, their reply tuple naming the
# real server (as 70-conntrack checks for IPv4).
ip netns exec "$LB" nft -f - <<NFT || fail "nft rules (conntrack)"
table ip6 ct6 {
  counter ct_untracked {}
  counter ct_tracked {}
  chain out {
    type filter hook postrouting priority 300; policy accept;
    oifname "br0" ip6 daddr 2001:db8:1::/64 tcp dport 8080 ct state untracked counter name ct_untracked
    oifname "br0" ip6 daddr 2001:db8:1::/64 tcp dport 8080 ct reply ip6 saddr 2001:db8:1::/64 counter name ct_tracked
  }
}
NFT
# ct6_counts: "UNTRACKED TRACKED" packets so far.
ct6_counts() { echo "$(nft_counter "$LB" ip6 ct6 ct_untracked) $(nft_counter "$LB" ip6 ct6 ct_tracked)"; }
expect_balance "$CL" tcp $VIP 80 2 "rs1:1 rs2:1" "IPv6 NAT, conntrack=0"
read -r u0 t0 < <(ct6_counts)
[ "$u0" -gt 0 ] && [ "$t0" = 0 ] || fail "IPv6 NAT with conntrack=0: $u0 untracked, $t0 tracked (want some, 0)"
set_opt conntrack 1
expect_balance "$CL" tcp $VIP 80 2 "rs1:1 rs2:1" "IPv6 NAT, conntrack=1"
read -r u1 t1 < <(ct6_counts)
log "IPv6 NAT: conntrack=0 $u0 untracked, $t0 tracked; conntrack=1 $((u1 - u0)) more untracked, $t1 tracked"
[ "$u1" = "$u0" ] && [ "$t1" -gt 0 ] || fail "IPv6 NAT with conntrack=1: $((u1 - u0)) more untracked, $t1 tracked (want 0, some)"
set_opt conntrack 0
ip netns exec "$LB" nft delete table ip6 ct6

# --- Firewall-mark services of both families, same mark --------------------
command -v nft >/dev/null || fail "nft (nftables) not installed (qemu/install-deps installs it)"
ip netns exec "$LB" nft -f - <<NFT || fail "nft rules"
table inet rvsfwm6 {
  chain pre {
    type filter hook prerouting priority mangle; policy accept;
    ip6 daddr $VIP tcp dport 81 meta mark set 6
    ip daddr 10.0.100.1 tcp dport 81 meta mark set 6
  }
}
NFT
# not_balanced NS ADDR LABEL: TCP to ADDR:81 reaches no real server.
not_balanced() {
  local got
  got=$(lb_names "$1" tcp "$2" 81 2 | count_names); log "$3: $2:81 -> $got"
  case "$got" in *rs*) fail "$3: balanced ($got)" ;; esac
}
# An IPv4 mark service (rs1 only) does not catch IPv6 packets with its mark.
adm_ok "$LB" -A -f 6 -s rr
adm_ok "$LB" -a -f 6 -r 10.0.1.1:8080 -m
not_balanced "$CL" $VIP "IPv6 marked 6, only an IPv4 mark-6 service"
expect_balance "$CL" tcp 10.0.100.1 81 2 "rs1:2" "IPv4 marked 6, IPv4 mark service"
adm_ok "$LB" -A -f 6 -6 -s rr
for i in 1 2; do adm_ok "$LB" -a -f 6 -6 -r "[2001:db8:1::$i]:8080" -m; done
list=$(adm "$LB" -L -n) || fail "$ADM -L -n failed"
printf '%s\n' "$list" | sed 's/^/#   /' >&2
printf '%s\n' "$list" | grep -qx "FWM  6 IPv6 rr" || fail "-L -n lacks 'FWM  6 IPv6 rr'"
printf '%s\n' "$list" | grep -qx "FWM  6 rr" || fail "-L -n lacks 'FWM  6 rr'"
n=$(printf '%s\n' "$list" | grep -A2 -x "FWM  6 IPv6 rr" | grep -c -- "-> \[2001:db8:1::[12]\]:8080 *Masq")
assert_eq "$n" 2 "IPv6 real servers listed under FWM  6 IPv6"
expect_balance "$CL" tcp $VIP 81 4 "rs1:2 rs2:2" "IPv6 marked 6, IPv6 mark service"
expect_balance "$CL" tcp 10.0.100.1 81 2 "rs1:2" "IPv4 marked 6 still to the IPv4 mark service"
fwm6_conns() { adm "$LB" -L -n --stats | awk '$1 == "FWM" && $2 == 6 && $3 == "IPv6" {print $4; exit}'; }
n=$(settled 4 fwm6_conns)
assert_eq "$n" 4 "connections the IPv6 mark service counted"
# ... and the IPv6 mark service does not catch IPv4 packets with its mark.
adm_ok "$LB" -D -f 6
not_balanced "$CL" 10.0.100.1 "IPv4 marked 6, only an IPv6 mark-6 service"
if [ "$ADM" = rvsadm ]; then
  fam=$(adm "$LB" -L -n --json | python3 -c '
import json, sys
print(" ".join("%s/%s" % (s["family"], s.get("fwmark")) for s in json.load(sys.stdin)["services"] if s.get("fwmark")))') ||
    fail "--json"
  assert_eq "$fam" "ipv6/6" "--json family of the mark service"
  out=$(adm "$LB" -A -t "[$VIP]:81" -6 2>&1) && fail "-6 without -f accepted"
  case "$out" in *"-6/--ipv6 needs -f/--fwmark-service"*) ;; *) fail "unexpected message for -6 without -f: $out" ;; esac
fi

# Persistence by client /64: the template is keyed by (IPv6, mask, mark).
# Traffic to [VIP]:8080, marked too: a persistent IPVS mark service sends
# each packet to its own destination port (ip_vs_sched_persist), rvs to
# the real server's port, and both are 8080 there.
ip netns exec "$LB" nft add rule inet rvsfwm6 pre ip6 daddr $VIP tcp dport 8080 meta mark set 6 ||
  fail "nft rule for [VIP]:8080"
adm_ok "$LB" -E -f 6 -6 -s rr -p 60 -M 64
a=$(lb_names "$CL" tcp $VIP 8080 4 | count_names)
log "persistent -f 6 -6 -M 64: [$VIP]:8080 -> $a"
case "$a" in rs[12]:4) ;; *) fail "persistence of the IPv6 mark service broken: $a" ;; esac
line=$(adm "$LB" -L -n | grep "^FWM")
assert_eq "$line" "FWM  6 IPv6 rr persistent 60 mask 64" "listing of the persistent IPv6 mark service"
conns=$(adm "$LB" -L -n -c) || fail "$ADM -L -n -c failed"
tpl=$(printf '%s\n' "$conns" | awk '$1 == "IP" && $4 ~ /^\[2001:db8::\]:0$/' | wc -l)
[ "$tpl" = 1 ] || { printf '%s\n' "$conns" | sed 's/^/#   /' >&2; fail "expected one template for client 2001:db8::/64, got $tpl"; }

# Save and restore: ipvsadm-save's form for IPv6 mark services.
saved=$(adm "$LB" -S -n) || fail "$ADM -S -n failed"
printf '%s\n' "$saved" | sed 's/^/#   /' >&2
printf '%s\n' "$saved" | grep -qxF -- "-A -f 6 -6 -s rr -p 60 -M 64" || fail "-S lacks '-A -f 6 -6 -s rr -p 60 -M 64'"
for i in 1 2; do
  printf '%s\n' "$saved" | grep -qxF -- "-a -f 6 -6 -r [2001:db8:1::$i]:8080 -m -w 1" ||
    fail "-S lacks '-a -f 6 -6 -r [2001:db8:1::$i]:8080 -m -w 1'"
done
adm_ok "$LB" -C
out=$(printf '%s\n' "$saved" | ip netns exec "$LB" "$ADM" -R 2>&1) || fail "$ADM -R failed: $out"
again=$(adm "$LB" -S -n) || fail "$ADM -S -n after -R failed"
assert_eq "$again" "$saved" "-S after -R of -S"
pass "IPv6 NAT balances real traffic next to IPv4; IPv6 mark services balance, keep to their family, persist, save and restore"
