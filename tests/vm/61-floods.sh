#!/bin/bash
# Floods (issue 6): spoofed-source SYNs and UDP datagrams at a NAT VIP, as
# fast as one CPU of the VM sends them (tests/py/flood.py), while a
# legitimate client keeps connecting and an echo connection opened before
# the flood keeps talking. Twice: with the defences off (the table fills to
# conn_max, new connections are refused and counted, the established one
# keeps working), then with drop_entry and secure_tcp on (embryonic entries
# are evicted, legitimate clients get served during the flood). Asserts:
# the table never exceeds conn_max, the echo connection never misses, the
# counters move, and legitimate clients are served with the defences on.
# Prints flood rate, entries, memory and legitimate service rate. rvs only.
. "$(dirname "$0")/../lib.sh"
adm_init rr
rvs_only
# A small table, so that the few hundred frames per second a loaded TCG
# guest manages fill it within seconds.
CONN_MAX=${RVS_FLOOD_CONN_MAX:-300}
# Flood time: phase "off" floods until the table is full plus HOLD seconds
# (at most MAX_SECS); phase "on" floods as long as "off" did.
HOLD=${RVS_FLOOD_HOLD:-4}
MAX_SECS=${RVS_FLOOD_MAX_SECS:-20}
mk_test_tmp

mac_of() { ip netns exec "$1" cat "/sys/class/net/$2/address"; }
# info KEY: a counter of the connection table from `rvsadm -L --json`.
info() {
  adm "$LB" -L -n --json | python3 -c '
import json, sys
c = json.load(sys.stdin).get("conn_table") or {}
print(c.get(sys.argv[1], 0))' "$1"
}
slab128() { awk '$1 == "kmalloc-128" {print $2}' /proc/slabinfo; }

topo_nat fl 1
RS1=${RS[1]}
# Spoofed sources come from 198.18.0.0/16; the director routes that range
# to the client's side, whose stack drops what it gets (no forwarding), so
# the real server's SYN-ACKs pass rvs's reply path and cost one neighbour.
ip -n "$LB" route add 198.18.0.0/16 via $CIP || fail "route for the spoofed range"
# The real server must not be the bottleneck: a SYN queue larger than any
# flood here (the test kernel has no SYN cookies) and one SYN-ACK retry.
nsysctl "$RS1" net.core.somaxconn=65535 net.ipv4.tcp_max_syn_backlog=65535 net.ipv4.tcp_synack_retries=1
SERVE_BACKLOG=65535 serve_name_bg "$RS1" tcp 80 rs1
serve_name_bg "$RS1" udp 53 rs1
# An echo server on port 7 for the long-lived connection.
ip netns exec "$RS1" python3 -c '
import socket, threading
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 7)); s.listen(16)
def echo(c):
    while True:
        d = c.recv(256)
        if not d: break
        c.sendall(d)
while True:
    c, _ = s.accept(); threading.Thread(target=echo, args=(c,), daemon=True).start()
' </dev/null >/dev/null 2>&1 &
bg_track $!
wait_listen "$RS1" tcp 80
wait_listen "$RS1" tcp 7

services() {
  adm_ok "$LB" -A -t $VIP:80 -s rr
  adm_ok "$LB" -a -t $VIP:80 -r ${RIP[1]}:80 -m
  adm_ok "$LB" -A -u $VIP:53 -s rr
  adm_ok "$LB" -a -u $VIP:53 -r ${RIP[1]}:53 -m
  adm_ok "$LB" -A -t $VIP:7 -s rr
  adm_ok "$LB" -a -t $VIP:7 -r ${RIP[1]}:7 -m
}

