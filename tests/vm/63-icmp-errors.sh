#!/bin/bash
# ICMP errors about NAT connections reach the other end in terms it knows:
#  1. port unreachable from a real server with a closed UDP port: the
#     client's connected socket gets "connection refused";
#  2. fragmentation needed from a router between director and real server:
#     the client learns the path MTU toward the VIP;
#  3. port unreachable from the client about a reply: the real server's
#     connected socket gets "connection refused".
# The same script passes against the kernel's IPVS (RVS_ADM=ipvsadm).
#
#   client "cl" c0 10.0.0.2 -- d0 10.0.0.1 director "lb" (VIP 10.0.100.1)
#                              d1 10.0.2.1 -- e0 10.0.2.2 router "rt"
#                              e1 10.0.1.254 (MTU 1000) -- r0 10.0.1.1 "rs1"
. "$(dirname "$0")/../lib.sh"
adm_init rr
newns CL icm-cl; newns LB icm-lb; newns RT icm-rt; newns RS1 icm-rs1
VIP=10.0.100.1 CIP=10.0.0.2 RIP=10.0.1.1
nsip "$LB" <<IP
link add d0 type veth peer name c0 netns $CL
link set d0 up
addr add 10.0.0.1/24 dev d0
addr add $VIP/32 dev lo
link add d1 type veth peer name e0 netns $RT
link set d1 up
addr add 10.0.2.1/24 dev d1
route add 10.0.1.0/24 via 10.0.2.2
IP
nsip "$CL" <<IP
link set c0 up
addr add $CIP/24 dev c0
route add default via 10.0.0.1
IP
nsip "$RT" <<IP
link set e0 up
addr add 10.0.2.2/24 dev e0
link add e1 type veth peer name r0 netns $RS1
link set e1 mtu 1000
link set e1 up
addr add 10.0.1.254/24 dev e1
route add default via 10.0.2.1
IP
nsip "$RS1" <<IP
link set r0 up
addr add $RIP/24 dev r0
route add default via 10.0.1.254
IP
nsysctl "$LB" net.ipv4.ip_forward=1
nsysctl "$RT" net.ipv4.ip_forward=1

# icmp_stats: the ICMP counters of every namespace (logged on failure).
icmp_stats() {
  local ns
  for ns in "$CL" "$LB" "$RT" "$RS1"; do
    log "${ns#$NS_PREFIX-}: $(ip netns exec "$ns" awk '/^Icmp:/ {print}' /proc/net/snmp | tail -1)"
  done
}
at_exit '[ "$rc" = 0 ] || icmp_stats'

adm_ok "$LB" -A -u $VIP:5300 -s rr
adm_ok "$LB" -a -u $VIP:5300 -r $RIP:5300 -m
adm_ok "$LB" -A -u $VIP:5400 -s rr
adm_ok "$LB" -a -u $VIP:5400 -r $RIP:5400 -m
adm_ok "$LB" -A -u $VIP:5500 -s rr
adm_ok "$LB" -a -u $VIP:5500 -r $RIP:5501 -m

# Python's first start in a fresh guest can take most of a minute under
# TCG: start it once before anything is timed.
ip netns exec "$CL" python3 -c 'import socket' || fail "python3 does not run"

# 1. Nothing listens on the real server's port 5300.
got=$(timeout 120 ip netns exec "$CL" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
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

# 2. A 1400-byte datagram with DF: the router cannot pass it to the real
# server (MTU 1000) and reports to the client, through the director.
serve_name "$RS1" udp 5400 rs1
got=$(timeout 120 ip netns exec "$CL" python3 -c '
import socket, sys, time
IP_MTU_DISCOVER, IP_PMTUDISC_DO, IP_MTU = 10, 2, 14
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)
s.settimeout(3)
s.connect((sys.argv[1], 5400))
s.send(b"x" * 1400)
time.sleep(2)
print(s.getsockopt(socket.IPPROTO_IP, IP_MTU))
' $VIP 2>&1)
log "path MTU the client sees toward the VIP -> $got"
route=$(ip -n "$CL" route get $VIP 2>&1)
log "client: $(echo $route)"
assert_eq "$got" "1000" "the client learns the path MTU from the router's frag-needed"
# Small datagrams still get through.
got=$(lb_names "$CL" udp $VIP 5400 1 | count_names)
assert_eq "$got" "rs1:1" "small datagrams after the PMTU update"

# 3. The real server answers from a socket connected to the client, after
# the client has closed its own: the client's port unreachable (about the
# reply from the VIP) must reach the real server's socket.
mk_test_tmp
ip netns exec "$RS1" timeout 30 python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 5501))
_, peer = s.recvfrom(64)
s.connect(peer)
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
' "$TEST_TMP/rs-result" </dev/null >/dev/null 2>&1 &
rs_pid=$!
bg_track $rs_pid
wait_listen "$RS1" udp 5501
ip netns exec "$CL" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 41000))
s.sendto(b"hello\n", (sys.argv[1], 5500))
s.close()
' $VIP
wait $rs_pid 2>/dev/null
got=$(cat "$TEST_TMP/rs-result" 2>/dev/null)
log "real server replying to a client that went away -> $got"
assert_eq "$got" "refused" "the real server's socket sees the client's port unreachable"
pass "ICMP errors are translated both ways for NAT connections"
