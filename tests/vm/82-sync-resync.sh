#!/bin/bash
# Full resynchronisation (an rvs extension of IPVS's sync protocol) keeps
# established connections across keepalived's failback. 81-sync's
# topology: one LAN (a bridge in namespace sw) joins a client, two DR
# directors and a real server; a veth pair joins the directors for the
# sync multicast (224.0.0.81 port 8848, TTL 1):
#
#   client c0 10.0.0.2 ---+--- l0 10.0.0.11 D1 (VIP on lo) s0 10.82.0.1 --+
#   route VIP via D1,     +--- l0 10.0.0.12 D2 (VIP on lo) s0 10.82.0.2 --+
#   then D2, then D1      +--- f0 10.0.0.3  RS (VIP on lo, no ARP for it;
#                                             echoes; answers the client
#                                             directly)
#
# Both directors have the service VIP:80 (rr, RS by -g), daemons on s0
# with syncid 82. The switch counts the client's packets for the VIP to
# each director's MAC (nft, netdev ingress). Each case:
#  1. D1 master, D2 backup. Connection C1 (tests/py/longconn.py) makes 5
#     round trips through D1 (10 packets: synced once, at its 3rd); D2
#     lists it (normal sync).
#  2. D1 fails and loses its table: its master stops and -C drops its
#     service and connections (-L -n -c is empty after it: rvs only, IPVS
#     keeps connections through -C). D2 stops its backup and starts a
#     master; the client's route moves to D2; C1 makes 5 round trips
#     through D2. C2 opens through D2 and makes 5 round trips; its one
#     record (at its 3rd packet) reaches D1, which has no daemon then
#     (an nft counter on D1 sees the datagram; on rvs D2's master counted
#     the record sent). Neither connection is sent again before its 50th
#     packet.
#  3. D1 comes back: re-adds its service and real server, starts a backup
#     daemon, which asks for the masters' tables. Within 10 s:
#     - with resync (the default, -L --options shows sync_resync 1): D1
#       lists C1 and C2 ESTABLISHED to RS; D2's kernel log says once "a
#       backup asked for the whole table: 2 connections sent", and D2's
#       master counted exactly those 2 records since D1's backup started
#       (so C2 came in the resync: nothing else was sent); D1's backup
#       applied them (conns 2, refused 0);
#     - control, sync_resync=0 on both directors (IPVS's protocol alone):
#       D1 does not list C2 in the same 10 s, and nothing asked for or
#       sent a table.
#  4. Failback: D1's backup stops and its master starts; D2's master stops
#     and its backup starts; the route moves back to D1. Each connection
#     makes 5 round trips: with resync both succeed through D1 (D1 got the
#     packets of each, D2 none), and D2's new backup got D1's table the
#     same way (once: 2 connections); in the control C2 is reset (D1 has
#     no entry, the mid-stream segment goes to its own stack, which resets
#     it: sloppy_tcp=0). C1's fate in the control is logged, not asserted
#     (rvs: reset, its entry went with -C; IPVS: carried on by D1's own
#     entry, which -C left).
# The rvs pass runs both cases at once, each in its own namespaces (most
# of a case waits: on the master's 2 s flush, on the 10 s window), and
# prints each case's log whole when both have ended, every line with the
# case's time. The IPVS pass (RVS_ADM=ipvsadm) runs the control only,
# IPVS having no full resync: it must lose C2 the same way, so the test
# is not rvs-only in parity.list. Each case ends with a line of the
# connections kept and lost and how long D1 took to list each after its
# backup started.
. "$(dirname "$0")/../lib.sh"
adm_init rr
command -v nft >/dev/null || fail "nft not installed (qemu/install-deps installs it)"
command -v socat >/dev/null || fail "socat not installed (qemu/install-deps installs it)"
mk_test_tmp
VIP=10.0.100.1 CIP=10.0.0.2 RIP=10.0.0.3 D1IP=10.0.0.11 D2IP=10.0.0.12
SYNCID=82 MAC1=02:00:0a:00:00:0b MAC2=02:00:0a:00:00:0c
# How long D1's new backup has to list the connections (its requests go
# out at 0, 2 and 4 s).
WAIT=10
TABLE_SENT="a backup asked for the whole table"

