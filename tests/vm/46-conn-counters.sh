#!/bin/bash
# ActiveConn / InActConn stay exact under churn: several clients in
# parallel open and end many connections through a NAT service (normal
# closes, resets, closes with unread data) while connections opened
# before stay up. Once only those are left, each server shows exactly its
# share of them as ActiveConn and 0 InActConn; once they are reset and
# every entry is gone, every server shows 0 and 0. (A state change racing
# the collector's removal of the same entry must count it out once.)
. "$(dirname "$0")/../lib.sh"
adm_init rr
mk_test_tmp
CLIENTS=${RVS_COUNTERS_CLIENTS:-6}
PER=${RVS_COUNTERS_PER_CLIENT:-40}
HELD=6
topo_nat cnt 2
# Each real server answers its name and keeps the connection until the
# client ends it.
for i in 1 2; do serve_held "${RS[$i]}" 80 rs$i; done
for i in 1 2; do wait_listen "${RS[$i]}" tcp 80; done
adm_ok "$LB" -A -t $VIP:80 -s rr
for i in 1 2; do adm_ok "$LB" -a -t $VIP:80 -r ${RIP[$i]}:80 -m -w 1; done

# counts: "RIP:ACTIVE:INACTIVE ..." for every real server, from -L -n.
counts() {
  adm "$LB" -L -n | awk '$1 == "->" && $2 ~ /^10\.0\.1\./ {printf "%s%s:%s:%s", sep, $2, $5, $6; sep=" "} END {print ""}'
}
entries() { adm "$LB" -L -n -c | grep -c '^TCP'; }
# wait_entries N: waits (up to 300 s: TIME_WAIT lasts 120 s) until N
# entries are left.
wait_entries() {
  local i n
  for i in $(seq 1 300); do
    n=$(entries)
    [ "$n" = "$1" ] && return 0
    sleep 1
  done
  fail "still $n entries, waiting for $1: $(counts)"
}

# The held connections, opened one after the other (rr: 3 per server).
ip netns exec "$CL" python3 -c '
import os, socket, struct, sys
d, n = sys.argv[2], int(sys.argv[3])
socks = []
for _ in range(n):
    s = socket.create_connection((sys.argv[1], 80), timeout=5)
    s.settimeout(5)
    data = b""
    while not data.endswith(b"\n"):
        r = s.recv(64)
        if not r: raise SystemExit("closed early")
        data += r
    socks.append(s)
open(d + "/held", "w").close()
import time
while not os.path.exists(d + "/release"):
    time.sleep(0.2)
for s in socks:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
open(d + "/released", "w").close()
' $VIP "$TEST_TMP" $HELD </dev/null >"$TEST_TMP/held.log" 2>&1 &
bg_track $!
at_exit touch "$TEST_TMP/release"
for _ in $(seq 1 150); do [ -f "$TEST_TMP/held" ] && break; sleep 0.1; done
[ -f "$TEST_TMP/held" ] || fail "held connections did not open: $(cat "$TEST_TMP/held.log")"
log "held: $(counts)"

# The churn: CLIENTS processes in parallel, PER connections each, ended
# in turn by a normal close after the answer, a reset (SO_LINGER 0), and
# a close without reading the answer.
pids=()
for c in $(seq 1 "$CLIENTS"); do
  ip netns exec "$CL" python3 -c '
import socket, struct, sys
ok = 0
for i in range(int(sys.argv[2])):
    try:
        s = socket.create_connection((sys.argv[1], 80), timeout=5)
        s.settimeout(5)
        mode = (i + int(sys.argv[3])) % 3
        if mode != 2:
            s.recv(64)
        if mode == 1:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
        ok += 1
    except OSError:
        pass
print(ok)
' $VIP "$PER" "$c" >"$TEST_TMP/churn$c" 2>&1 &
  pids+=($!)
  bg_track $!
done
wait "${pids[@]}"
done_total=0
for c in $(seq 1 "$CLIENTS"); do done_total=$((done_total + $(cat "$TEST_TMP/churn$c" 2>/dev/null || echo 0))); done
log "churn: $done_total of $((CLIENTS * PER)) connections made; now $(entries) entries, $(counts)"
[ "$done_total" -gt 0 ] || fail "no churn connection succeeded"

# Listings hide an entry the moment it expires; it leaves its server's
# counters when the collector takes it out, within a second or so (IPVS's
# per-entry timer does both at once). So the counters are read settled.
wait_entries $HELD
got=$(settled "${RIP[1]}:80:3:0 ${RIP[2]}:80:3:0" counts)
log "only the held connections left: $got"
assert_eq "$got" "${RIP[1]}:80:3:0 ${RIP[2]}:80:3:0" "counters with $HELD connections held"

touch "$TEST_TMP/release"
for _ in $(seq 1 100); do [ -f "$TEST_TMP/released" ] && break; sleep 0.1; done
wait_entries 0
got=$(settled "${RIP[1]}:80:0:0 ${RIP[2]}:80:0:0" counts)
log "every entry gone: $got"
assert_eq "$got" "${RIP[1]}:80:0:0 ${RIP[2]}:80:0:0" "counters once every entry is gone"
pass "ActiveConn/InActConn exact after $done_total parallel connections"
