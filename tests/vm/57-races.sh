#!/bin/bash
# Races: everything that can change rvs's state at once, for
# $RVS_RACE_SECONDS (default 60) while a client streams connections
# through a NAT service:
#  - two writers add, edit and delete TCP and UDP services and real
#    servers from one small pool of addresses (so they collide), with
#    random schedulers and persistence: rvsadm in a loop, and
#    tests/py/race_ops.py (raw netlink, one process, so far more requests
#    than one exec per request allows under TCG);
#  - an admin loop flushes (-C), zeroes (-Z, also one service), sets
#    timeouts (--set) and puts the client's service back;
#  - two readers dump everything: rvsadm (-L -n, --stats, --rate, -c,
#    --timeout, --json, one service) and race_ops.py (GET_SERVICE,
#    GET_DEST, GET_CONN dumps, GET_INFO, GET_CONFIG, GET_SERVICE);
#  - a churn loop creates network namespaces, configures rvs in them,
#    sends traffic through them (a local client to a NAT service) and
#    deletes them, services and connections still in place;
#  - an unload loop tries rmmod rvs every few seconds: it must succeed or
#    fail with "in use"; after a success rvs.ko is loaded again.
# Lockdep, DEBUG_LIST and friends are on in the test kernel; tests/vm/run
# fails the test on any splat. Every rvsadm must end with status 0 or 1
# (never hang, crash or misparse). Afterwards -C leaves no service and no
# connection, and a fresh configuration balances round robin.
# The iteration counts are printed. rvs only (it unloads rvs.ko).
. "$(dirname "$0")/../lib.sh"

rvs_only
adm_init
mk_test_tmp
# The debug kernel (RVS_VM_DEBUG=1, qemu/run --debug) runs rvsadm several
# times slower; it races three times as long so that the floors below
# (work done in SECS seconds) still mean something there.
SECS=${RVS_RACE_SECONDS:-$([ "${RVS_VM_DEBUG:-0}" = 1 ] && echo 180 || echo 60)}
# rvsadm runs thousands of times: from the overlay in /tmp, not over 9p.
mkdir -p "$TEST_TMP/bin" && cp "$(command -v rvsadm)" "$TEST_TMP/bin/" || fail "cannot copy rvsadm"
export PATH=$TEST_TMP/bin:$PATH
topo_nat race 3
for i in 1 2 3; do serve_name_bg "${RS[$i]}" tcp 80 rs$i; done
for i in 1 2 3; do wait_listen "${RS[$i]}" tcp 80; done
adm_ok "$LB" -A -t $VIP:80 -s rr
for i in 1 2 3; do adm_ok "$LB" -a -t $VIP:80 -r ${RIP[$i]}:80 -m -w 1; done
expect_balance "$CL" tcp $VIP 80 3 "rs1:1 rs2:1 rs3:1" "before the races"

# For scale: one rvsadm listing on a quiet director.
t0=${EPOCHREALTIME/./}
ip netns exec "$LB" rvsadm -L -n >/dev/null || fail "rvsadm -L -n"
log "one 'ip netns exec ... rvsadm -L -n' before the races: $(( (${EPOCHREALTIME/./} - t0) / 1000 )) ms"

# What a racing rvsadm may be refused with: the object another writer just
# added or removed, the module unloaded (family gone, or a dump asked for
# while rmmod is under way). Anything else (a broken socket, a timeout,
# EINVAL) is a bug, not an expected refusal.
EXPECTED_RE='already exists|Scheduler not found|No such (service|destination|file|device|process)|Service not defined|rvs module not loaded|(Protocol|Operation) not supported'

# run_adm ID ARGS...: one rvsadm call, bounded; counts its outcome in the
# caller's ok/err/bad (status 0; 1 with an expected refusal; anything else).
run_adm() {
  local id=$1 rc t0=${EPOCHREALTIME/./} ms; shift
  timeout 30 rvsadm "$@" >/dev/null 2>"$ERRF"; rc=$?
  ms=$(( (${EPOCHREALTIME/./} - t0) / 1000 ))
  [ "$ms" -gt "$maxms" ] && maxms=$ms
  n=$((n + 1))
  case $rc in
    0) ok=$((ok + 1)) ;;
    1) if grep -Eq "$EXPECTED_RE" "$ERRF"; then err=$((err + 1)); else
         bad=$((bad + 1)); echo "# $id: rvsadm $* -> unexpected refusal: $(head -c 300 "$ERRF")" >&2; fi ;;
    *) bad=$((bad + 1)); echo "# $id: rvsadm $* -> exit $rc: $(head -c 300 "$ERRF")" >&2 ;;
  esac
}

