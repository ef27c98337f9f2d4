#!/bin/bash
# A keepalived VRRP pair with lvs_sync_daemon keeps established connections
# across a fail-over: the HA setup IPVS's users run. Debian's keepalived
# (2.2.7) runs in each of two DR directors, VRRP and checker both: one
# vrrp_instance on the LAN moves the VIP, `lvs_sync_daemon l0 VI_84 id 84`
# in global_defs makes keepalived run the master sync daemon where the
# instance is MASTER and the backup daemon where it is BACKUP, and a
# virtual_server VIP:80 (rr, lb_kind DR) with one real server. One LAN (a
# bridge in namespace sw) carries the clients' traffic, VRRP's adverts and
# the sync multicast (224.0.0.81 port 8848, TTL 1):
#
#   client c0 10.0.0.2 ---+--- l0 10.0.0.11 D1 keepalived, state MASTER, priority 150
#   (VIP on the LAN:      +--- l0 10.0.0.12 D2 keepalived, state BACKUP, priority 100
#    it ARPs for it)      +--- f0 10.0.0.3  RS (VIP on lo, no ARP for it; an echo
#                                             server answering the client directly)
#   VIP 10.0.0.100/32, keepalived's virtual_ipaddress on l0; advert_int 1
#
# With lvs_sync_daemon:
#  1. D1 is MASTER (holds the VIP), D2 BACKUP (does not; its log says so);
#     -L --daemon lists exactly D1's master and D2's backup daemon as
#     ipvsadm prints them, started by keepalived (the test starts none);
#  2. a long-lived connection (tests/py/longconn.py) makes 5 round trips
#     through D1; D2 then lists it (client address and port, ESTABLISHED,
#     to RS): synced;
#  3. D1 crashes: its keepalived is killed with SIGKILL (stopped first, so
#     that neither does its parent respawn a child nor do the children get
#     their parent-death SIGTERM and clean up: the VIP, the service and the
#     master daemon stay in D1's kernel, as after a crash) and its switch
#     port goes down (the box is gone from the LAN: no adverts, no ARP
#     answers, nothing it could still forward). This is realistic (nothing
#     tells D2; it must notice the adverts stop) and deterministic (D1
#     cannot take anything back). D2 becomes MASTER on its own (master down
#     interval: 3 adverts and the skew, ~3.6 s) and adds the VIP; keepalived
#     swaps its daemon to master (-L --daemon lists only that); its
#     gratuitous ARPs move the client's neighbour entry for the VIP from
#     D1's MAC to D2's; the connection goes on: 10 more round trips
#     succeed, and D2 saw them (an nft counter);
#  4. SIGTERM to D2's keepalived stops its daemon (-L --daemon empty) and
#     removes the service and the VIP it made.
# Control: the same pair without lvs_sync_daemon (fresh namespaces):
# -L --daemon is empty on both directors, D2 does not list the connection,
# and after the same crash the connection is reset (D2 has no entry for it;
# its mid-stream segment goes to D2's own stack, which resets it:
# sloppy_tcp=0, the default).
# The IPVS pass runs keepalived on the kernel's IPVS; the rvs pass on rvs.ko
# loaded with ipvs_compat=1 (ipvs_clients: keepalived speaks only the "IPVS"
# family).
. "$(dirname "$0")/../lib.sh"

command -v keepalived >/dev/null || fail "keepalived not installed (qemu/install-deps installs it)"
command -v nft >/dev/null || fail "nft not installed (qemu/install-deps installs it)"
command -v socat >/dev/null || fail "socat not installed (qemu/install-deps installs it)"
ipvs_clients
adm_init rr
mk_test_tmp
VIP=10.0.0.100 CIP=10.0.0.2 RIP=10.0.0.3 D1IP=10.0.0.11 D2IP=10.0.0.12
SYNCID=84
DAEMON_ARGS="(mcast=l0, syncid=$SYNCID, maxlen=1472, group=224.0.0.81, port=8848, ttl=1)"

ms() { echo $(( $(date +%s%N) / 1000000 )); }