ms() { echo $(( $(date +%s%N) / 1000000 )); }

# sync_ns TAG: the namespaces above, named TAG-*: sets SW CL D1 D2 RS.
# (Made by the test's shell, which deletes them at exit; sync_topo, in a
# case's, joins them.)
sync_ns() {
  newns SW "$1-sw"; newns CL "$1-cl"; newns D1 "$1-d1"; newns D2 "$1-d2"; newns RS "$1-rs"
}
# sync_topo: the links and addresses above. The switch counts what it
# delivers to each director for the VIP, each director the sync datagrams
# that reach it (nft counter "sync"); RS runs an echo server on port 80.
sync_topo() {
  local d
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
  # What the client sends each director for the VIP, counted as it
  # enters the switch (by the director's MAC: the frames the bridge
  # delivers to that director; one nft process reads both counters).
  ip netns exec "$SW" nft -f - <<NFT || fail "nft setup in ${SW#$NS_PREFIX-}"
table netdev vip {
  counter d1 {}
  counter d2 {}
  chain in {
    type filter hook ingress device swc priority 0; policy accept;
    ether daddr $MAC1 ip daddr $VIP tcp dport 80 counter name d1
    ether daddr $MAC2 ip daddr $VIP tcp dport 80 counter name d2
  }
}
NFT
  vethns "$D1" s0 "$D2" s0
  nsip "$CL" <<IP
link set c0 up
addr add $CIP/24 dev c0
route add $VIP/32 via $D1IP
IP
  nsip "$D1" <<IP
link set l0 address $MAC1
link set l0 up
addr add $D1IP/24 dev l0
addr add $VIP/32 dev lo
addr add 10.82.0.1/24 dev s0
IP
  nsip "$D2" <<IP
link set l0 address $MAC2
link set l0 up
addr add $D2IP/24 dev l0
addr add $VIP/32 dev lo
addr add 10.82.0.2/24 dev s0
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
NFT
  done
  ip netns exec "$RS" socat TCP-LISTEN:80,fork,reuseaddr PIPE </dev/null >/dev/null 2>&1 &
  bg_track $!
}

# vip_pkts: "D1 D2", the packets for the VIP the switch delivered to each.
vip_pkts() {
  ip netns exec "$SW" nft list table netdev vip |
    awk '$1 == "counter" {c = $2} $1 == "packets" {v[c] = $2} END {print v["d1"] + 0, v["d2"] + 0}'
}
sync_pkts() { nft_counter "$1" ip sync sync; }
route_via() { ip -n "$CL" route replace $VIP/32 via "$1" || fail "$CASE: ip route replace $VIP via $1"; }
name() { case $1 in "$D1") echo D1 ;; "$D2") echo D2 ;; *) echo "${1#$NS_PREFIX-}" ;; esac; }

# daemon NS start|stop master|backup
daemon() {
  case $2 in
    start) adm_ok "$1" --start-daemon "$3" --mcast-interface s0 --syncid $SYNCID ;;
    stop) adm_ok "$1" --stop-daemon "$3" ;;
  esac
}

# service NS: the service and its real server (one -R: each admin
# command costs a process start, slow under TCG).
service() {
  local out
  log "[${1#$NS_PREFIX-}] $ADM -R: -A -t $VIP:80 -s rr; -a -t $VIP:80 -r $RIP:80 -g"
  out=$(printf '%s\n' "-A -t $VIP:80 -s rr" "-a -t $VIP:80 -r $RIP:80 -g" | adm "$1" -R 2>&1) ||
    fail "$CASE: $ADM -R in $(name "$1") failed: $out"
}

# daemons NS: -L --daemon --json in NS (rvs only). counter JSON ROLE
# FIELD: a counter of the daemon of ROLE in that output, or nothing if not
# there (resyncs may not be yet). counters JSON ROLE: all of them, for the
# log.
daemons() { adm "$1" -L --daemon --json 2>/dev/null; }
counter() { grep -o "\"state\":\"$2\"[^}]*" <<<"$1" | grep -o "\"$3\":[0-9]*" | cut -d: -f2; }
counters() {
  grep -o "\"state\":\"$2\"[^}]*" <<<"$1" |
    grep -o '"\(msgs\|conns\|refused\|lost\|resyncs\)":[0-9]*' | tr -d '"' | tr ':\n' '= ' | sed 's/ $//'
}

