#!/bin/bash
# A service with 320 real servers (more than fit in a page of scheduler
# views; Kubernetes services have thousands of endpoints): rr gives each
# server exactly its share, and mh sends each client to the server the
# Maglev computation (tests/py/maglev.py) expects. The servers are 320
# addresses of one real-server namespace, whose one listener answers with
# the address the connection reached.
. "$(dirname "$0")/../lib.sh"
adm_init rr mh
mk_test_tmp
N=${MANY_SERVERS:-320}
topo_nat many 1
RS_NS=${RS[1]}
# 10.0.4.1 ... : /32 addresses on the real server, routed there by the
# director.
addrs=()
for i in $(seq 0 $((N - 1))); do addrs+=("10.0.$((4 + i / 250)).$((1 + i % 250))"); done
for a in "${addrs[@]}"; do echo "addr add $a/32 dev r0"; done | nsip "$RS_NS"
echo "route add 10.0.4.0/22 via ${RIP[1]}" | nsip "$LB"
for i in $(seq 10 49); do echo "addr add 10.0.0.$i/24 dev c0"; done | nsip "$CL"
ip netns exec "$RS_NS" python3 -c '
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 80))
s.listen(128)
while True:
    c, _ = s.accept()
    try:
        c.sendall((c.getsockname()[0] + "\n").encode())
    except OSError:
        pass
    c.close()
' </dev/null >/dev/null 2>&1 &
bg_track $!
wait_listen "$RS_NS" tcp 80

svc="-t $VIP:80"
adm_ok "$LB" -A $svc -s rr
for a in "${addrs[@]}"; do echo "-a $svc -r $a:80 -m -w 1"; done >"$TEST_TMP/servers"
adm_ok "$LB" -R <"$TEST_TMP/servers"
listed=$(adm "$LB" -L -n $svc | grep -c -- '->.*Masq')
assert_eq "$listed" "$N" "real servers listed"

# rr: two rounds, each server exactly twice.
got=$(lb_names "$CL" tcp $VIP 80 $((2 * N)) | sort | uniq -c | awk '{print $1}' | sort | uniq -c | awk '{printf "%s%s x%s", sep, $1, $2; sep=", "}')
log "rr, $((2 * N)) connections over $N servers: (servers x connections) $got"
assert_eq "$got" "$N x2" "rr over $N servers"

# mh: each of 40 clients reaches the server the Maglev table gives it.
adm_ok "$LB" -E $svc -s mh
ip netns exec "$CL" env PYTHONPATH="$RVS_ROOT/tests/py" python3 - "$VIP" "${addrs[@]}" <<'PY' >&2 || fail "mh over $N servers misrouted clients"
import socket, sys, maglev
vip, addrs = sys.argv[1], sys.argv[2:]
# Newest first, as the service lists them.
servers = [(a, 80, 1) for a in reversed(addrs)]
t = maglev.table(servers)
bad = 0
for i in range(10, 50):
    c = "10.0.0.%d" % i
    want = servers[maglev.server_of(t, c)][0]
    s = socket.create_connection((vip, 80), timeout=10, source_address=(c, 0))
    got = s.recv(64).decode().strip()
    s.close()
    if got != want:
        bad += 1
        print("# %s -> %s, expected %s" % (c, got, want))
print("# mh: 40 clients, %d misrouted" % bad)
sys.exit(1 if bad else 0)
PY
pass "rr and mh schedule exactly over $N real servers"