# ha_topo TAG: the namespaces above, named TAG-*: sets SW CL D1 D2 RS.
# Each director counts what arrives for the VIP (nft counter "vip").
ha_topo() {
  local t=$1 d
  newns SW "$t-sw"; newns CL "$t-cl"; newns D1 "$t-d1"; newns D2 "$t-d2"; newns RS "$t-rs"
  nsip "$SW" <<IP
link add br0 type bridge
link set br0 up
link add swc type veth peer name c0 netns $CL
link add sw1 type veth peer name l0 netns $D1
link add sw2 type veth peer name l0 netns $D2
link add swr type veth peer name f0 netns $RS
link set swc master br0 up
link set sw1 master br0 up
link set sw2 master br0 up
link set swr master br0 up
IP
  nsip "$CL" <<IP
link set c0 up
addr add $CIP/24 dev c0
IP
  nsip "$D1" <<IP
link set l0 up
addr add $D1IP/24 dev l0
IP
  nsip "$D2" <<IP
link set l0 up
addr add $D2IP/24 dev l0
IP
  nsip "$RS" <<IP
link set f0 up
addr add $RIP/24 dev f0
addr add $VIP/32 dev lo
IP
  nsysctl "$RS" net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2
  for d in "$D1" "$D2"; do
    # Counted as frames arrive (a netdev chain): rvs's ingress fast path,
    # when on, takes established flows before PREROUTING.
    ip netns exec "$d" nft -f - <<NFT || fail "nft setup in ${d#"$NS_PREFIX"-}"
table netdev ha {
  counter vip {}
  chain in {
    type filter hook ingress device l0 priority -500; policy accept;
    meta pkttype host ip daddr $VIP tcp dport 80 counter name vip
  }
}
NFT
  done
  ip netns exec "$RS" socat TCP-LISTEN:80,fork,reuseaddr PIPE </dev/null >/dev/null 2>&1 &
  bg_track $!
}

vip_pkts() { nft_counter "$1" netdev ha vip; }
mac_of() { ip -n "$1" -o link show "$2" | awk '{for (i = 1; i < NF; i++) if ($i == "link/ether") print $(i + 1)}'; }
has_vip() { ip -n "$1" -4 -o addr show dev l0 | grep -q " $VIP/32 "; }
# The client's neighbour entry for the VIP: "MAC STATE", or nothing.
cl_neigh() { ip -n "$CL" neigh show "$VIP" dev c0 | awk '{for (i = 1; i < NF; i++) if ($i == "lladdr") print $(i + 1), $NF}'; }

# ka_conf PRIORITY STATE SYNC(0|1): a director's keepalived.conf.
ka_conf() {
  cat <<CONF
global_defs {
    router_id rvs_ha_$2
$( [ "$3" = 1 ] && echo "    lvs_sync_daemon l0 VI_84 id $SYNCID" )
}
vrrp_instance VI_84 {
    state $2
    interface l0
    virtual_router_id 84
    priority $1
    advert_int 1
    virtual_ipaddress {
        $VIP/32 dev l0
    }
}
virtual_server $VIP 80 {
    lb_algo rr
    lb_kind DR
    protocol TCP
    real_server $RIP 80 {
        weight 1
    }
}
CONF
}

# ka_start NAME NS CONF: keepalived (VRRP and checker; no BFD; not to syslog,
# whose fallback is the console) in NS, with its own pid files
# ($TEST_TMP/NAME.pid, .vrrp.pid, .check.pid: the instances share a file
# system), logging to $TEST_TMP/NAME.log.
ka_logs=()
ka_start() {
  local n=$1 ns=$2 i
  log "[${ns#"$NS_PREFIX"-}] keepalived -n -l -G -D -B -f $(basename "$3")"
  ip netns exec "$ns" keepalived -n -l -G -D -B -f "$3" -p "$TEST_TMP/$n.pid" \
    -r "$TEST_TMP/$n.vrrp.pid" -c "$TEST_TMP/$n.check.pid" >"$TEST_TMP/$n.log" 2>&1 &
  bg_track $!
  ka_logs+=("$n")
  for i in $(seq 1 100); do
    [ -s "$TEST_TMP/$n.pid" ] && [ -s "$TEST_TMP/$n.vrrp.pid" ] && [ -s "$TEST_TMP/$n.check.pid" ] && return 0
    sleep 0.1
  done
  fail "$CASE: keepalived $n did not start its VRRP and checker processes: $(tail -5 "$TEST_TMP/$n.log" | tr '\n' ' ')"
}
# Each keepalived's log, on failure.
PASSED=0
show_logs() {
  local n
  [ "$PASSED" = 1 ] && return
  for n in "${ka_logs[@]}"; do tail -25 "$TEST_TMP/$n.log" | sed "s/^/#   $n: /" >&2; done
}
at_exit show_logs

# wait_for SECONDS CMD...: until CMD succeeds (polled every 0.1 s); prints
# the milliseconds it took, or fails (returns 1) after SECONDS.
wait_for() {
  local limit=$(( $1 * 1000 )) t0
  shift
  t0=$(ms)
  until "$@"; do
    [ $(( $(ms) - t0 )) -le "$limit" ] || return 1
    sleep 0.1
  done
  echo $(( $(ms) - t0 ))
}

