#!/bin/bash
# The conntrack setting (IPVS's net.ipv4.vs.conntrack): with 1, netfilter's
# conntrack follows NAT connections, so an nftables masquerade on the
# director's real-server side applies to them ("full NAT": real servers
# need no route back to clients). Observed with real traffic:
#  - the real servers have no route to the client network;
#  - conntrack=0 (default): forwarded packets are untracked, the
#    masquerade never applies, the servers' answers cannot leave: requests
#    time out and the NAT chain counts nothing;
#  - conntrack=1: TCP and UDP requests are answered, balanced 2/2, each
#    real server sees the director's address as its peer, the NAT chain
#    counts one packet per connection, and conntrack's reply tuple names
#    the real server (an nft `ct reply ip saddr` match counts them);
#  - DR: what the director forwards is untracked with 0, tracked with 1.
. "$(dirname "$0")/../lib.sh"
adm_init rr
topo_nat ct 2
LBADDR=10.0.1.254

# serve_peer NS PROTO PORT NAME: answers each connection or datagram with
# "NAME@PEER", PEER being the address the request came from.
serve_peer() {
  ip netns exec "$1" python3 -c '
import socket, sys
proto, port, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if proto == "tcp":
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port)); s.listen(64)
    while True:
        c, peer = s.accept()
        try:
            c.sendall(("%s@%s\n" % (name, peer[0])).encode())
        except OSError:
            pass
        c.close()
else:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", port))
    while True:
        _, peer = s.recvfrom(2048)
        try:
            s.sendto(("%s@%s\n" % (name, peer[0])).encode(), peer)
        except OSError:
            pass  # no route back to the client (conntrack=0)
' "$2" "$3" "$4" </dev/null >/dev/null 2>&1 &
  bg_track $!
}
for i in 1 2; do
  ip -n "${RS[$i]}" route del default || fail "removing rs$i's default route"
  serve_peer "${RS[$i]}" tcp 80 rs$i
  serve_peer "${RS[$i]}" udp 53 rs$i
done
for i in 1 2; do wait_listen "${RS[$i]}" tcp 80; wait_listen "${RS[$i]}" udp 53; done

# Masquerade what leaves toward the real servers; count, after NAT, the
# connections whose conntrack entry expects replies from a real server.
ip netns exec "$LB" nft -f - <<NFT || fail "nft setup"
table ip rvstest {
  counter masqueraded {}
  counter seen {}
  chain post {
    type nat hook postrouting priority srcnat; policy accept;
    oifname "br0" counter name masqueraded masquerade
  }
  chain seen {
    type filter hook postrouting priority 300; policy accept;
    ct original ip daddr $VIP ct reply ip saddr 10.0.1.0/24 counter name seen
  }
}
NFT
# nat_count NAME: packets of the counter "masqueraded" or "seen".
nat_count() { nft_counter "$LB" ip rvstest "$1"; }

adm_ok "$LB" -A -t $VIP:80 -s rr
adm_ok "$LB" -A -u $VIP:53 -s rr
for i in 1 2; do
  adm_ok "$LB" -a -t $VIP:80 -r ${RIP[$i]}:80 -m
  adm_ok "$LB" -a -u $VIP:53 -r ${RIP[$i]}:53 -m
done
if [ "$ADM" = rvsadm ]; then
  got=$(adm "$LB" -L --options --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["options"]["conntrack"])')
  assert_eq "$got" 0 "conntrack by default"
fi

# --- conntrack=0: untracked, the masquerade never applies ---------------
set_opt conntrack 0
got=$(lb_names "$CL" tcp $VIP 80 2 | count_names)
log "conntrack=0: 2 tcp requests -> $got"
assert_eq "$got" "ERR:timeout:2" "conntrack=0, no route back: requests time out"
got=$(lb_names "$CL" udp $VIP 53 2 31000 | count_names)
log "conntrack=0: 2 udp requests -> $got"
assert_eq "$got" "ERR:timeout:2" "conntrack=0, udp"
assert_eq "$(nat_count masqueraded)" 0 "masquerade counter with conntrack=0"
assert_eq "$(nat_count seen)" 0 "entries expecting a real server with conntrack=0"

# --- conntrack=1: tracked, masqueraded, answered -----------------------
set_opt conntrack 1
expect_balance "$CL" tcp $VIP 80 4 "rs1@$LBADDR:2 rs2@$LBADDR:2" "conntrack=1, tcp"
expect_balance "$CL" udp $VIP 53 4 "rs1@$LBADDR:2 rs2@$LBADDR:2" "conntrack=1, udp" 32000
# One NAT-chain packet per connection: the chain sees a connection's first
# packet only.
assert_eq "$(nat_count masqueraded)" 8 "masqueraded connections"
seen=$(nat_count seen)
log "packets of connections whose conntrack reply source is a real server: $seen"
[ "${seen:-0}" -ge 8 ] || fail "conntrack's reply tuples do not name the real servers ($seen packets)"

# Back to 0: new connections are untracked again.
set_opt conntrack 0
got=$(lb_names "$CL" tcp $VIP 80 1 | count_names)
assert_eq "$got" "ERR:timeout:1" "conntrack back to 0"

# --- DR: the same setting for packets forwarded unchanged ----------------
# The director's postrouting counts, by conntrack state, what it sends to
# the real server (daddr still the VIP): untracked with conntrack=0,
# tracked (new: the answers go straight to the client) with conntrack=1.
topo_direct ctd
direct_rs
serve_name "${RS[1]}" tcp 80 drs
ip netns exec "$LB" nft -f - <<NFT || fail "nft setup (DR)"
table ip ctdr {
  chain out {
    type filter hook postrouting priority 300; policy accept;
    oifname "d1" ip daddr $VIP tcp dport 80 ct state untracked counter
    oifname "d1" ip daddr $VIP tcp dport 80 ct state new,established counter
  }
}
NFT
# dr_counts: "UNTRACKED TRACKED" packets so far.
dr_counts() {
  ip netns exec "$LB" nft list chain ip ctdr out |
    awk '/counter packets/ {for (i = 1; i < NF; i++) if ($i == "packets") c[/untracked/ ? 0 : 1] = $(i + 1)} END {print c[0] + 0, c[1] + 0}'
}
adm_ok "$LB" -A -t $VIP:80 -s rr
adm_ok "$LB" -a -t $VIP:80 -r ${RIP[1]}:80 -g
set_opt conntrack 0
expect_balance "$CL" tcp $VIP 80 2 "drs:2" "DR, conntrack=0"
read -r u0 t0 < <(dr_counts)
log "DR, conntrack=0: $u0 untracked, $t0 tracked packets to the real server"
[ "$u0" -gt 0 ] && [ "$t0" = 0 ] || fail "DR with conntrack=0: $u0 untracked, $t0 tracked (want some, 0)"
set_opt conntrack 1
expect_balance "$CL" tcp $VIP 80 2 "drs:2" "DR, conntrack=1"
read -r u1 t1 < <(dr_counts)
log "DR, conntrack=1: $((u1 - u0)) untracked, $t1 tracked packets to the real server"
[ "$u1" = "$u0" ] && [ "$t1" -gt 0 ] || fail "DR with conntrack=1: $((u1 - u0)) more untracked, $t1 tracked (want 0, some)"
pass "conntrack=0 leaves forwarded packets untracked (NAT, DR); conntrack=1 lets nftables masquerade NAT connections and tracks DR ones"
