#!/bin/bash
# ICMPv6 errors about IPv6 NAT connections reach the other end in terms it
# knows (the IPv6 twin of 63-icmp-errors.sh):
#  1. port unreachable from a real server with a closed UDP port: the
#     client's connected socket gets "connection refused";
#  2. packet too big from a router between director and real server (its
#     link to the real server has MTU 1280): a TCP upload completes and the
#     client's route toward the VIP carries MTU 1280;
#  3. port unreachable from the client about a reply: the real server's
#     connected socket gets "connection refused";
#  4. packet too big from the director itself (its route to a second real
#     server address has MTU 1280): it quotes the client's packet to the
#     VIP, so the client learns the path MTU toward that VIP;
#  5. port unreachable from the client about a direct-routing reply (from a
#     third VIP, held by a DR real server on its own link): the director
#     passes it to the real server as next hop, whose socket gets
#     "connection refused";
#  6. the same about a tunnelled reply (rs2 is also a TUN real server of
#     VIP3, port 5800): the director sends the error to it in ip6ip6, it
#     decapsulates on ip6tnl0, and its socket gets "connection refused".
# The same script passes against the kernel's IPVS (RVS_ADM=ipvsadm).
#
#   client "cl" c0 2001:db8::2 -- d0 2001:db8::1 director "lb"
#                                 (VIPs 2001:db8:100::1, 2001:db8:100::2)
#                                 d1 2001:db8:2::1 -- e0 2001:db8:2::2 router "rt"
#                                 e1 2001:db8:1::254 (MTU 1280) -- r0 "rs1"
#                                 2001:db8:1::1 and 2001:db8:1::11
#                                 d2 2001:db8:3::1 -- r0 2001:db8:3::2 "rs2"
#                                 (DR, VIP 2001:db8:100::3 on lo)
#   rs2 r1 2001:db8:4::2 -- c1 2001:db8:4::1 cl (rs2's replies to the client)
. "$(dirname "$0")/../lib.sh"
adm_init rr
mk_test_tmp
newns CL i6-cl; newns LB i6-lb; newns RT i6-rt; newns RS1 i6-rs1; newns RS2 i6-rs2
VIP=2001:db8:100::1 VIP2=2001:db8:100::2 VIP3=2001:db8:100::3 CIP=2001:db8::2
RIP=2001:db8:1::1 RIP2=2001:db8:1::11 DRIP=2001:db8:3::2
nsip "$LB" <<IP
link add d0 type veth peer name c0 netns $CL
link set d0 up
addr add 2001:db8::1/64 dev d0 nodad
addr add $VIP/128 dev lo
addr add $VIP2/128 dev lo
link add d1 type veth peer name e0 netns $RT
link set d1 up
addr add 2001:db8:2::1/64 dev d1 nodad
route add 2001:db8:1::/64 via 2001:db8:2::2
route add $RIP2/128 via 2001:db8:2::2 mtu 1280
addr add $VIP3/128 dev lo
link add d2 type veth peer name r0 netns $RS2
link set d2 up
addr add 2001:db8:3::1/64 dev d2 nodad
IP
nsip "$CL" <<IP
link set c0 up
addr add $CIP/64 dev c0 nodad
route add default via 2001:db8::1
IP
nsip "$RT" <<IP
link set e0 up
addr add 2001:db8:2::2/64 dev e0 nodad
link add e1 type veth peer name r0 netns $RS1
link set e1 mtu 1280
link set e1 up
addr add 2001:db8:1::254/64 dev e1 nodad
route add default via 2001:db8:2::1
IP
nsip "$RS1" <<IP
link set r0 up
addr add $RIP/64 dev r0 nodad
addr add $RIP2/64 dev r0 nodad
route add default via 2001:db8:1::254
IP
# The DR real server replies straight to the client, over a link of their
# own; the client's packets to VIP3 go through the director.
nsip "$RS2" <<IP
link set lo up
addr add $VIP3/128 dev lo nodad
link set r0 up
addr add $DRIP/64 dev r0 nodad
route add default via 2001:db8:3::1
link add r1 type veth peer name c1 netns $CL
link set r1 up
addr add 2001:db8:4::2/64 dev r1 nodad
route add 2001:db8::/64 via 2001:db8:4::1
IP
nsip "$CL" <<IP
link set c1 up
addr add 2001:db8:4::1/64 dev c1 nodad
IP
nsysctl "$LB" net.ipv6.conf.all.forwarding=1
nsysctl "$RT" net.ipv6.conf.all.forwarding=1

# icmp6_stats: the ICMPv6 counters of every namespace (logged on failure).
icmp6_stats() {
  local ns
  for ns in "$CL" "$LB" "$RT" "$RS1" "$RS2"; do
    log "${ns#$NS_PREFIX-}: $(ip netns exec "$ns" awk '$2 != 0 && /^Icmp6(In|Out)(Msgs|Errors|DestUnreachs|PktTooBigs)/ {printf "%s=%s ", $1, $2}' /proc/net/snmp6)"
  done
}
at_exit '[ "$rc" = 0 ] || icmp6_stats'

adm_ok "$LB" -A -u "[$VIP]:5300" -s rr
adm_ok "$LB" -a -u "[$VIP]:5300" -r "[$RIP]:5300" -m
adm_ok "$LB" -A -t "[$VIP]:8000" -s rr
adm_ok "$LB" -a -t "[$VIP]:8000" -r "[$RIP]:8000" -m
adm_ok "$LB" -A -u "[$VIP]:5500" -s rr
adm_ok "$LB" -a -u "[$VIP]:5500" -r "[$RIP]:5501" -m
adm_ok "$LB" -A -u "[$VIP2]:5600" -s rr
adm_ok "$LB" -a -u "[$VIP2]:5600" -r "[$RIP2]:5600" -m
adm_ok "$LB" -A -u "[$VIP3]:5700" -s rr
adm_ok "$LB" -a -u "[$VIP3]:5700" -r "[$DRIP]:5700" -g
adm_ok "$LB" -A -u "[$VIP3]:5800" -s rr
adm_ok "$LB" -a -u "[$VIP3]:5800" -r "[$DRIP]:5800" -i
ip -n "$RS2" link set ip6tnl0 up || fail "no ip6tnl0 (CONFIG_IPV6_TUNNEL?)"

