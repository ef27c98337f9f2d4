#!/bin/bash
# Persistence (-p TIMEOUT, -M NETMASK): a client's new connections stick to
# the server its first one got; clients in one -M network share it; a
# quiesced (weight 0) server keeps its persistent clients, a deleted one
# loses them to another server.
. "$(dirname "$0")/../lib.sh"
adm_init rr
topo_nat per 2
ip -n "$CL" addr add 10.0.0.3/24 dev c0
for i in 1 2; do serve_name "${RS[$i]}" tcp 80 rs$i; done

# names FROM N: N connections from source address FROM, one answer a line.
names() {
  timeout 60 ip netns exec "$CL" python3 -c '
import socket, sys
src, n = sys.argv[1], int(sys.argv[2])
for _ in range(n):
    s = socket.create_connection(("'$VIP'", 80), timeout=3, source_address=(src, 0))
    data = b""
    while True:
        d = s.recv(64)
        if not d: break
        data += d
    s.close()
    print(data.decode().strip())
' "$1" "$2" | count_names
}

adm_ok "$LB" -A -t $VIP:80 -s rr -p 60
for i in 1 2; do adm_ok "$LB" -a -t $VIP:80 -r ${RIP[$i]}:80 -m -w 1; done
a=$(names 10.0.0.2 6); log "client 10.0.0.2, 6 connections -> $a"
case "$a" in rs[12]:6) ;; *) fail "persistence broken for 10.0.0.2: $a" ;; esac
b=$(names 10.0.0.3 6); log "client 10.0.0.3, 6 connections -> $b"
case "$b" in rs[12]:6) ;; *) fail "persistence broken for 10.0.0.3: $b" ;; esac
[ "${a%%:*}" != "${b%%:*}" ] || fail "rr should have given the two clients different servers ($a, $b)"
conns=$(adm "$LB" -L -n -c)
persist=$(echo "$conns" | awk '$3 == "ASSURED" && $4 ~ /:0$/' | wc -l)
assert_eq "$persist" 2 "persistence templates listed by -Lc"

# Quiesce the first client's server: it keeps that client.
first=${a%%:*} idx=${first#rs}
adm_ok "$LB" -e -t $VIP:80 -r ${RIP[$idx]}:80 -m -w 0
c=$(names 10.0.0.2 3); log "after weight 0 on $first: 10.0.0.2 -> $c"
assert_eq "$c" "$first:3" "quiesced server keeps its persistent client"
# Delete it: the client moves.
adm_ok "$LB" -d -t $VIP:80 -r ${RIP[$idx]}:80
c=$(names 10.0.0.2 3); log "after deleting $first: 10.0.0.2 -> $c"
case "$c" in "$first":*|*ERR*) fail "client still sent to deleted $first: $c" ;; esac

# -M 255.255.255.0: both clients share one template.
adm_ok "$LB" -D -t $VIP:80
adm_ok "$LB" -A -t $VIP:80 -s rr -p 60 -M 255.255.255.0
for i in 1 2; do adm_ok "$LB" -a -t $VIP:80 -r ${RIP[$i]}:80 -m -w 1; done
a=$(names 10.0.0.2 3); b=$(names 10.0.0.3 3)
log "-M /24: 10.0.0.2 -> $a, 10.0.0.3 -> $b"
[ "${a%%:*}" = "${b%%:*}" ] || fail "clients of one /24 went to different servers ($a, $b)"
pass "persistence sticks, honours -M, keeps quiesced and leaves deleted servers"
