#!/bin/bash
# Connection synchronisation (IPVS's sync daemon, protocol version 1): the
# director that takes over carries on the connections the failed one
# synced to it. One LAN (a bridge in namespace sw) joins a client, two DR
# directors and a real server; a second link joins the directors for the
# sync multicast (224.0.0.81 port 8848, TTL 1):
#
#   client c0 10.0.0.2 ---+--- l0 10.0.0.11 D1 (VIP on lo) s0 10.81.0.1 --+
#   route VIP via D1,     +--- l0 10.0.0.12 D2 (VIP on lo) s0 10.81.0.2 --+
#   later via D2          +--- f0 10.0.0.3  RS (VIP on lo, no ARP for it;
#                                             echoes; answers the client
#                                             directly)
#
# Both directors have the service VIP:80 (rr, RS by -g); D1 runs the master
# daemon, D2 the backup, both on s0 with syncid 81. In each case:
#  - -L --daemon on each director shows its daemon as ipvsadm prints it;
#  - a long-lived connection (tests/py/longconn.py) makes 5 round trips
#    through D1 (D1 syncs a connection at its 3rd packet); D2 then lists it
#    (client address and port, ESTABLISHED, to RS) within 10 s;
#  - the client's route moves to D2 (ip route replace): 10 more round trips
#    succeed, D2 received them (an nft counter, and its service's InPkts in
#    -L --stats) and D1 none;
#  - control: D2's backup daemon stopped (--stop-daemon; its list is then
#    empty), a second connection through D1, synced by D1 (its datagram
#    reaches D2, which does not list the connection), breaks at the same
#    fail-over: D2 has no entry, the mid-stream segment goes to its own
#    stack (sloppy_tcp=0, the default), which resets the connection;
#  - D1's master stopped: its list is empty.
# Engine pairs (master -> backup): the IPVS pass runs IPVS -> IPVS; the rvs
# pass rvs -> rvs, rvs -> IPVS and IPVS -> rvs (ip_vs loaded beside
# rvs.ko, each director driven by its own tool); the compat pass ipvsadm on
# rvs.ko with ipvs_compat=1 on both directors.
. "$(dirname "$0")/../lib.sh"
adm_init rr
command -v nft >/dev/null || fail "nft not installed (qemu/install-deps installs it)"
command -v socat >/dev/null || fail "socat not installed (qemu/install-deps installs it)"
VIP=10.0.100.1 CIP=10.0.0.2 RIP=10.0.0.3 D1IP=10.0.0.11 D2IP=10.0.0.12
SYNCID=81

# engine TOOL: the engine TOOL drives in this pass.
engine() {
  case $1 in
    rvsadm) echo rvs ;;
    *) if [ "${RVS_COMPAT:-0}" = 1 ]; then echo "rvs(ipvs_compat)"; else echo IPVS; fi ;;
  esac
}

# dadm / dadm_ok TOOL NS ARGS...: lib.sh's adm / adm_ok with TOOL as $ADM.
dadm() { local ADM=$1; shift; adm "$@"; }
dadm_ok() { local ADM=$1; shift; adm_ok "$@"; }

ms() { echo $(( $(date +%s%N) / 1000000 )); }