# Python's first start in a fresh guest can take most of a minute under
# TCG: start it once before anything is timed.
ip netns exec "$CL" python3 -c 'import socket' || fail "python3 does not run"

# 1. Nothing listens on the real server's port 5300.
got=$(timeout 120 ip netns exec "$CL" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.settimeout(3)
s.connect((sys.argv[1], 5300))
for i in range(3):
    try:
        s.send(b"who\n")
        s.recv(64)
        print("answered"); break
    except ConnectionRefusedError:
        print("refused"); break
    except socket.timeout:
        pass
else:
    print("timeout")
' $VIP 2>&1)
log "UDP to a closed port behind the VIP -> $got"
assert_eq "$got" "refused" "the client's socket sees the real server's port unreachable"

# 2. Full-size TCP segments (the real server's MSS is 1440) do not fit the
# router's 1280 link: its packet too big, translated, shrinks them; without
# it the upload stalls.
check_transfer "$CL" "$RS1" $VIP 8000 8000 300000 "IPv6 NAT through a 1280 link"
route=$(ip -n "$CL" -6 route get $VIP 2>&1)
log "client: $(echo $route)"
pmtu=$(echo "$route" | grep -o 'mtu [0-9]*' || true)
assert_eq "$pmtu" "mtu 1280" "the client learns the path MTU toward the VIP from the router"

# late_reply NS BIND_ADDR PORT: a real server in NS that answers, from a
# socket bound to BIND_ADDR:PORT and connected to the client, a second
# after the client's datagram; writes what its socket then sees to
# $TEST_TMP/rs-result. Its pid is in RS_PID.
late_reply() {
  rm -f "$TEST_TMP/rs-result"
  ip netns exec "$1" timeout 30 python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.bind((sys.argv[2], int(sys.argv[3])))
_, peer = s.recvfrom(64)
s.connect(peer[:2])
time.sleep(1)
s.settimeout(3)
res = "timeout"
for i in range(3):
    try:
        s.send(b"late reply\n")
        s.recv(64)
        res = "answered"; break
    except ConnectionRefusedError:
        res = "refused"; break
    except socket.timeout:
        pass
open(sys.argv[1], "w").write(res + "\n")
' "$TEST_TMP/rs-result" "$2" "$3" </dev/null >/dev/null 2>&1 &
  RS_PID=$!
  bg_track $RS_PID
  wait_listen "$1" udp "$3"
}

# hello_and_go VIP PORT SRC_PORT: the client sends one datagram and closes.
hello_and_go() {
  ip netns exec "$CL" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.bind(("::", int(sys.argv[3])))
s.sendto(b"hello\n", (sys.argv[1], int(sys.argv[2])))
s.close()
' "$@"
}

# 3. The real server answers from a socket connected to the client, after
# the client has closed its own: the client's port unreachable (about the
# reply from the VIP) must reach the real server's socket.
late_reply "$RS1" :: 5501
hello_and_go $VIP 5500 41000
wait $RS_PID 2>/dev/null
got=$(cat "$TEST_TMP/rs-result" 2>/dev/null)
log "real server replying to a client that went away -> $got"
assert_eq "$got" "refused" "the real server's socket sees the client's port unreachable"

# 4. The director's own route to the second real server address is 1280:
# a 1400-byte datagram gets the director's packet too big, which must quote
# the datagram as the client sent it (to VIP2) for the client to use it.
serve_name "$RS1" udp 5600 rs1
got=$(timeout 120 ip netns exec "$CL" python3 -c '
import socket, sys, time
IPV6_MTU_DISCOVER, IPV6_PMTUDISC_DO, IPV6_MTU = 23, 2, 24
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IPV6, IPV6_MTU_DISCOVER, IPV6_PMTUDISC_DO)
s.connect((sys.argv[1], 5600))
s.send(b"x" * 1400)
time.sleep(2)
print(s.getsockopt(socket.IPPROTO_IPV6, IPV6_MTU))
' $VIP2 2>&1)
log "path MTU the client sees toward VIP2 -> $got"
log "client: $(ip -n "$CL" -6 route get $VIP2 2>&1)"
assert_eq "$got" "1280" "the client learns the path MTU from the director's packet too big"
# Small datagrams still get through.
got=$(lb_names "$CL" udp $VIP2 5600 1 | count_names)
assert_eq "$got" "rs1:1" "small datagrams after the PMTU update"

# 5. Direct routing: the real server replies from VIP3 itself; the client's
# port unreachable goes to VIP3 at the director, which passes it on.
# 6. Tunnel: the same, the error encapsulated (ip6ip6) to the real server.
for m in "DR 5700 41001" "TUN 5800 41002"; do
  read -r how port cport <<<"$m"
  late_reply "$RS2" $VIP3 "$port"
  hello_and_go $VIP3 "$port" "$cport"
  wait $RS_PID 2>/dev/null
  got=$(cat "$TEST_TMP/rs-result" 2>/dev/null)
  log "$how real server replying to a client that went away -> $got"
  assert_eq "$got" "refused" "the $how real server's socket sees the client's port unreachable"
done
pass "ICMPv6 errors are translated both ways for IPv6 NAT connections and passed to DR and TUN"