# daemons NS: -L --daemon in NS (stderr too).
daemons() { adm "$1" -L --daemon 2>&1; }
daemons_are() { [ "$(daemons "$1")" = "$2" ]; }
has_service() { adm "$1" -L -n | awk -v s="$VIP:80" '$1 == "TCP" && $2 == s {f = 1} END {exit !f}'; }
neigh_is() { [ "$(cl_neigh | cut -d' ' -f1)" = "$1" ]; }
ka_said() { grep -qF "$2" "$TEST_TMP/$1.log"; }

# conn_open: a long-lived connection from the client to VIP:80; its client
# port in PORT. conn_rt N: N round trips on it, the outcome in RT ("ok N"
# or "fail K REASON"). conn_close: ends it. (One at a time: a coproc.)
conn_open() {
  local out
  coproc LC { ip netns exec "$CL" python3 "$RVS_ROOT/tests/py/longconn.py" $VIP 80; }
  read -r -t 20 out <&"${LC[0]}" || fail "$CASE: the client did not start"
  case $out in "open "*) PORT=${out#open } ;; *) fail "$CASE: connection to $VIP:80: $out" ;; esac
}
conn_rt() {
  echo "$1" >&"${LC[1]}"
  read -r -t $(( $1 + 15 )) RT <&"${LC[0]}" || RT="fail ? no-answer"
}
conn_close() {
  local fd=${LC[1]:-} pid=${LC_PID:-}
  [ -n "$fd" ] || return 0
  exec {fd}>&-
  wait "$pid" 2>/dev/null
}
at_exit conn_close

# conn_entry NS: NS's entry for the client's connection as
# "STATE EXPIRE DEST", or nothing.
conn_entry() { adm "$1" -L -n -c | awk -v c="$CIP:$PORT" '$4 == c {print $3, $2, $6; exit}'; }
has_conn() { [ -n "$(conn_entry "$1")" ]; }

# crash NAME: D1's keepalived NAME dies as in a crash (all three processes
# stopped, then killed with SIGKILL, so nothing cleans up), and D1's switch
# port sw1 goes down.
crash() {
  local pids
  pids="$(cat "$TEST_TMP/$1.pid") $(cat "$TEST_TMP/$1.vrrp.pid") $(cat "$TEST_TMP/$1.check.pid")"
  log "$CASE: D1 crashes: kill -STOP, -KILL $pids (keepalived), its switch port sw1 down"
  kill -STOP $pids || fail "$CASE: kill -STOP $pids"
  kill -KILL $pids
  { wait "$(cat "$TEST_TMP/$1.pid")"; } 2>/dev/null
  ip -n "$SW" link set sw1 down || fail "$CASE: ip link set sw1 down"
}