# writer ID END STATFILE (in the director's namespace).
writer() {
  local id=$1 end=$2 st=$3 n=0 ok=0 err=0 bad=0 maxms=0 v r w s
  local scheds=(rr wrr lc wlc sed nq sh mh)
  ERRF=$st.err
  while [ "$EPOCHSECONDS" -lt "$end" ]; do
    v=10.0.100.$((RANDOM % 3 + 1)) r=10.0.1.$((RANDOM % 3 + 1)) w=$((RANDOM % 4)) s=${scheds[RANDOM % 8]}
    case $((RANDOM % 10)) in
      0) run_adm "$id" -A -t "$v:80" -s "$s" ;;
      1) run_adm "$id" -D -t "$v:80" ;;
      2 | 3) run_adm "$id" -a -t "$v:80" -r "$r:80" -m -w "$w" ;;
      4) run_adm "$id" -e -t "$v:80" -r "$r:80" -m -w "$((w + 1))" ;;
      5) run_adm "$id" -d -t "$v:80" -r "$r:80" ;;
      6) run_adm "$id" -E -t "$v:80" -s "$s" ;;
      7) run_adm "$id" -E -t "$v:80" -s "$s" -p 30 -M 255.255.255.0 ;;
      8) run_adm "$id" -A -u "$v:53" -s "$s" ;;
      9) run_adm "$id" -a -u "$v:53" -r "$r:53" -m ;;
    esac
  done
  echo "$n $ok $err $bad $maxms" >"$st"
}

# admin END STATFILE (in the director's namespace): flush, zero, timeouts,
# and the client's service put back.
admin() {
  local end=$1 st=$2 n=0 ok=0 err=0 bad=0 maxms=0 i
  ERRF=$st.err
  while [ "$EPOCHSECONDS" -lt "$end" ]; do
    case $((RANDOM % 10)) in
      0) run_adm admin -C ;;
      1 | 2) run_adm admin -Z ;;
      3) run_adm admin -Z -t 10.0.100.1:80 ;;
      4) run_adm admin --set $((RANDOM % 900 + 1)) $((RANDOM % 120 + 1)) 300 ;;
      *)
        run_adm admin -A -t 10.0.100.1:80 -s rr
        for i in 1 2 3; do run_adm admin -a -t 10.0.100.1:80 -r 10.0.1.$i:80 -m -w 1; done
        ;;
    esac
    sleep 0.2
  done
  echo "$n $ok $err $bad $maxms" >"$st"
}

# reader END STATFILE (in the director's namespace): every kind of dump.
reader() {
  local end=$1 st=$2 n=0 ok=0 err=0 bad=0 maxms=0
  ERRF=$st.err
  while [ "$EPOCHSECONDS" -lt "$end" ]; do
    case $((RANDOM % 8)) in
      0) run_adm reader -L -n ;;
      1) run_adm reader -L -n --stats --exact ;;
      2) run_adm reader -L -n --rate ;;
      3) run_adm reader -L -n -c ;;
      4) run_adm reader -L --timeout ;;
      5) run_adm reader -L -n --json ;;
      6) run_adm reader -L -n -c --json ;;
      7) run_adm reader -L -n -t 10.0.100.1:80 --stats ;;
    esac
  done
  echo "$n $ok $err $bad $maxms" >"$st"
}

# The client: connections to the VIP until $TEST_TMP/end says when to
# stop; answered / failed counts in $TEST_TMP/client. It and the netlink
# workers start first; the clock starts once the client has an answer and
# the workers are connected (python can take a minute to start in a VM on
# a loaded host).
ip netns exec "$CL" timeout $((SECS + 600)) python3 -c '
import os, socket, sys, time
vip, endf, out = sys.argv[1], sys.argv[2], sys.argv[3]
ok = err = 0
end = None
while end is None or time.time() < end:
    if end is None and os.path.exists(endf):
        end = float(open(endf).read() or 0)
    try:
        s = socket.create_connection((vip, 80), timeout=1)
        s.settimeout(1)
        if s.recv(64).startswith(b"rs"): ok += 1
        else: err += 1
        s.close()
    except OSError:
        err += 1
        time.sleep(0.05)
    with open(out + ".new", "w") as f: f.write("%d %d\n" % (ok, err))
    os.replace(out + ".new", out)