# sync_topo TAG: the namespaces above, named TAG-*: sets SW CL D1 D2 RS.
# Each director counts what arrives for the VIP (nft counter "vip") and the
# sync datagrams (counter "sync"); RS runs an echo server on port 80.
sync_topo() {
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
  vethns "$D1" s0 "$D2" s0
  nsip "$CL" <<IP
link set c0 up
addr add $CIP/24 dev c0
route add $VIP/32 via $D1IP
IP
  nsip "$D1" <<IP
link set l0 up
addr add $D1IP/24 dev l0
addr add $VIP/32 dev lo
addr add 10.81.0.1/24 dev s0
IP
  nsip "$D2" <<IP
link set l0 up
addr add $D2IP/24 dev l0
addr add $VIP/32 dev lo
addr add 10.81.0.2/24 dev s0
IP
  nsip "$RS" <<IP
link set f0 up
addr add $RIP/24 dev f0
addr add $VIP/32 dev lo
IP
  nsysctl "$RS" net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2
  for d in "$D1" "$D2"; do
    ip netns exec "$d" nft -f - <<NFT || fail "nft setup in ${d#$NS_PREFIX-}"
table ip sync {
  counter sync {}
  chain pre {
    type filter hook prerouting priority -300; policy accept;
    udp dport 8848 counter name sync
  }
}
table netdev sync {
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

# Counted as frames arrive: rvs's ingress fast path, when on, takes
# established flows before PREROUTING.
vip_pkts() { nft_counter "$1" netdev sync vip; }
sync_pkts() { nft_counter "$1" ip sync sync; }
route_via() { ip -n "$CL" route replace $VIP/32 via "$1" || fail "$CASE: ip route replace $VIP via $1"; }

# start_daemon TOOL NS master|backup
start_daemon() {
  local out
  log "[${2#$NS_PREFIX-}] $1 --start-daemon $3 --mcast-interface s0 --syncid $SYNCID"
  out=$(ip netns exec "$2" "$1" --start-daemon "$3" --mcast-interface s0 --syncid $SYNCID 2>&1) ||
    fail "$CASE: $1 --start-daemon $3 failed: $out"
}

# expect_daemon TOOL NS master|backup|none: -L --daemon as ipvsadm prints it
# (maxlen: the 1500-byte MTU less IP and UDP headers).
expect_daemon() {
  local want= got
  [ "$3" = none ] ||
    want="$3 sync daemon (mcast=s0, syncid=$SYNCID, maxlen=1472, group=224.0.0.81, port=8848, ttl=1)"
  got=$(dadm "$1" "$2" -L --daemon 2>&1) || fail "$CASE: $1 -L --daemon failed: $got"
  assert_eq "$got" "$want" "$CASE: $1 -L --daemon on ${2#$NS_PREFIX-}"
}

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
# A failed step leaves the client waiting for its next batch: let it end
# (rather than be killed with the namespaces' processes).
at_exit conn_close

# conn_entry TOOL NS: NS's entry for the client's connection as
# "STATE EXPIRE DEST", or nothing.
conn_entry() {
  dadm "$1" "$2" -L -n -c | awk -v c="$CIP:$PORT" '$4 == c {print $3, $2, $6; exit}'
}

# svc_inpkts TOOL NS: the service's InPkts in -L -n --stats.
svc_inpkts() { dadm "$1" "$2" -L -n --stats | awk '$1 == "TCP" {print $4; exit}'; }

ncase=0
# failover_case MASTER_TOOL BACKUP_TOOL: the whole scenario, D1 driven by
# MASTER_TOOL, D2 by BACKUP_TOOL.
failover_case() {
  local m=$1 b=$2 t0 t1 d entry a1 a2 b2 s0 n i
  ncase=$((ncase + 1))
  CASE="$(engine "$m") -> $(engine "$b")"
  t0=$(ms)
  log "case $ncase: master $CASE backup"
  sync_topo "k$ncase"
  for d in 1 2; do
    local tool=$m ns=$D1
    [ $d = 2 ] && tool=$b ns=$D2
    dadm_ok "$tool" "$ns" -A -t $VIP:80 -s rr
    dadm_ok "$tool" "$ns" -a -t $VIP:80 -r $RIP:80 -g
  done
  wait_listen "$RS" tcp 80
  start_daemon "$m" "$D1" master
  start_daemon "$b" "$D2" backup
  expect_daemon "$m" "$D1" master
  expect_daemon "$b" "$D2" backup

  # 1. A connection through D1.
  conn_open
  t1=$(ms)
  conn_rt 5
  assert_eq "$RT" "ok 5" "$CASE: round trips through D1 (client port $PORT)"
  a1=$(vip_pkts "$D1") b2=$(vip_pkts "$D2")
  log "$CASE: port $PORT, 5 round trips through D1 (D1 saw $a1 packets, D2 $b2)"
  [ "$a1" -ge 7 ] && [ "$b2" = 0 ] || fail "$CASE: the connection did not go through D1 alone"

  # 2. D2 learns it from the sync daemon.
  for i in $(seq 1 100); do
    entry=$(conn_entry "$b" "$D2")
    [ -n "$entry" ] || [ $(( $(ms) - t1 )) -gt 10000 ] || { sleep 0.2; continue; }
    break
  done
  [ -n "$entry" ] || {
    dadm "$b" "$D2" -L -n -c | sed 's/^/#   D2: /' >&2
    fail "$CASE: D2 does not list $CIP:$PORT 10 s after it opened ($(sync_pkts "$D2") sync datagrams reached D2)"
  }
  log "$CASE: D2 lists $CIP:$PORT after $(( $(ms) - t1 )) ms: $entry ($(sync_pkts "$D2") sync datagrams reached D2)"
  set -- $entry
  assert_eq "$1 $3" "ESTABLISHED $RIP:80" "$CASE: D2's entry for $CIP:$PORT (state, destination)"

  # 3. Fail-over: D2 carries the connection on.
  a1=$(vip_pkts "$D1") b2=$(vip_pkts "$D2")
  route_via $D2IP
  conn_rt 10
  assert_eq "$RT" "ok 10" "$CASE: round trips through D2 after the fail-over"
  a1=$(( $(vip_pkts "$D1") - a1 )) b2=$(( $(vip_pkts "$D2") - b2 ))
  log "$CASE: 10 round trips through D2 after the fail-over (D2 saw $b2 packets, D1 $a1)"
  [ "$b2" -ge 10 ] && [ "$a1" = 0 ] || fail "$CASE: after the fail-over D2 saw $b2 packets, D1 $a1"
  # IPVS folds its per-CPU counters into -L --stats every 2 s.
  for i in $(seq 1 40); do
    n=$(svc_inpkts "$b" "$D2")
    [ "${n:-0}" -ge 10 ] 2>/dev/null && break
    sleep 0.25
  done
  log "$CASE: D2's service InPkts: $n"
  [ "${n:-0}" -ge 10 ] 2>/dev/null || fail "$CASE: D2's service counted $n packets in, not the connection's 10 or more"
  conn_close

  # 4. Control: without D2's backup daemon the same fail-over breaks.
  dadm_ok "$b" "$D2" --stop-daemon backup
  expect_daemon "$b" "$D2" none
  route_via $D1IP
  s0=$(sync_pkts "$D2")
  conn_open
  t1=$(ms)
  conn_rt 5
  assert_eq "$RT" "ok 5" "$CASE: control connection's round trips through D1 (client port $PORT)"
  # D1 still syncs it: wait for its datagram, which D2 now ignores.
  while [ "$(sync_pkts "$D2")" = "$s0" ] && [ $(( $(ms) - t1 )) -le 10000 ]; do sleep 0.2; done
  [ "$(sync_pkts "$D2")" != "$s0" ] || fail "$CASE: control: no sync datagram from D1 within 10 s"
  entry=$(conn_entry "$b" "$D2")
  assert_eq "$entry" "" "$CASE: control: D2's entry for $CIP:$PORT with no backup daemon"
  log "$CASE: control: D1's sync datagram reached D2 after $(( $(ms) - t1 )) ms, D2 does not list $CIP:$PORT"
  b2=$(vip_pkts "$D2")
  route_via $D2IP
  conn_rt 5
  log "$CASE: control: after the fail-over: $RT (D2 saw $(( $(vip_pkts "$D2") - b2 )) packets)"
  assert_eq "$RT" "fail 0 reset" "$CASE: control: a fail-over to a director without the backup daemon"
  conn_close

  # 5. The master stops.
  dadm_ok "$m" "$D1" --stop-daemon master
  expect_daemon "$m" "$D1" none
  log "case $ncase ($CASE) passed in $(( ($(ms) - t0) / 1000 )) s"
}

case "$ADM" in
  rvsadm)
    ipvs_beside_rvs rr
    failover_case rvsadm rvsadm
    failover_case rvsadm ipvsadm
    failover_case ipvsadm rvsadm
    ;;
  *) failover_case ipvsadm ipvsadm ;;
esac
pass "$ncase fail-over case(s): the backup listed the synced connection and carried it on; without the backup daemon it was reset"
