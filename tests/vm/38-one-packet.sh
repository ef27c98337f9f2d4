#!/bin/bash
# One-packet scheduling (-o): every datagram of one client socket is
# scheduled on its own (rr alternates the servers) and no connection entry
# stays (-L -c is empty); without -o the socket's datagrams stick to one
# server through one entry. NAT replies of -o datagrams are not translated
# back (there is no entry to do it with, as in IPVS), so the client reads
# them from an unconnected socket.
. "$(dirname "$0")/../lib.sh"
adm_init rr
topo_nat ops 2
for i in 1 2; do serve_name_bg "${RS[$i]}" udp 53 rs$i; done
for i in 1 2; do wait_listen "${RS[$i]}" udp 53; done

# datagrams N: N datagrams from one socket (source port 25000) to VIP:53;
# prints the answering servers' names, one a line.
datagrams() {
  timeout 60 ip netns exec "$CL" python3 -c '
import socket, sys
vip, n = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 25000))
s.settimeout(3)
for i in range(n):
    s.sendto(b"who\n", (vip, 53))
    try:
        data, peer = s.recvfrom(256)
        print(data.decode().strip())
    except socket.timeout:
        print("ERR:timeout")
    sys.stdout.flush()
' "$VIP" "$1"
}

adm_ok "$LB" -A -u $VIP:53 -s rr -o
for i in 1 2; do adm_ok "$LB" -a -u $VIP:53 -r ${RIP[$i]}:53 -m -w 1; done
line=$(adm "$LB" -L -n | grep "^UDP")
assert_eq "$line" "UDP  $VIP:53 rr ops" "listing of a one-packet service"
got=$(datagrams 10 | count_names); log "-o: 10 datagrams from one socket -> $got"
assert_eq "$got" "rs1:5 rs2:5" "one-packet scheduling spreads one socket's datagrams"
n=$(adm "$LB" -L -n -c | grep -c "^UDP")
assert_eq "$n" 0 "connection entries left by one-packet scheduling"
udp_conns() { adm "$LB" -L -n --stats --exact | awk '$1 == "UDP" {print $3}'; }
conns=$(settled 10 udp_conns)
assert_eq "$conns" 10 "connections counted for 10 one-packet datagrams"

# Without -o the same socket sticks to one server through one entry.
adm_ok "$LB" -E -u $VIP:53 -s rr
got=$(datagrams 6 | count_names); log "no -o: 6 datagrams from one socket -> $got"
case "$got" in rs[12]:6) ;; *) fail "without -o one socket was spread: $got" ;; esac
n=$(adm "$LB" -L -n -c | grep -c "^UDP")
assert_eq "$n" 1 "connection entries without -o"

if [ "$ADM" = rvsadm ]; then
  out=$(adm "$LB" -A -t $VIP:80 -s rr -o 2>&1) && fail "-o on a TCP service accepted"
  case "$out" in *"only for UDP"*) ;; *) fail "unexpected message: $out" ;; esac
fi
pass "-o schedules every datagram and keeps no entry; without -o a flow sticks"