' "$VIP" "$TEST_TMP/end" "$TEST_TMP/client" </dev/null >/dev/null 2>&1 &
client=$!
bg_track $client
workers=($client)
funcs="EXPECTED_RE='$EXPECTED_RE'; $(declare -f run_adm writer admin reader)"
in_lb() { ip netns exec "$LB" bash -c "$funcs; $*" </dev/null & bg_track $!; workers+=($!); }
seed=${RVS_RACE_SEED:-$$}
log "race_ops.py seeds $seed (writer) and $((seed + 1)) (reader); RVS_RACE_SEED replays"
in_lb python3 "$RVS_ROOT/tests/py/race_ops.py" write "$TEST_TMP/end" $seed "$TEST_TMP/nlw"
in_lb python3 "$RVS_ROOT/tests/py/race_ops.py" read "$TEST_TMP/end" $((seed + 1)) "$TEST_TMP/nlr"
for i in $(seq 1 1500); do
  read -r cok _ 2>/dev/null <"$TEST_TMP/client"
  [ "${cok:-0}" -ge 1 ] && [ -e "$TEST_TMP/nlw.ready" ] && [ -e "$TEST_TMP/nlr.ready" ] && break
  kill -0 $client 2>/dev/null || fail "the client died"
  sleep 0.2
done
[ "${cok:-0}" -ge 1 ] || fail "the client got no answer before the races"
[ -e "$TEST_TMP/nlw.ready" ] && [ -e "$TEST_TMP/nlr.ready" ] || fail "race_ops.py did not start"
cok0=$cok

START=$EPOCHSECONDS
END=$((START + SECS))
echo "$END" >"$TEST_TMP/end.new" && mv "$TEST_TMP/end.new" "$TEST_TMP/end"
in_lb writer w1 $END "$TEST_TMP/w1"
in_lb admin $END "$TEST_TMP/admin"
in_lb reader $END "$TEST_TMP/reader"

# Namespace churn (initial namespace): namespace c<i> gets a veth to rs1,
# the VIP 10.99.<x>.1 on lo and a NAT service to rs1 (10.9.<x>.2); a
# local client connects three times (bash's /dev/tcp: no process per
# connection), and a client is still connecting while the namespace is
# deleted, its service and connections in place.
churn_ns() { # in the namespace: VIP RIP -> prints the number answered
  local vip=$1 rip=$2 k got=0 line
  rvsadm -A -t "$vip:80" -s rr && rvsadm -a -t "$vip:80" -r "$rip:80" -m || { echo fail; return; }
  for k in 1 2 3; do
    if exec 3<>"/dev/tcp/$vip/80"; then
      read -r -t 3 line <&3 && [ "$line" = rs1 ] && got=$((got + 1))
      exec 3<&-
    fi
  done
  echo "$got"
  (for k in $(seq 1 30); do exec 3<>"/dev/tcp/$vip/80" && exec 3<&-; done) </dev/null >/dev/null 2>&1 &
}
churn() {
  local end=$1 st=$2 i=0 made=0 served=0 cfgfail=0 x ns got
  local f; f="$(declare -f churn_ns)"
  while [ "$EPOCHSECONDS" -lt "$end" ]; do
    i=$((i + 1)) x=$(( (i % 250) + 1 ))
    ns=$NS_PREFIX-c$i
    echo "$ns" >>"$TEST_TMP/churn.list"
    printf 'netns add %s\nlink add c0 netns %s type veth peer name ch%s netns %s\n' \
      "$ns" "$ns" "$i" "${RS[1]}" | ip -batch - || { echo "# churn: cannot create $ns" >&2; break; }
    ip -n "$ns" -batch - <<IP
link set lo up
link set c0 up
addr add 10.9.$x.1/24 dev c0
addr add 10.99.$x.1/32 dev lo
IP
    ip -n "${RS[1]}" -batch - <<IP
link set ch$i up
addr add 10.9.$x.2/24 dev ch$i
route add 10.99.$x.1/32 via 10.9.$x.1 dev ch$i
IP
    made=$((made + 1))
    got=$(timeout 60 ip netns exec "$ns" bash -c "$f; churn_ns 10.99.$x.1 10.9.$x.2" 2>/dev/null)
    case $got in
      [0-9]*) served=$((served + got)) ;;
      *) cfgfail=$((cfgfail + 1)) ;; # rvs was unloaded at that moment
    esac
    ip netns del "$ns"
  done
  echo "$made $served $cfgfail" >"$st"
}
churn $END "$TEST_TMP/churn" &
bg_track $!; workers+=($!)
at_exit 'for n in $(cat "$TEST_TMP/churn.list" 2>/dev/null); do ip netns del "$n" 2>/dev/null; done'

