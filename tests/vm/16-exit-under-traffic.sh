#!/bin/bash
# A namespace that goes away, and the module that unloads, while packets
# are inside the hooks. Unregistering a netfilter hook does not wait for
# running hook calls, so the state those calls use (services, connection
# table) may only be freed one RCU grace period later: rvs unhooks in the
# namespace's pre_exit and frees in its exit, as IPVS does. Freeing at once
# is a use-after-free that KASAN reports (make test-debug); on the normal
# kernel this test checks the teardown under a flood is clean and that the
# flood really ran through the hooks (the service's packet counter).
#
# Each round: a director namespace with a NAT UDP service (its real server
# behind a dummy device, so every packet takes the whole path: lookup,
# new connection, NAT, route, LOCAL_OUT), a flooder namespace sending to
# the VIP from 64 source ports over a veth, then `ip netns del` of the
# director while the flood goes on. Then the same with rmmod (rvs only).
. "$(dirname "$0")/../lib.sh"

adm_init rr
mk_test_tmp
ROUNDS=${RVS_EXIT_ROUNDS:-8}
VIP=10.0.100.1
newns FL fl

# flood: UDP to VIP:53 from 64 ports until $TEST_TMP/stop, errors ignored
# (the route disappears with the director).
flood() {
  rm -f "$TEST_TMP/stop"
  ip netns exec "$FL" timeout 60 python3 -c '
import os, socket, sys
vip, stop = sys.argv[1], sys.argv[2]
socks = []
for p in range(40000, 40064):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", p))
    s.setblocking(False)
    socks.append(s)
n = 0
while True:
    for s in socks:
        try:
            s.sendto(b"x" * 32, (vip, 53))
        except OSError:
            pass
    n += 1
    if n % 64 == 0 and os.path.exists(stop):
        break
' "$VIP" "$TEST_TMP/stop" </dev/null >/dev/null 2>&1 &
  FLOOD_PID=$!
  bg_track $FLOOD_PID
}
stop_flood() { touch "$TEST_TMP/stop"; wait "$FLOOD_PID" 2>/dev/null; }

# director TAG: a director namespace (stored in D) joined to the flooder.
director() {
  newns D "$1"
  # A new flooder-side name each round: a director kept alive (the unload
  # rounds) keeps its veth pair.
  FLIF=f$1
  ip link add "$FLIF" netns "$FL" type veth peer name d0 netns "$D" || fail "veth"
  nsip "$D" <<IP
link set d0 up
addr add 10.0.0.1/24 dev d0
addr add $VIP/32 dev lo
link add dummy0 type dummy
link set dummy0 up
addr add 10.0.1.254/24 dev dummy0
IP
  nsip "$FL" <<IP
link set $FLIF up
addr replace 10.0.0.2/24 dev $FLIF
route replace $VIP/32 via 10.0.0.1 dev $FLIF
IP
  nsysctl "$D" net.ipv4.ip_forward=1
  adm_ok "$D" -A -u $VIP:53 -s rr
  adm_ok "$D" -a -u $VIP:53 -r 10.0.1.1:53 -m
}

# in_pkts NS: the service's incoming packet counter.
in_pkts() {
  adm "$1" -L -n --stats 2>/dev/null | awk -v s="$VIP:53" '$2 == s {print $4; exit}'
}

# wait_flowing NS LABEL: waits until the service has counted packets.
wait_flowing() {
  local i n=
  for i in $(seq 1 100); do
    n=$(in_pkts "$1")
    [ -n "$n" ] && [ "$n" != 0 ] && { log "$2: the flood reached the service ($n packets)"; return 0; }
    sleep 0.1
  done
  fail "$2: the flood never reached the service (InPkts '${n}'): $(adm "$1" -L -n --stats 2>&1)"
}

# Forgets D without deleting it (it is deleted by hand below).
unregister_ns() {
  local keep=() ns
  for ns in "${_created_ns[@]}"; do [ "$ns" = "$1" ] || keep+=("$ns"); done
  _created_ns=("${keep[@]}")
}

for r in $(seq 1 "$ROUNDS"); do
  director "d$r"
  flood
  wait_flowing "$D" "round $r"
  # The namespace's teardown runs while the flood still arrives on d0.
  ip netns del "$D" || fail "round $r: ip netns del"
  unregister_ns "$D"
  sleep 0.3
  stop_flood
done
log "$ROUNDS director namespaces deleted under a flood"

if [ "$ADM" = rvsadm ]; then
  for r in 1 2 3; do
    director "u$r"
    flood
    wait_flowing "$D" "unload $r"
    out=$(timeout 60 rmmod rvs 2>&1)
    rc=$?
    stop_flood
    if [ $rc != 0 ]; then
      # "in use" while a request holds the family: retry once the flood is gone.
      grep -Eiq 'in use|busy|temporarily' <<<"$out" || fail "unload $r: rmmod failed: $out"
      timeout 60 rmmod rvs || fail "unload $r: rmmod failed after the flood stopped"
    fi
    rvs_loaded && fail "unload $r: rvs still loaded"
    insmod "$RVS_ROOT/rvs.ko" || fail "unload $r: insmod"
  done
  log "3 unloads under a flood"
fi
# The namespaces' teardown is asynchronous: give it time to finish before
# the runner reads the kernel log.
sleep 2
pass "teardown under traffic clean"