# Long-lived connections (tests/py/longconn.py), several at once, each
# driven through a pair of FIFOs: lc_start NAME starts a client (python
# starts slowly under TCG: early, while the test does other things);
# lc_open NAME has it open its connection to VIP:80 (its client port in
# PORT[NAME]); lc_rt NAME N makes N round trips on it, the outcome in RT
# ("ok N" or "fail K REASON"); lc_close NAME ends it.
declare -A PORT=() LCW=() LCR=() LCPID=()
lc_start() {
  local n=$1 w r f="$TEST_TMP/${CL#$NS_PREFIX-}-$1"
  mkfifo "$f.in" "$f.out" || fail "mkfifo in $TEST_TMP"
  # Opened read-write, FIFOs never block the opener. The client keeps
  # none of this shell's ends (else its stdin would never end).
  exec {w}<>"$f.in" {r}<>"$f.out"
  (
    for fd in $w $r "${LCW[@]}" "${LCR[@]}"; do exec {fd}>&-; done
    exec ip netns exec "$CL" python3 "$RVS_ROOT/tests/py/longconn.py" $VIP 80 later
  ) <"$f.in" >"$f.out" 2>/dev/null &
  LCPID[$n]=$! LCW[$n]=$w LCR[$n]=$r
}
lc_open() {
  local n=$1 out
  echo connect >&"${LCW[$n]}"
  read -r -t 30 out <&"${LCR[$n]}" || fail "$CASE: $n: the client did not start"
  case $out in "open "*) PORT[$n]=${out#open } ;; *) fail "$CASE: $n: connection to $VIP:80: $out" ;; esac
}
lc_rt() {
  echo "$2" >&"${LCW[$1]}"
  read -r -t $(( $2 + 15 )) RT <&"${LCR[$1]}" || RT="fail ? no-answer"
}
lc_close() {
  local n=$1 w=${LCW[$1]:-} r=${LCR[$1]:-}
  [ -n "$w" ] || return 0
  # Its stdin ends when the last writer (this shell) closes it.
  exec {w}>&- {r}<&-
  # It ends after its batch (3 s at most a round trip).
  local _
  for _ in $(seq 1 100); do kill -0 "${LCPID[$n]}" 2>/dev/null || break; sleep 0.2; done
  kill "${LCPID[$n]}" 2>/dev/null
  wait "${LCPID[$n]}" 2>/dev/null
  unset "LCW[$n]" "LCR[$n]"
}
lc_close_all() { local n; for n in "${!LCW[@]}"; do lc_close "$n"; done; }
# A failed step leaves clients waiting for their next batch: let them end
# (rather than be killed with the namespaces' processes).
at_exit lc_close_all

# entry NS NAME: NS's entry for connection NAME as "STATE DEST", or nothing.
entry() {
  adm "$1" -L -n -c | awk -v c="$CIP:${PORT[$2]}" '$4 == c {print $3, $6; exit}'
}
# entry_in LISTING NAME: the same, from a -L -n -c listing.
entry_in() { awk -v c="$CIP:${PORT[$2]}" '$4 == c {print $3, $6; exit}' <<<"$1"; }

# through NS NAME N: N round trips on NAME must succeed, through NS alone.
through() {
  local ns=$1 other=$D2 a b before after
  [ "$ns" = "$D1" ] || other=$D1
  before=$(vip_pkts)
  lc_rt "$2" "$3"
  after=$(vip_pkts)
  set -- "$@" $before $after
  # $4 $5: D1 D2 before; $6 $7: after.
  if [ "$ns" = "$D1" ]; then a=$(( $6 - $4 )) b=$(( $7 - $5 )); else a=$(( $7 - $5 )) b=$(( $6 - $4 )); fi
  log "$CASE: $2 (port ${PORT[$2]}): $RT through $(name "$ns") ($(name "$ns") saw $a packets, $(name "$other") $b)"
  assert_eq "$RT" "ok $3" "$CASE: $2's round trips through $(name "$ns")"
  [ "$a" -ge "$3" ] && [ "$b" = 0 ] || fail "$CASE: $2 did not go through $(name "$ns") alone"
}