ncase=0
# ha_case 1|0: the whole scenario with (1) or without (0) lvs_sync_daemon.
ha_case() {
  local sync=$1 t0 t1 dt entry a1 b2 m1 m2 n want1 want2 ka
  ncase=$((ncase + 1))
  if [ "$sync" = 1 ]; then CASE="lvs_sync_daemon"; else CASE="control (no lvs_sync_daemon)"; fi
  t0=$(ms)
  log "case $ncase: $CASE"
  ha_topo "h$ncase"
  m1=$(mac_of "$D1" l0) m2=$(mac_of "$D2" l0)
  ka_conf 150 MASTER "$sync" >"$TEST_TMP/d1-$ncase.conf"
  ka_conf 100 BACKUP "$sync" >"$TEST_TMP/d2-$ncase.conf"
  wait_listen "$RS" tcp 80

  # 1. D1 first, until it is MASTER; then D2, which stays BACKUP.
  ka_start "d1_$ncase" "$D1" "$TEST_TMP/d1-$ncase.conf"
  dt=$(wait_for 20 has_vip "$D1") || fail "$CASE: D1 does not hold the VIP 20 s after its keepalived started"
  log "$CASE: D1 holds the VIP $dt ms after its keepalived started"
  ka_said "d1_$ncase" "(VI_84) Entering MASTER STATE" || fail "$CASE: D1's keepalived did not log its MASTER state"
  ka_start "d2_$ncase" "$D2" "$TEST_TMP/d2-$ncase.conf"
  wait_for 20 ka_said "d2_$ncase" "(VI_84) Entering BACKUP STATE" >/dev/null ||
    fail "$CASE: D2's keepalived did not log its BACKUP state within 20 s"
  wait_for 20 has_service "$D1" >/dev/null || fail "$CASE: D1's keepalived did not make the service"
  wait_for 20 has_service "$D2" >/dev/null || fail "$CASE: D2's keepalived did not make the service"
  if [ "$sync" = 1 ]; then want1="master sync daemon $DAEMON_ARGS" want2="backup sync daemon $DAEMON_ARGS"
  else want1= want2=; fi
  # keepalived starts D2's backup daemon as the instance enters BACKUP
  # (its log line comes first).
  wait_for 5 daemons_are "$D2" "$want2" >/dev/null ||
    fail "$CASE: D2's -L --daemon (BACKUP): expected '$want2', got '$(daemons "$D2")'"
  assert_eq "$(daemons "$D1")" "$want1" "$CASE: -L --daemon on D1 (MASTER)"
  ! has_vip "$D2" || fail "$CASE: D2 (BACKUP) holds the VIP too"
  log "$CASE: D1 MASTER with the VIP, D2 BACKUP without; sync daemons: D1 '${want1:-none}', D2 '${want2:-none}'"

  # 2. A connection through D1; D2 learns it from the sync daemon.
  conn_open
  t1=$(ms)
  conn_rt 5
  assert_eq "$RT" "ok 5" "$CASE: round trips through D1 (client port $PORT)"
  a1=$(vip_pkts "$D1") b2=$(vip_pkts "$D2")
  log "$CASE: port $PORT, 5 round trips through D1 (D1 saw $a1 packets, D2 $b2)"
  [ "$a1" -ge 7 ] && [ "$b2" = 0 ] || fail "$CASE: the connection did not go through D1 alone"
  assert_eq "$(cl_neigh | cut -d' ' -f1)" "$m1" "$CASE: the client's neighbour entry for $VIP (D1's MAC)"
  if [ "$sync" = 1 ]; then
    wait_for 10 has_conn "$D2" >/dev/null || {
      adm "$D2" -L -n -c | sed 's/^/#   D2: /' >&2
      fail "$CASE: D2 does not list $CIP:$PORT 10 s after it opened"
    }
    entry=$(conn_entry "$D2")
    log "$CASE: D2 lists $CIP:$PORT $(( $(ms) - t1 )) ms after it opened: $entry"
    set -- $entry
    assert_eq "$1 $3" "ESTABLISHED $RIP:80" "$CASE: D2's entry for $CIP:$PORT (state, destination)"
  else
    assert_eq "$(conn_entry "$D2")" "" "$CASE: D2's entry for $CIP:$PORT without sync daemons"
  fi

  # 3. D1 crashes; D2 takes over by itself.
  b2=$(vip_pkts "$D2")
  crash "d1_$ncase"
  dt=$(wait_for 15 has_vip "$D2") || fail "$CASE: D2 does not hold the VIP 15 s after D1's crash"
  log "$CASE: D2 holds the VIP $dt ms after D1's crash"
  ka_said "d2_$ncase" "(VI_84) Entering MASTER STATE" || fail "$CASE: D2's keepalived did not log its MASTER state"
  want2=
  [ "$sync" = 1 ] && want2="master sync daemon $DAEMON_ARGS"
  wait_for 5 daemons_are "$D2" "$want2" >/dev/null ||
    fail "$CASE: D2's -L --daemon after the fail-over: expected '$want2', got '$(daemons "$D2")'"
  dt=$(wait_for 5 neigh_is "$m2") ||
    fail "$CASE: the client's neighbour entry for $VIP is '$(cl_neigh)', not D2's MAC $m2, 5 s after D2 took the VIP"
  log "$CASE: D2's sync daemons '${want2:-none}'; the client's neighbour entry for $VIP: $(cl_neigh) (D2's) after $dt ms more"
  conn_rt 10
  n=$(( $(vip_pkts "$D2") - b2 ))
  log "$CASE: after the fail-over: $RT (D2 saw $n packets)"
  if [ "$sync" = 1 ]; then
    assert_eq "$RT" "ok 10" "$CASE: round trips through D2 after the fail-over"
    [ "$n" -ge 10 ] || fail "$CASE: D2 saw $n packets of the connection, not 10 or more"
  else
    assert_eq "$RT" "fail 0 reset" "$CASE: a fail-over without lvs_sync_daemon"
  fi
  conn_close

  # 4. keepalived's shutdown stops its daemon and removes its service.
  if [ "$sync" = 1 ]; then
    ka=$(cat "$TEST_TMP/d2_$ncase.pid")
    kill -TERM "$ka"
    wait "$ka" 2>/dev/null
    assert_eq "$(daemons "$D2")" "" "$CASE: D2's -L --daemon after keepalived's SIGTERM"
    ! has_service "$D2" || fail "$CASE: D2's service outlived keepalived's SIGTERM"
    ! has_vip "$D2" || fail "$CASE: D2's VIP outlived keepalived's SIGTERM"
    log "$CASE: keepalived's SIGTERM stopped D2's daemon and removed its service and VIP"
  fi
  log "case $ncase ($CASE) passed in $(( ($(ms) - t0) / 1000 )) s"
}

ha_case 1
ha_case 0
PASSED=1
pass "keepalived ($( [ "${RVS_COMPAT:-0}" = 1 ] && echo "rvs, ipvs_compat=1" || echo IPVS )): VRRP fail-over with lvs_sync_daemon carried the connection on; without it the connection was reset"