# phase LABEL [SECS]: one flood with the current settings, SECS long, or
# (without SECS) until the table is full plus HOLD seconds; sets FLOOD_PPS,
# FLOOD_SECS, MAX_ENTRIES, LEGIT_OK, LEGIT_TRIED, REFUSED, EVICTED, MEM, SLAB.
phase() {
  local label=$1 secs=${2:-} d=$TEST_TMP/$1
  mkdir -p "$d"
  expect_balance "$CL" tcp $VIP 80 1 "rs1:1" "$label: legit before the flood"
  local slab0 refused0 evicted0
  slab0=$(slab128)
  # The echo connection: opened now, one line every 0.5 s until told to stop.
  ip netns exec "$CL" python3 -c '
import os, socket, sys, time
d = sys.argv[2]
s = socket.create_connection((sys.argv[1], 7), timeout=3)
open(d + "/echo.ready", "w").close()
ok = bad = 0
while not os.path.exists(d + "/stop"):
    try:
        s.sendall(b"ping\n")
        got = b""
        while not got.endswith(b"\n"):
            r = s.recv(64)
            if not r: raise OSError("closed")
            got += r
        ok += got == b"ping\n"
    except OSError:
        bad += 1
    time.sleep(0.5)
print(ok, bad)
' $VIP "$d" >"$d/echo.out" 2>&1 &
  local echo_pid=$!
  bg_track $echo_pid
  for _ in $(seq 1 100); do [ -f "$d/echo.ready" ] && break; sleep 0.1; done
  [ -f "$d/echo.ready" ] || fail "$label: echo connection did not open: $(cat "$d/echo.out")"
  # Legitimate client: a connection every 0.5 s (3 s to answer) for the
  # flood's duration. Its closed connections stay in the table (TIME_WAIT,
  # 120 s), a few dozen of conn_max.
  ip netns exec "$CL" python3 -c '
import os, socket, sys, time
d = sys.argv[2]
while not os.path.exists(d + "/flooding"):
    time.sleep(0.05)
ok = tried = 0
t0 = time.monotonic()
while not os.path.exists(d + "/stop"):
    tried += 1
    try:
        with socket.create_connection((sys.argv[1], 80), timeout=3) as s:
            s.settimeout(3)
            ok += s.recv(64).strip() == b"rs1"
    except OSError:
        pass
    time.sleep(0.5)
print(ok, tried, "%.1f" % (time.monotonic() - t0))
' $VIP "$d" >"$d/legit.out" 2>&1 &
  local legit_pid=$!
  bg_track $legit_pid
  # Entries sampled every second.
  ( while [ ! -f "$d/stop" ]; do info count >>"$d/count"; sleep 1; done ) &
  local sampler=$!
  bg_track $sampler
  touch "$d/flooding"
  local t0=$SECONDS full_at=
  ip netns exec "$CL" python3 "$RVS_ROOT/tests/py/flood.py" c0 "$(mac_of "$LB" d0)" \
    $VIP 80 53 "${secs:-$MAX_SECS}" 198.18.0.0 5 >"$d/flood.out" 2>&1 &
  local flood_pid=$!
  bg_track $flood_pid
  while kill -0 $flood_pid 2>/dev/null; do
    sleep 1
    [ -n "$secs" ] && continue
    if [ -z "$full_at" ] && [ "$(tail -1 "$d/count" 2>/dev/null)" = "$CONN_MAX" ]; then full_at=$SECONDS; fi
    [ -n "$full_at" ] && [ $((SECONDS - full_at)) -ge "$HOLD" ] && kill -TERM $flood_pid
  done
  wait $flood_pid || fail "$label: flood.py: $(cat "$d/flood.out")"
  FLOOD_SECS=$((SECONDS - t0))
  touch "$d/stop"
  SLAB=$(( $(slab128) - slab0 ))
  MEM=$(info memory_bytes)
  wait $echo_pid $legit_pid $sampler
  info count >>"$d/count"
  log "$label: flood: $(cat "$d/flood.out")"
  FLOOD_PPS=$(awk '{print $NF}' "$d/flood.out")
  FLOOD_SECS=$(awk '{printf "%d", $8 + 0.5}' "$d/flood.out")
  MAX_ENTRIES=$(sort -n "$d/count" | tail -1)
  read -r LEGIT_OK LEGIT_TRIED LEGIT_SECS <"$d/legit.out" || fail "$label: legit client: $(cat "$d/legit.out")"
  read -r echo_ok echo_bad <"$d/echo.out" || fail "$label: echo client: $(cat "$d/echo.out")"
  REFUSED=$(info refused)
  EVICTED=$(info evicted)
  log "$label: entries max $MAX_ENTRIES (conn_max $CONN_MAX), samples $(tr '\n' ' ' <"$d/count")"
  log "$label: memory $MEM bytes by rvs's accounting, kmalloc-128 objects +$SLAB"
  log "$label: refused $REFUSED, evicted $EVICTED"
  log "$label: legit $LEGIT_OK of $LEGIT_TRIED connections served in $LEGIT_SECS s"
  log "$label: echo connection opened before the flood: $echo_ok answered, $echo_bad missed"
  [ "$MAX_ENTRIES" -le "$CONN_MAX" ] || fail "$label: $MAX_ENTRIES entries > conn_max $CONN_MAX"
  [ "$echo_bad" = 0 ] && [ "$echo_ok" -gt 0 ] || fail "$label: the established connection broke ($echo_ok ok, $echo_bad missed)"
}

# --- defences off: the table fills up to conn_max and stays full.
adm_ok "$LB" --set-option conn_max=$CONN_MAX --set-option drop_entry=0 --set-option secure_tcp=0
services
mark=$(kmsg_mark)
phase off
[ "$REFUSED" -gt 0 ] || fail "off: the flood filled no table (refused 0): flood too slow?"
[ "$MAX_ENTRIES" = "$CONN_MAX" ] || fail "off: table at $MAX_ENTRIES, expected it full ($CONN_MAX)"
warns=$(dmesg_since "$mark" | grep -c "rvs: connection table full")
[ "$warns" -ge 1 ] && [ "$warns" -le $((FLOOD_SECS / 10 + 2)) ] ||
  fail "off: $warns 'table full' warnings in $FLOOD_SECS s (want 1..$((FLOOD_SECS / 10 + 2)): rate-limited)"
off="$FLOOD_PPS pps for $FLOOD_SECS s, $MAX_ENTRIES entries, legit $LEGIT_OK/$LEGIT_TRIED, refused $REFUSED"
refused_off=$REFUSED
off_secs=$FLOOD_SECS

# --- defences on: embryonic entries go, legitimate clients get in.
adm_ok "$LB" -C
adm_ok "$LB" --set-option drop_entry=50 --set-option secure_tcp=2
services
phase on "$off_secs"
[ "$EVICTED" -gt 0 ] || fail "on: drop_entry evicted nothing"
[ $((LEGIT_OK * 2)) -ge "$LEGIT_TRIED" ] && [ "$LEGIT_OK" -gt 0 ] ||
  fail "on: legit clients served $LEGIT_OK of $LEGIT_TRIED during the flood"
# The counters belong to the table, which -C keeps: "on" counts the difference.
log "summary: off: $off; on: $FLOOD_PPS pps for $FLOOD_SECS s, $MAX_ENTRIES entries, legit $LEGIT_OK/$LEGIT_TRIED, refused $((REFUSED - refused_off)), evicted $EVICTED"
pass "floods: table within conn_max, established connection intact, defences serve legitimate clients"