# after MS: "listed after MS ms", or "not listed" if MS is empty.
after() { if [ -n "$1" ]; then echo "listed after $1 ms"; else echo "not listed"; fi; }

# table_lines MARK: the master's "whole table" lines since MARK.
table_lines() { dmesg_since "$1" | grep -o "$TABLE_SENT.*"; }
# table_delay MARK: milliseconds from the last backup start logged since
# MARK to the first whole table sent after it, by the kernel's clock
# (what -L -n -c polled under TCG cannot measure). Informational: the
# lines name no namespace, the other case's backup may start between.
table_delay() {
  dmesg_since "$1" | awk -v sent="$TABLE_SENT" '
    function ts(l) { sub(/^\[ */, "", l); sub(/\].*/, "", l); return l + 0 }
    /sync: backup daemon started/ {b = ts($0)}
    index($0, sent) && b != "" {printf "%d", (ts($0) - b) * 1000; exit}'
}

# failback_case 1|0 N: case N, the scenario with full resync (1) or
# without (0: on rvs sync_resync=0; IPVS has none), in sync_topo's
# namespaces (SW CL D1 D2 RS).
failback_case() {
  local resync=$1 ncase=$2 t0 t1 tb d s0 out mark lines sent=0 n c1 c2 j1 j2 t_c1='' t_c2='' kept='' lost='' rvs=0
  [ "$ADM" = rvsadm ] && rvs=1
  if [ "$resync" = 1 ]; then CASE="resync"
  elif [ $rvs = 1 ]; then CASE="control (sync_resync=0)"
  else CASE="control (IPVS)"; fi
  t0=$(ms)
  log "case $ncase: $CASE"
  sync_topo
  # After sync_topo: its echo server must not inherit the clients' FIFOs.
  lc_start C1
  lc_start C2
  for d in "$D1" "$D2"; do
    if [ $rvs = 1 ]; then
      [ "$resync" = 1 ] || adm_ok "$d" --set-option sync_resync=0
      out=$(adm "$d" -L --options | awk '$1 == "sync_resync" {print $2}')
      assert_eq "$out" "$resync" "$CASE: sync_resync on $(name "$d")"
    fi
    service "$d"
  done
  wait_listen "$RS" tcp 80

  # 1. D1 master, D2 backup; C1 through D1, synced to D2.
  daemon "$D1" start master
  daemon "$D2" start backup
  lc_open C1
  t1=$(ms)
  through "$D1" C1 5
  until out=$(entry "$D2" C1) && [ -n "$out" ]; do
    [ $(( $(ms) - t1 )) -le 10000 ] || fail "$CASE: D2 does not list C1 (port ${PORT[C1]}) 10 s after it opened"
    # (Every process costs: under TCG the guest's one CPU is the limit.)
    sleep 0.5
  done
  assert_eq "$out" "ESTABLISHED $RIP:80" "$CASE: D2's entry for C1"
  log "$CASE: D2 lists C1 $(( $(ms) - t1 )) ms after it opened: $out"

  # 2. D1 fails and loses its table; D2 takes over as master.
  daemon "$D1" stop master
  adm_ok "$D1" -C
  out=$(adm "$D1" -L -n -c | awk '$1 == "TCP"' | wc -l)
  if [ $rvs = 1 ]; then
    assert_eq "$out" 0 "$CASE: connections D1 lists after -C"
  else
    log "$CASE: D1 lists $out connection(s) after -C (IPVS keeps them until they expire)"
  fi
  daemon "$D2" stop backup
  daemon "$D2" start master
  route_via $D2IP
  through "$D2" C1 5
  s0=$(sync_pkts "$D1")
  lc_open C2
  t1=$(ms)
  through "$D2" C2 5
  # C2's record (its 3rd packet) reaches D1 while D1 runs no daemon (on
  # rvs D2's master counted it sent).
  until [ "$(sync_pkts "$D1")" != "$s0" ]; do
    [ $(( $(ms) - t1 )) -le 10000 ] || fail "$CASE: no sync datagram reached D1 within 10 s of C2's opening"
    sleep 0.5
  done
  out=
  if [ $rvs = 1 ]; then
    until j2=$(daemons "$D2") && [ "$(counter "$j2" master conns)" -ge 1 ] 2>/dev/null; do
      [ $(( $(ms) - t1 )) -le 10000 ] || fail "$CASE: D2's master sent no record within 10 s of C2's opening ($(counters "$j2" master))"
      sleep 0.2
    done
    out=" (D2's master: $(counters "$j2" master))"
  fi
  log "$CASE: C2's record reached D1 (no daemon there) $(( $(ms) - t1 )) ms after C2 opened$out"

  # 3. D1 comes back as backup.
  service "$D1"
  [ $rvs = 0 ] || sent=$(counter "$(daemons "$D2")" master conns)
  mark=$(kmsg_mark)
  tb=$(ms)
  daemon "$D1" start backup
  while [ $(( $(ms) - tb )) -le $(( WAIT * 1000 )) ]; do
    out=$(adm "$D1" -L -n -c)
    c1=$(entry_in "$out" C1) c2=$(entry_in "$out" C2)
    [ -z "$t_c1" ] && [ -n "$c1" ] && t_c1=$(( $(ms) - tb ))
    [ -z "$t_c2" ] && [ -n "$c2" ] && t_c2=$(( $(ms) - tb ))
    # Only the resync case may stop early; the control waits it out,
    # looking less often (a synced entry stays: only when it comes in
    # matters).
    if [ "$resync" = 1 ]; then
      [ -n "$t_c1" ] && [ -n "$t_c2" ] && break
      sleep 0.25
    else
      sleep 2
    fi
  done
  out=
  [ $rvs = 1 ] || [ -z "$t_c1" ] || out=" (C1: D1's own entry, which -C left)"
  log "$CASE: D1's backup started: C1 $(after "$t_c1"), C2 $(after "$t_c2") (waited up to $WAIT s)$out"
  if [ "$resync" = 1 ]; then
    [ -n "$t_c1" ] && [ -n "$t_c2" ] || {
      adm "$D1" -L -n -c | sed 's/^/#   D1: /' >&2
      fail "$CASE: D1 does not list both connections $WAIT s after its backup started (D1's backup: $(counters "$(daemons "$D1")" backup); D2's master: $(counters "$(daemons "$D2")" master))"
    }
    assert_eq "$c1" "ESTABLISHED $RIP:80" "$CASE: D1's entry for C1"
    assert_eq "$c2" "ESTABLISHED $RIP:80" "$CASE: D1's entry for C2"
  else
    assert_eq "$c2" "" "$CASE: D1's entry for C2, $WAIT s after its backup started"
  fi
  if [ $rvs = 1 ]; then
    j1=$(daemons "$D1") j2=$(daemons "$D2")
    n=$(( $(counter "$j2" master conns) - sent ))
    log "$CASE: D2's master since D1's backup started: $n record(s) sent; now $(counters "$j2" master); D1's backup: $(counters "$j1" backup)"
    if [ "$resync" = 1 ]; then
      lines=$(table_lines "$mark")
      log "$CASE: kernel log: $(printf '%s' "$lines" | tr '\n' ';') ($(table_delay "$mark") ms after the backup's start)"
      assert_eq "$lines" "$TABLE_SENT: 2 connections sent" \
        "$CASE: D2's kernel log after D1's backup started"
      assert_eq "$n" 2 "$CASE: records D2's master sent after D1's backup started (the whole table, C1 and C2)"
      assert_eq "$(counter "$j1" backup conns)" 2 "$CASE: records D1's backup applied"
      assert_eq "$(counter "$j1" backup refused)" 0 "$CASE: records D1's backup refused"
      out=$(counter "$j2" master resyncs)
      [ -z "$out" ] || assert_eq "$out" 1 "$CASE: whole tables D2's master sent (resyncs)"
    else
      # (Not the kernel log, whose lines name no namespace: the resync
      # case runs meanwhile.)
      assert_eq "$n" 0 "$CASE: records D2's master sent after D1's backup started"
      assert_eq "$(counter "$j1" backup conns)" 0 "$CASE: records D1's backup applied"
      for out in "$(counter "$j1" backup resyncs)" "$(counter "$j2" master resyncs)"; do
        [ -z "$out" ] || assert_eq "$out" 0 "$CASE: resyncs counted with sync_resync=0"
      done
    fi
  fi

  # 4. Failback to D1.
  mark=$(kmsg_mark)
  daemon "$D1" stop backup
  daemon "$D1" start master
  daemon "$D2" stop master
  daemon "$D2" start backup
  route_via $D1IP
  if [ "$resync" = 1 ]; then
    through "$D1" C1 5
    through "$D1" C2 5
    kept="C1 C2"
  else
    lc_rt C2 5
    log "$CASE: C2 (port ${PORT[C2]}) after the failback: $RT"
    assert_eq "$RT" "fail 0 reset" "$CASE: C2 after the failback to D1 without full resync"
    lost=C2
    lc_rt C1 5
    log "$CASE: C1 (port ${PORT[C1]}) after the failback: $RT"
    if [ "$RT" = "ok 5" ]; then kept=C1; else kept=; lost="C1 C2"; fi
  fi
  if [ $rvs = 1 ]; then
    j1=$(daemons "$D1") j2=$(daemons "$D2")
    log "$CASE: after the failback: D1's master: $(counters "$j1" master); D2's backup: $(counters "$j2" backup)"
    if [ "$resync" = 1 ]; then
      # D2's new backup asked D1's new master for its table: C1 and C2,
      # once (nothing else sends them: far from their 50th packet).
      lines=$(table_lines "$mark")
      log "$CASE: kernel log: $(printf '%s' "$lines" | tr '\n' ';') ($(table_delay "$mark") ms after the backup's start)"
      assert_eq "$lines" "$TABLE_SENT: 2 connections sent" "$CASE: D1's kernel log after D2's backup started"
      assert_eq "$(counter "$j2" backup conns)" 2 "$CASE: records D2's backup applied after the failback"
      out=$(counter "$j1" master resyncs)
      [ -z "$out" ] || assert_eq "$out" 1 "$CASE: whole tables D1's master sent (resyncs)"
    fi
  fi
  lc_close C1
  lc_close C2
  log "case $ncase ($CASE): kept ${kept:-none}, lost ${lost:-none}; on D1 C1 $(after "$t_c1"), C2 $(after "$t_c2") (of $WAIT s); passed in $(( ($(ms) - t0) / 1000 )) s"
}

