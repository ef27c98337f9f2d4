#!/bin/bash
# The director is a router: a request it forwards to a real server leaves
# with its TTL (IPv6: hop limit) one lower, and one that arrives with TTL 1
# is not forwarded but answered with ICMP "time exceeded" (as ip_forward
# and IPVS do). Without this, two directors that both hold a service (an
# active/backup pair during a split) bounce a packet between them forever.
#
# The real servers answer each UDP datagram with the TTL / hop limit they
# received it with (IP_RECVTTL / IPV6_RECVHOPLIMIT); the client sends with
# a TTL of its choosing (IP_TTL / IPV6_UNICAST_HOPS) and reads ICMP errors
# from its error queue (IP_RECVERR / IPV6_RECVERR). NAT over IPv4 and IPv6,
# DR over IPv4, UDP and (TTL 1 only) TCP.
. "$(dirname "$0")/../lib.sh"

adm_init rr
mk_test_tmp

# serve_ttl NS PORT [ADDR]: a dual-stack UDP server answering "ttl=N" (N as
# received), bound to ADDR (IPv6 form; default all): a DR real server binds
# the VIP so its answers come from it.
serve_ttl() {
  ip netns exec "$1" python3 -c '
import socket, struct, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
# IP_RECVTTL (12) and IPV6_RECVHOPLIMIT (51): Python does not name them all.
s.setsockopt(socket.IPPROTO_IP, 12, 1)
s.setsockopt(socket.IPPROTO_IPV6, 51, 1)
s.bind((sys.argv[2], int(sys.argv[1])))
while True:
    _, anc, _, peer = s.recvmsg(2048, 256)
    ttl = "?"
    for level, kind, data in anc:
        # IP_TTL (2), IPV6_HOPLIMIT (52)
        if (level, kind) in ((socket.IPPROTO_IP, 2), (socket.IPPROTO_IPV6, 52)):
            ttl = str(struct.unpack("i", data[:4])[0])
    s.sendto(("ttl=" + ttl + "\n").encode(), peer)
' "$2" "${3:-::}" </dev/null >/dev/null 2>&1 &
  bg_track $!
}

# probe NS udp|tcp ADDR PORT TTL: sends one datagram (or a SYN) with TTL;
# prints the answer ("ttl=N"), "icmp:TYPE:CODE:FROM" for an ICMP error in
# the error queue, or "none".
probe() {
  timeout 20 ip netns exec "$1" python3 -c '
import select, socket, struct, sys, time
proto, addr, port, ttl = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
v6 = ":" in addr
fam = socket.AF_INET6 if v6 else socket.AF_INET
s = socket.socket(fam, socket.SOCK_DGRAM if proto == "udp" else socket.SOCK_STREAM)
if v6:
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_UNICAST_HOPS, ttl)
    s.setsockopt(socket.IPPROTO_IPV6, 25, 1)  # IPV6_RECVERR
else:
    s.setsockopt(socket.IPPROTO_IP, socket.IP_TTL, ttl)
    s.setsockopt(socket.IPPROTO_IP, 11, 1)  # IP_RECVERR
s.setblocking(False)
if proto == "udp":
    s.connect((addr, port))
    s.send(b"ttl?\n")
else:
    try:
        s.connect((addr, port))
    except BlockingIOError:
        pass
deadline = time.time() + 4
while time.time() < deadline:
    r, w, x = select.select([s], [], [s], 0.2)
    try:
        if proto == "udp":
            print(s.recv(256).decode().strip()); sys.exit(0)
        else:
            s.send(b"x"); print("connected"); sys.exit(0)
    except BlockingIOError:
        pass
    except OSError:
        pass
    try:
        _, anc, _, _ = s.recvmsg(512, 512, socket.MSG_ERRQUEUE)
    except (BlockingIOError, OSError):
        continue
    for level, kind, data in anc:
        # struct sock_extended_err: errno u32, origin u8, type u8, code u8,
        # pad u8, info u32, data u32, then the offender sockaddr.
        _, origin, typ, code = struct.unpack_from("IBBB", data)
        off = data[16:]
        if v6:
            frm = socket.inet_ntop(socket.AF_INET6, off[8:24])
        else:
            frm = socket.inet_ntop(socket.AF_INET, off[4:8])
        print("icmp:%d:%d:%s" % (typ, code, frm)); sys.exit(0)
print("none")
' "$2" "$3" "$4" "$5" 2>&1
}

# expect NS PROTO ADDR PORT TTL WANT LABEL
expect() {
  local got
  got=$(probe "$1" "$2" "$3" "$4" "$5")
  log "$7: sent with ttl $5 -> $got"
  assert_eq "$got" "$6" "$7"
}

# --- NAT, IPv4 and IPv6 ------------------------------------------------------
topo_nat nat 1
rs=${RS[1]}
topo_nat_ipv6
serve_ttl "$rs" 5353
serve_name "$rs" tcp 8080 rs1
wait_listen "$rs" udp 5353
adm_ok "$LB" -A -u $VIP:53 -s rr
adm_ok "$LB" -a -u $VIP:53 -r ${RIP[1]}:5353 -m
adm_ok "$LB" -A -t $VIP:80 -s rr
adm_ok "$LB" -a -t $VIP:80 -r ${RIP[1]}:8080 -m
adm_ok "$LB" -A -u "[2001:db8:100::1]:53" -s rr
adm_ok "$LB" -a -u "[2001:db8:100::1]:53" -r "[2001:db8:1::1]:5353" -m
# The bridge's IPv6 address leaves "tentative" once its port is up.
sleep 1

expect "$CL" udp $VIP 53 64 "ttl=63" "NAT IPv4: the real server sees the TTL one lower"
expect "$CL" udp $VIP 53 2 "ttl=1" "NAT IPv4: TTL 2 still arrives, as 1"
expect "$CL" udp $VIP 53 1 "icmp:11:0:$VIP" "NAT IPv4: TTL 1 is answered by time exceeded from the VIP"
expect "$CL" tcp $VIP 80 1 "icmp:11:0:$VIP" "NAT IPv4: a SYN with TTL 1 is answered by time exceeded"
expect "$CL" udp 2001:db8:100::1 53 64 "ttl=63" "NAT IPv6: the real server sees the hop limit one lower"
expect "$CL" udp 2001:db8:100::1 53 1 "icmp:3:0:2001:db8:100::1" "NAT IPv6: hop limit 1 is answered by time exceeded"
expect "$CL" udp $VIP 53 64 "ttl=63" "NAT IPv4 again: service still works"
kill_ns_procs

# --- DR, IPv4 ------------------------------------------------------------------
topo_direct dr
direct_rs
serve_ttl "${RS[1]}" 53 "::ffff:$VIP"
wait_listen "${RS[1]}" udp 53
adm_ok "$LB" -A -u $VIP:53 -s rr
adm_ok "$LB" -a -u $VIP:53 -r ${RIP[1]}:53 -g
expect "$CL" udp $VIP 53 64 "ttl=63" "DR: the real server sees the TTL one lower"
expect "$CL" udp $VIP 53 1 "icmp:11:0:$VIP" "DR: TTL 1 is answered by time exceeded"

pass "forwarded requests lose one TTL / hop; TTL 1 gets time exceeded"
