#!/bin/bash
# The connection table resizes with its entries while traffic goes on.
# A namespace's table starts at 256 buckets; 20,000 UDP flows through NAT
# make it grow (to at least one bucket per entry), and once they are
# flushed (--flush-conns) and collected it shrinks back to 256. Meanwhile 40 established TCP connections
# make round trips without pause: each must be answered every time, and
# always by the real server it started with (a lookup that missed its
# entry while chains moved would drop the segment, or send it to be
# scheduled again), and flows sent twice at once must each have one entry. On two vCPUs the moves interleave with lookups on the
# other CPU. Last, with conn_tab_bits=9 the table stops at its ceiling,
# 512 buckets. rvs only: IPVS's table in this kernel has a fixed size.
. "$(dirname "$0")/../lib.sh"
rvs_only
adm_init rr
mk_test_tmp
topo_nat rsz 2
N=${RVS_RESIZE_FLOWS:-20000}

# The table's size (buckets) and entries, from the listing's JSON.
size_count() {
  adm "$LB" -L -n --json | python3 -c '
import json, sys
t = json.load(sys.stdin)
print(t["conn_tab_size"], (t.get("conn_table") or {}).get("count", 0))'
}
# The most buckets it grows to (2^conn_tab_bits).
tab_max() { adm "$LB" -L -n --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["conn_tab_max"])'; }
# wait_size WANT SECS: until the table has WANT buckets.
wait_size() {
  local i
  for i in $(seq 1 "$2"); do
    read -r size count < <(size_count)
    [ "$size" = "$1" ] && return 0
    sleep 1
  done
  return 1
}

for i in 1 2; do
  ip netns exec "${RS[$i]}" python3 "$RVS_ROOT/tests/py/resize_probe.py" serve 80 rs$i </dev/null >/dev/null 2>&1 &
  bg_track $!
  wait_listen "${RS[$i]}" tcp 80
  drop_udp_port "${RS[$i]}" 53
done
# UDP entries outlive the test's slowest step (the flows on a debug
# kernel); --flush-conns ends them when the test says.
adm_ok "$LB" --set 0 0 600
adm_ok "$LB" -A -t $VIP:80 -s rr
adm_ok "$LB" -A -u $VIP:53 -s rr
for i in 1 2; do
  adm_ok "$LB" -a -t $VIP:80 -r ${RIP[$i]}:80 -m
  adm_ok "$LB" -a -u $VIP:53 -r ${RIP[$i]}:53 -m
done
read -r size count < <(size_count)
assert_eq "$size" 256 "a new namespace's table"
assert_eq "$(tab_max)" 1048576 "the ceiling, conn_tab_bits 20 (the default)"

ip netns exec "$CL" python3 "$RVS_ROOT/tests/py/resize_probe.py" hold $VIP 80 40 "$TEST_TMP/stop" \
  >"$TEST_TMP/probe.out" 2>"$TEST_TMP/probe.err" </dev/null &
probe=$!
bg_track $probe
for _ in $(seq 1 150); do grep -qx held "$TEST_TMP/probe.out" && break; sleep 0.1; done
grep -qx held "$TEST_TMP/probe.out" || fail "40 connections not held: $(cat "$TEST_TMP/probe.err")"
# Round trips before the flows, so a failure cannot hide in a slow start.
sleep 2

# The flows, twice at once: the second sender's datagrams look up entries
# the first made while the table grows under them. A lookup (or the
# insert's own check under the lock) that missed a moving entry would
# make a second entry for the same flow.
mark=$(kmsg_mark)
start=$(date +%s.%N)
ip netns exec "$CL" python3 "$RVS_ROOT/tests/py/udp_flows.py" $VIP 53 $N 10.0.0.2 10.0.0.3 >"$TEST_TMP/sent2" &
second=$!
sent=$(ip netns exec "$CL" python3 "$RVS_ROOT/tests/py/udp_flows.py" $VIP 53 $N 10.0.0.2 10.0.0.3) ||
  fail "udp_flows.py failed"
wait "$second" || fail "the second udp_flows.py failed"
assert_eq "$sent" "$N" "flows sent"
assert_eq "$(cat "$TEST_TMP/sent2")" "$N" "flows sent again"
log "$N flows sent twice in $(echo "$(date +%s.%N) - $start" | bc) s"
# Grown: at most one entry per bucket, at least one per two buckets
# (table_size: grow past one per bucket, to at least one bucket per entry).
ok=
for _ in $(seq 1 60); do
  read -r size count < <(size_count)
  if [ "$count" -ge "$N" ] && [ "$count" -le "$size" ] && [ "$size" -le $((2 * count)) ]; then ok=1; break; fi
  sleep 1
done
log "grown: $size buckets for $count entries"
[ -n "$ok" ] || fail "the table did not grow to fit $count entries: $size buckets"
assert_eq "$count" $((N + 40)) "entries: one per flow and per held connection"
dmesg_since "$mark" | grep -o 'connection table resized.*' | sed 's/^/#   /' >&2

# The flows end now, the collector frees them, and the table shrinks back.
adm_ok "$LB" --flush-conns -u $VIP:53
wait_size 256 60 || fail "the table did not shrink back to 256 buckets: $(size_count)"
read -r size count < <(size_count)
log "shrunk: $size buckets for $count entries"
assert_eq "$count" 40 "entries left: the held connections"

touch "$TEST_TMP/stop"
wait "$probe" 2>/dev/null
sed 's/^/#   /' "$TEST_TMP/probe.out" | grep -v '^#   held$' >&2
summary=$(grep '^rounds ' "$TEST_TMP/probe.out") || fail "no probe summary: $(cat "$TEST_TMP/probe.err")"
read -r _ rounds _ trips _ fails _ moved <<<"$summary"
assert_eq "$fails" 0 "round trips failed across the resizes"
assert_eq "$moved" 0 "connections answered by another real server"
[ "$rounds" -ge 10 ] || fail "only $rounds rounds of round trips: the probe did not run throughout"

# The ceiling: conn_tab_bits=9 stops the table at 512 buckets.
adm_ok "$LB" -C
rmmod rvs || fail "rmmod rvs"
insmod "$RVS_ROOT/rvs.ko" conn_tab_bits=9 || fail "insmod conn_tab_bits=9"
at_exit 'rmmod rvs 2>/dev/null; insmod "$RVS_ROOT/rvs.ko"'
adm_ok "$LB" --set 0 0 600
adm_ok "$LB" -A -u $VIP:53 -s rr
adm_ok "$LB" -a -u $VIP:53 -r ${RIP[1]}:53 -m
sent=$(ip netns exec "$CL" python3 "$RVS_ROOT/tests/py/udp_flows.py" $VIP 53 3000 10.0.0.2) ||
  fail "udp_flows.py failed"
for _ in $(seq 1 60); do
  read -r size count < <(size_count)
  [ "$count" -ge 3000 ] && [ "$size" = 512 ] && break
  sleep 1
done
sleep 2
read -r size count < <(size_count)
log "ceiling 2^9: $size buckets for $count entries"
assert_eq "$size" 512 "the table at its ceiling (conn_tab_bits=9)"
assert_eq "$(tab_max)" 512 "the ceiling the listing gives, conn_tab_bits 9"
pass "grew to $N flows and shrank back under $rounds rounds of $trips round trips, none lost; the ceiling holds"