# run_cases RESYNC...: one failback_case each, in their own namespaces,
# all at once (a case mostly waits: on the master's 2 s flush, on the
# control's 10 s); each case's log is printed whole once all have ended.
run_cases() {
  local i r rc=0 pids=() topo=()
  for i in $(seq 1 $#); do
    sync_ns "k$i"
    topo[i]="$SW $CL $D1 $D2 $RS"
  done
  i=0
  for r in "$@"; do
    i=$((i + 1))
    (
      # Each line says when, in the case's time.
      T0=$(ms)
      log() { local t=$(( $(ms) - T0 )); printf '# %3d.%d s  %s\n' $((t / 1000)) $((t % 1000 / 100)) "$*" >&2; }
      read -r SW CL D1 D2 RS <<<"${topo[i]}"
      failback_case "$r" $i
    ) >"$TEST_TMP/case$i.log" 2>&1 &
    pids[i]=$!
  done
  for i in "${!pids[@]}"; do
    wait "${pids[i]}" || rc=$i
  done
  for i in "${!pids[@]}"; do cat "$TEST_TMP/case$i.log" >&2; done
  [ "$rc" = 0 ] || fail "case $rc failed (above)"
}

if [ "$ADM" = rvsadm ]; then
  run_cases 1 0
  pass "failback: with full resync D1's new backup listed both connections and carried them on; without (sync_resync=0) it lost the one opened while it was away"
else
  run_cases 0
  pass "failback on IPVS (no full resync): D1's new backup did not learn the connection opened while it was away, which was reset"
fi