# Unload attempts (initial namespace), the first after 5 s, then every 8 s.
unloader() {
  local end=$1 st=$2 tries=0 unloaded=0 busy=0 bad=0 out t0
  sleep 5
  while [ "$EPOCHSECONDS" -lt "$((end - 5))" ]; do
    tries=$((tries + 1))
    t0=$EPOCHSECONDS
    if out=$(timeout 60 rmmod rvs 2>&1); then
      unloaded=$((unloaded + 1))
      echo "# unloader: rmmod took $((EPOCHSECONDS - t0)) s" >&2
      sleep 0.5
      insmod "$RVS_ROOT/rvs.ko" || { echo "# unloader: insmod failed" >&2; bad=$((bad + 1)); break; }
    # "Resource temporarily unavailable" (EAGAIN from delete_module) is
    # "in use" too: kmod saw no users, but a netlink dump had taken a
    # reference on the module by the time the kernel tried to stop it.
    elif grep -Eiq 'in use|busy|temporarily unavailable' <<<"$out"; then
      busy=$((busy + 1))
    else
      echo "# unloader: rmmod failed oddly: $out" >&2
      bad=$((bad + 1))
    fi
    sleep 8
  done
  echo "$tries $unloaded $busy $bad" >"$st"
}
unloader $END "$TEST_TMP/unload" &
bg_track $!; workers+=($!)

log "racing for $SECS s"
for p in "${workers[@]}"; do wait "$p"; done
log "races over after $((EPOCHSECONDS - START)) s"
rvs_loaded || insmod "$RVS_ROOT/rvs.ko" || fail "rvs.ko not loaded after the races and insmod failed"

for w in w1 admin reader nlw nlr client churn unload; do
  [ -s "$TEST_TMP/$w" ] || fail "worker $w left no statistics (did it die?)"
done
stat_of() { cat "$TEST_TMP/$1"; }
bad_total=0
for w in w1 admin reader nlw nlr; do
  read -r n ok err bad maxms < <(stat_of $w)
  case $w in nl*) what="netlink requests (race_ops.py)" ;; *) what="rvsadm calls" ;; esac
  log "$w: $n $what: $ok ok, $err refused (exists/missing/unloaded), $bad bad; slowest $maxms ms"
  bad_total=$((bad_total + bad))
done
read -r cok cerr < <(stat_of client)
log "client: $((cok - cok0)) connections answered during the races, $cerr failed (flushes, deletions, unloads)"
read -r made served cfgfail < <(stat_of churn)
log "churn: $made namespaces created and deleted, $served/$((3 * (made - cfgfail))) local connections answered, $cfgfail not configured (rvs unloaded)"
read -r tries unloaded busy ubad < <(stat_of unload)
log "rmmod: $tries attempts, $unloaded unloaded and reloaded, $busy refused as in use"
[ "$bad_total" = 0 ] || fail "$bad_total requests hung, crashed, or were refused with an unexpected errno / exit status"
[ "$ubad" = 0 ] || fail "rmmod/insmod failed in an unexpected way"
[ "$cok" -gt "$cok0" ] || fail "no client connection was answered during the races"
[ "$made" -gt 0 ] && [ "$served" -gt 0 ] || fail "the namespace churn carried no traffic"
[ "$tries" -gt 0 ] || fail "no unload was attempted"
# Enough work that a run proves something (a loaded TCG guest manages
# ~40 rvsadm calls per worker, ~6,000 raw requests, 7 namespaces, 4 unloads
# in 60 s; the floors are a quarter of that or less).
floor() { [ "$2" -ge "$3" ] || fail "too little work: $1 = $2 (at least $3 expected in $SECS s)"; }
for w in w1 admin reader; do read -r n ok _ < <(stat_of $w); floor "$w rvsadm calls" "$n" 10; floor "$w successful calls" "$ok" 1; done
for w in nlw nlr; do read -r n ok _ < <(stat_of $w); floor "$w netlink requests" "$n" 500; floor "$w successful requests" "$ok" 100; done
floor "client connections answered" $((cok - cok0)) 5
floor "namespaces churned" "$made" 2
floor "unloads" "$unloaded" 1

# Afterwards: flush leaves nothing; a fresh configuration balances.
adm_ok "$LB" -C
left=$(adm "$LB" -L -n | tail -n +4)
[ -z "$left" ] || fail "services left after -C: $left"
left=$(adm "$LB" -L -n -c | tail -n +3)
[ -z "$left" ] || fail "connections left after -C: $left"
adm_ok "$LB" --set 900 120 300
adm_ok "$LB" -A -t $VIP:80 -s rr
for i in 1 2 3; do adm_ok "$LB" -a -t $VIP:80 -r ${RIP[$i]}:80 -m -w 1; done
expect_balance "$CL" tcp $VIP 80 6 "rs1:2 rs2:2 rs3:2" "after the races"
pass "$((SECS)) s of races: no splat, no bad rvsadm status, clean flush, balancing again"
