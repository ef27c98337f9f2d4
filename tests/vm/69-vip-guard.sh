#!/bin/bash
# The VIP port guard (rvsadm --set-option vip_guard=off|drop|reject): the
# ClusterIP port leak of IPVS (kubernetes #72236) and rvs's answer to it.
# The director listens on the wildcard address (TCP 443, UDP 5353, as an
# sshd or a DNS cache would) and carries a NAT service VIP:80, IPv4 and
# IPv6:
#  - both engines, guard off (IPVS has no guard): VIP:443 and VIP:5353
#    reach the director's own listeners, as the director's address does;
#  - rvs, vip_guard=drop: VIP:443 (v4, v6) and VIP:5353 get no answer
#    (connect times out), and the drops are counted (rvsadm -L --json
#    "vip_guarded"); VIP:80 still balances, the director's own address
#    still reaches its listeners, ping to the VIP still answers, and
#    connections the director opens itself from the VIP (TCP, and UDP with
#    conntrack on) get their replies;
#  - rvs, vip_guard=reject: VIP:443 and VIP:5353 are refused at once (ICMP
#    port unreachable: ECONNREFUSED), VIP:80 still balances.
. "$(dirname "$0")/../lib.sh"
adm_init rr
topo_nat vg 1
topo_nat_ipv6
RIP6=2001:db8:1::1
serve_name_bg "${RS[1]}" tcp 80 rs1
serve_name_bg "${RS[1]}" udp 53 rs1-dns
serve_name_bg "$LB" tcp 443 director
# The director's UDP listener records what it receives (a wildcard
# socket would answer from the director's own address, which a client of
# the VIP ignores): one line per datagram in $TEST_TMP/udp.
mk_test_tmp
ip netns exec "$LB" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.bind(("::", 5353))
while True:
    data, peer = s.recvfrom(2048)
    with open(sys.argv[1], "a") as f:
        f.write(peer[0] + "\n")
' "$TEST_TMP/udp" </dev/null >/dev/null 2>&1 &
bg_track $!
udp_seen() { sleep 1; cat "$TEST_TMP/udp" 2>/dev/null | grep -c .; }
wait_listen "${RS[1]}" tcp 80; wait_listen "${RS[1]}" udp 53
wait_listen "$LB" tcp 443; wait_listen "$LB" udp 5353
adm_ok "$LB" -A -t $VIP:80 -s rr
adm_ok "$LB" -a -t $VIP:80 -r ${RIP[1]}:80 -m
adm_ok "$LB" -A -t "[$VIP6]:80" -s rr
adm_ok "$LB" -a -t "[$VIP6]:80" -r "[$RIP6]:80" -m

# ask PROTO ADDR PORT: one client connection or datagram; its answer.
ask() { lb_names "$CL" "$1" "$2" "$3" 1 40000; }
# expect WHAT PROTO ADDR PORT WANT
expect() {
  local got; got=$(ask "$2" "$3" "$4")
  log "$1: $2 $3:$4 -> $got"
  assert_eq "$got" "$5" "$1: $2 $3:$4"
}

# --- guard off: the leak, on both engines ----------------------------------
for a in $VIP $VIP6; do
  expect "guard off" tcp $a 80 rs1
  expect "guard off (the leak)" tcp $a 443 director
done
expect "guard off (the leak)" udp $VIP 5353 ERR:timeout
assert_eq "$(udp_seen)" 1 "guard off (the leak): datagrams to VIP:5353 the director's listener received"
[ "$ADM" = rvsadm ] || pass "IPVS: VIP:443 and VIP:5353 reach the director's own listeners (no guard)"

# --- drop --------------------------------------------------------------------
guarded() { adm "$LB" -L -n --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["vip_guarded"])'; }
assert_eq "$(guarded)" 0 "vip_guarded before the guard is on"
adm_ok "$LB" --set-option vip_guard=drop
assert_eq "$(adm "$LB" -L --options | awk '$1 == "vip_guard" {print $2, $3}')" "1 (drop)" "-L --options vip_guard"
for a in $VIP $VIP6; do
  expect "vip_guard=drop" tcp $a 443 ERR:timeout
  expect "vip_guard=drop" tcp $a 80 rs1
done
expect "vip_guard=drop" udp $VIP 5353 ERR:timeout
assert_eq "$(udp_seen)" 1 "vip_guard=drop: datagrams the director's listener received"
n=$(guarded); log "vip_guarded after three guarded flows: $n"
[ "$n" -ge 3 ] || fail "vip_guarded: expected at least 3 (one SYN per TCP attempt, the datagram), got $n"
# Not a VIP: the director's own addresses are untouched.
expect "vip_guard=drop, own address" tcp 10.0.0.1 443 director
expect "vip_guard=drop, own address" tcp 2001:db8::1 443 director
expect "vip_guard=drop, own address" udp 10.0.0.1 5353 ERR:timeout
assert_eq "$(udp_seen)" 2 "vip_guard=drop: datagrams the director's listener received, its own address included"
# ICMP echo to the VIP is untouched.
ip netns exec "$CL" ping -c 1 -W 3 $VIP >/dev/null || fail "vip_guard=drop: ping to the VIP got no answer"
# Connections the director opens from the VIP get their replies: TCP by
# its flags; UDP when conntrack says it is a reply (an nft rule makes
# conntrack track the director's traffic).
from_vip() {
  ip netns exec "$LB" timeout 10 python3 -c '
import socket, sys
proto, src, dst, port = sys.argv[1:5]
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM if proto == "tcp" else socket.SOCK_DGRAM)
s.settimeout(3)
s.bind((src, 0))
try:
    s.connect((dst, int(port)))
    if proto == "udp":
        s.send(b"who\n")
    print(s.recv(64).decode().strip())
except OSError as e:
    print("ERR:" + type(e).__name__)
' "$@"
}
assert_eq "$(from_vip tcp $VIP ${RIP[1]} 80)" rs1 "vip_guard=drop: the director's own TCP connection from the VIP"
ip netns exec "$LB" nft -f - <<NFT || fail "nft setup"
table inet vg {
  chain in {
    type filter hook input priority 0; policy accept;
    ct state established counter
  }
}
NFT
assert_eq "$(from_vip udp $VIP ${RIP[1]} 53)" rs1-dns "vip_guard=drop: the director's own UDP flow from the VIP (conntrack on)"

# --- reject --------------------------------------------------------------------
adm_ok "$LB" --set-option vip_guard=reject
for a in $VIP $VIP6; do
  expect "vip_guard=reject" tcp $a 443 ERR:ConnectionRefusedError
  expect "vip_guard=reject" tcp $a 80 rs1
done
expect "vip_guard=reject" udp $VIP 5353 ERR:ConnectionRefusedError
assert_eq "$(udp_seen)" 2 "vip_guard=reject: datagrams the director's listener received"

# --- off again -----------------------------------------------------------------
adm_ok "$LB" --set-option vip_guard=off
expect "vip_guard=off again" tcp $VIP 443 director
# A deleted service's address is no VIP any more.
adm_ok "$LB" --set-option vip_guard=drop
adm_ok "$LB" -D -t $VIP:80
expect "vip_guard=drop, VIP's only service deleted" tcp $VIP 443 director
pass "vip_guard: drop and reject keep VIP:443/5353 from the director's listeners; VIP:80, own addresses, ping and the director's own flows untouched"
