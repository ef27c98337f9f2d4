#!/bin/bash
# rvsadm --monitor: each configuration change of a network namespace,
# printed as it happens as the rvsadm command that makes it (issue 20
# item 4; rvsadm(8), MONITORING). Director namespace LB, another one X:
#  1. a change made before a monitor starts is not printed; monitors in LB
#     (plain; --json --timestamp) print exactly one line per change that
#     rvsadm makes there, in order: services (-A -E -D, IPv6, firewall
#     marks, local addresses), real servers (-a -e -d: NAT, tunnel,
#     FullNAT, drain), --flush-conns, -Z, --set, --set-option,
#     --start-daemon, --stop-daemon, -C; refused commands print nothing;
#     a monitor in X prints none of them; SIGTERM and SIGINT end a monitor
#     with status 0;
#  2. uid 65534, and root without CAP_NET_ADMIN, cannot monitor LB (exit
#     1, a message naming CAP_NET_ADMIN); uid 65534 in a namespace of its
#     own (unshare -Urn) can, and sees its own change;
#  3. rmmod rvs: a running monitor says the module is gone, exit 1;
#  4. the real ipvsadm on rvs.ko loaded with ipvs_compat=1: what it
#     changes through the "IPVS" family is printed by rvsadm --monitor
#     too, in rvsadm's form.
# rvs-only: IPVS has no group announcing changes (tests/vm/parity.list).
. "$(dirname "$0")/../lib.sh"

rvs_only
adm_init
mk_test_tmp
command -v ipvsadm >/dev/null || fail "ipvsadm not installed (qemu/install-deps installs it)"
command -v capsh >/dev/null || fail "capsh missing (libcap2-bin; qemu/install-deps installs it)"
command -v setpriv >/dev/null && command -v unshare >/dev/null || fail "setpriv/unshare missing (util-linux)"

newns LB lb
newns X x
# eth1 for the sync daemon, with the FullNAT local addresses.
nsip "$LB" <<IP
link add eth1 type veth peer name eth1p
link set eth1 up
link set eth1p up
addr add 10.81.0.1/24 dev eth1
addr add 10.0.2.1/24 dev eth1
addr add 10.0.2.2/24 dev eth1
IP

# A probe: a change that changes nothing (all timeouts left as they are),
# repeated until a new monitor shows it, so that the monitor is known to
# listen; its lines are left out of what the monitors are checked against.
PROBE=(--set 0 0 0)
PROBE_TEXT=${PROBE[*]}
PROBE_JSON='"timeout":{"tcp":0,"tcpfin":0,"udp":0}'

declare -A MON
# mon_start NS NAME [WRAPPER...] -- [ARGS...]: runs rvsadm --monitor ARGS
# in NS in the background (through WRAPPER, if any), its output in
# $TEST_TMP/NAME.out, its errors in NAME.err, its pid in MON[NAME];
# returns once it prints.
mon_start() {
  local ns=$1 name=$2 i wrap=(); shift 2
  while [ $# -gt 0 ] && [ "$1" != -- ]; do wrap+=("$1"); shift; done
  [ "${1:-}" = -- ] && shift
  ip netns exec "$ns" "${wrap[@]}" rvsadm --monitor "$@" \
    >"$TEST_TMP/$name.out" 2>"$TEST_TMP/$name.err" </dev/null &
  MON[$name]=$!
  bg_track $!
  for i in $(seq 1 50); do
    ip netns exec "$ns" rvsadm "${PROBE[@]}" || fail "probe '$PROBE_TEXT' in ${ns#$NS_PREFIX-} failed"
    sleep 0.2
    grep -q -F -e "$PROBE_TEXT" -e "$PROBE_JSON" "$TEST_TMP/$name.out" && { log "monitor $name listens"; return 0; }
    kill -0 "${MON[$name]}" 2>/dev/null ||
      fail "rvsadm --monitor $* in ${ns#$NS_PREFIX-} exited: $(cat "$TEST_TMP/$name.err")"
  done
  fail "rvsadm --monitor $* in ${ns#$NS_PREFIX-} printed no probe in 10 s: $(cat "$TEST_TMP/$name.out" "$TEST_TMP/$name.err")"
}
# changes NAME: what monitor NAME printed, without the probes.
changes() { grep -v -F -e "$PROBE_TEXT" -e "$PROBE_JSON" "$TEST_TMP/$1.out"; }
# mon_wait NAME N: waits (up to 10 s) until monitor NAME printed N changes.
mon_wait() {
  local i
  for i in $(seq 1 100); do
    [ "$(changes "$1" | wc -l)" -ge "$2" ] && return 0
    sleep 0.1
  done
  log "monitor $1 printed:"; changes "$1" | sed 's/^/#   /' >&2
  fail "monitor $1 printed $(changes "$1" | wc -l) changes in 10 s, expected $2"
}
# mon_stop NAME SIGNAL: sends SIGNAL to monitor NAME, which must exit 0
# within 5 s and print nothing on standard error.
mon_stop() {
  local pid=${MON[$1]} i rc
  kill "-$2" "$pid" || fail "monitor $1 is not running"
  for i in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && fail "monitor $1 still runs 5 s after SIG$2"
  wait "$pid"; rc=$?
  assert_eq "$rc" 0 "exit status of monitor $1 after SIG$2"
  assert_eq "$(cat "$TEST_TMP/$1.err")" "" "standard error of monitor $1"
}
# expect_changes NAME WANT LABEL: monitor NAME's changes are exactly WANT.
expect_changes() {
  local got
  got=$(changes "$1")
  [ "$got" = "$2" ] || {
    log "expected:"; printf '%s\n' "$2" | sed 's/^/#   /' >&2
    log "monitor $1 printed:"; printf '%s\n' "$got" | sed 's/^/#   /' >&2
    fail "$3"
  }
}

# --- 1. rvsadm's changes. ---------------------------------------------------
adm_ok "$LB" -A -t 10.0.100.9:80 -s rr   # before any monitor: not printed
mon_start "$LB" text
# SIGINT: a background job of this (non-interactive) shell starts with
# SIGINT ignored, which rvsadm keeps; python resets it before exec.
mon_start "$LB" json python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' -- --json --timestamp
mon_start "$X" other

# Each change: the arguments given to rvsadm | the line printed.
steps=(
  "-A -t 10.0.100.1:80 -s rr|-A -t 10.0.100.1:80 -s rr"
  "-a -t 10.0.100.1:80 -r 10.0.1.1 -m|-a -t 10.0.100.1:80 -r 10.0.1.1:80 -m -w 1"
  "-a -t 10.0.100.1:80 -r 10.0.1.2:8080 -m -w 3 -x 100 -y 10|-a -t 10.0.100.1:80 -r 10.0.1.2:8080 -m -w 3 -x 100 -y 10"
  "-a -t 10.0.100.1:80 -r 10.0.1.3 -i --tun-type gre --tun-csum -w 2|-a -t 10.0.100.1:80 -r 10.0.1.3:80 -i -w 2 --tun-type gre --tun-csum"
  "-e -t 10.0.100.1:80 -r 10.0.1.1 -m -w 0|-e -t 10.0.100.1:80 -r 10.0.1.1:80 -m -w 0"
  "-E -t 10.0.100.1:80 -s wrr -p 60 --laddr none|-E -t 10.0.100.1:80 -s wrr -p 60 --laddr none"
  "-A -u [2001:db8::1]:53 -s sh -b sh-port -o|-A -u [2001:db8::1]:53 -s sh -o -b sh-port"
  "-A -f 7 -6 -s rr -p 120|-A -f 7 -6 -s rr -p 120"
  "-a -f 7 -6 -r [2001:db8:1::1] -m|-a -f 7 -6 -r [2001:db8:1::1]:0 -m -w 1"
  "-A -t 10.0.100.2:80 -s rr --laddr 10.0.2.1|-A -t 10.0.100.2:80 -s rr --laddr 10.0.2.1"
  "-a -t 10.0.100.2:80 -r 10.0.1.7:8080 --fullnat|-a -t 10.0.100.2:80 -r 10.0.1.7:8080 --fullnat -w 1"
  "-E -t 10.0.100.2:80 -s rr --laddr 10.0.2.1 --laddr 10.0.2.2|-E -t 10.0.100.2:80 -s rr --laddr 10.0.2.1 --laddr 10.0.2.2"
  "-d -t 10.0.100.2:80 -r 10.0.1.7:8080 --drain 30|-d -t 10.0.100.2:80 -r 10.0.1.7:8080 --drain 30"
  "-d -t 10.0.100.1:80 -r 10.0.1.2:8080|-d -t 10.0.100.1:80 -r 10.0.1.2:8080"
  "--flush-conns -t 10.0.100.1:80|--flush-conns -t 10.0.100.1:80"
  "--flush-conns -t 10.0.100.1:80 -r 10.0.1.1|--flush-conns -t 10.0.100.1:80 -r 10.0.1.1:80"
  "-Z -t 10.0.100.1:80|-Z -t 10.0.100.1:80"
  "-Z|-Z"
  "--set 900 120 300|--set 900 120 300"
  "--set-option vip_guard=drop --set-option expire_nodest_conn=1|--set-option vip_guard=1 --set-option expire_nodest_conn=1"
  "--start-daemon master --mcast-interface eth1 --syncid 7|--start-daemon master --mcast-interface eth1 --syncid 7"
  "--stop-daemon master|--stop-daemon master"
  "-D -t 10.0.100.2:80|-D -t 10.0.100.2:80"
  "-C|-C"
)
# The same changes with --json (in the same order).
want_json='{"event":"NEW_SERVICE","service":{"family":"ipv4","protocol":"tcp","address":"10.0.100.1","port":80,"scheduler":"rr","flags":[],"persistent_timeout":null,"netmask":"255.255.255.255"}}
{"event":"NEW_DEST","service":{"family":"ipv4","protocol":"tcp","address":"10.0.100.1","port":80},"dest":{"address":"10.0.1.1","port":80,"forward":"masq","weight":1,"upper_threshold":0,"lower_threshold":0}}
{"event":"NEW_DEST","service":{"family":"ipv4","protocol":"tcp","address":"10.0.100.1","port":80},"dest":{"address":"10.0.1.2","port":8080,"forward":"masq","weight":3,"upper_threshold":100,"lower_threshold":10}}
{"event":"NEW_DEST","service":{"family":"ipv4","protocol":"tcp","address":"10.0.100.1","port":80},"dest":{"address":"10.0.1.3","port":80,"forward":"tunnel","weight":2,"upper_threshold":0,"lower_threshold":0,"tunnel":{"type":"gre","checksum":"csum"}}}
{"event":"SET_DEST","service":{"family":"ipv4","protocol":"tcp","address":"10.0.100.1","port":80},"dest":{"address":"10.0.1.1","port":80,"forward":"masq","weight":0,"upper_threshold":0,"lower_threshold":0}}
{"event":"SET_SERVICE","service":{"family":"ipv4","protocol":"tcp","address":"10.0.100.1","port":80,"scheduler":"wrr","flags":["persistent"],"persistent_timeout":60,"netmask":"255.255.255.255","laddrs":[]}}
{"event":"NEW_SERVICE","service":{"family":"ipv6","protocol":"udp","address":"2001:db8::1","port":53,"scheduler":"sh","flags":["sh-port","onepacket"],"persistent_timeout":null,"netmask":"128"}}
{"event":"NEW_SERVICE","service":{"family":"ipv6","fwmark":7,"scheduler":"rr","flags":["persistent"],"persistent_timeout":120,"netmask":"128"}}
{"event":"NEW_DEST","service":{"family":"ipv6","fwmark":7},"dest":{"address":"2001:db8:1::1","port":0,"forward":"masq","weight":1,"upper_threshold":0,"lower_threshold":0}}
{"event":"NEW_SERVICE","service":{"family":"ipv4","protocol":"tcp","address":"10.0.100.2","port":80,"scheduler":"rr","flags":[],"persistent_timeout":null,"netmask":"255.255.255.255","laddrs":["10.0.2.1"]}}
{"event":"NEW_DEST","service":{"family":"ipv4","protocol":"tcp","address":"10.0.100.2","port":80},"dest":{"address":"10.0.1.7","port":8080,"forward":"fullnat","weight":1,"upper_threshold":0,"lower_threshold":0}}
{"event":"SET_SERVICE","service":{"family":"ipv4","protocol":"tcp","address":"10.0.100.2","port":80,"scheduler":"rr","flags":[],"persistent_timeout":null,"netmask":"255.255.255.255","laddrs":["10.0.2.1","10.0.2.2"]}}
{"event":"DEL_DEST","service":{"family":"ipv4","protocol":"tcp","address":"10.0.100.2","port":80},"dest":{"address":"10.0.1.7","port":8080,"drain_secs":30}}
{"event":"DEL_DEST","service":{"family":"ipv4","protocol":"tcp","address":"10.0.100.1","port":80},"dest":{"address":"10.0.1.2","port":8080}}
{"event":"FLUSH_CONNS","service":{"family":"ipv4","protocol":"tcp","address":"10.0.100.1","port":80}}
{"event":"FLUSH_CONNS","service":{"family":"ipv4","protocol":"tcp","address":"10.0.100.1","port":80},"dest":{"address":"10.0.1.1","port":80}}
{"event":"ZERO","service":{"family":"ipv4","protocol":"tcp","address":"10.0.100.1","port":80}}
{"event":"ZERO"}
{"event":"SET_CONFIG","timeout":{"tcp":900,"tcpfin":120,"udp":300}}
{"event":"SET_CONFIG","options":{"vip_guard":1,"expire_nodest_conn":1}}
{"event":"NEW_DAEMON","daemon":{"state":"master","mcast_interface":"eth1","syncid":7}}
{"event":"DEL_DAEMON","daemon":{"state":"master"}}
{"event":"DEL_SERVICE","service":{"family":"ipv4","protocol":"tcp","address":"10.0.100.2","port":80}}
{"event":"FLUSH"}'

want_text=
n=0
for step in "${steps[@]}"; do
  # Split at blanks, without globbing ([2001:db8::1]:53 is a pattern).
  read -r -a args <<<"${step%%|*}"
  adm_ok "$LB" "${args[@]}"
  want_text+="${step#*|}"$'\n'
  n=$((n + 1))
  # Refused in the middle: printed by no monitor.
  if [ $n = 3 ]; then
    adm "$LB" -a -t 10.0.100.9:81 -r 10.0.1.1 -m 2>/dev/null && fail "-a to a missing service accepted"
    adm "$LB" -A -t 10.0.100.1:80 -s rr 2>/dev/null && fail "-A of an existing service accepted"
  fi
done
want_text=${want_text%$'\n'}
assert_eq "$(printf '%s\n' "$want_json" | wc -l)" "$n" "expected JSON lines (one per step)"

mon_wait text "$n"
mon_wait json "$n"
expect_changes text "$want_text" "the monitor's lines differ from the changes made"
log "the monitor printed the $n changes in order"
# JSON: every line starts with the time, then the same objects.
bad=$(changes json | grep -Ev '^\{"time":"[0-2][0-9]:[0-5][0-9]:[0-6][0-9]\.[0-9]{3}","event":')
[ -z "$bad" ] || fail "JSON lines without a leading \"time\": $bad"
got=$(changes json | sed -E 's/^\{"time":"[^"]*",/{/')
[ "$got" = "$want_json" ] || {
  log "expected:"; printf '%s\n' "$want_json" | sed 's/^/#   /' >&2
  log "got (time removed):"; printf '%s\n' "$got" | sed 's/^/#   /' >&2
  fail "the JSON monitor's objects differ from the changes made"
}
log "the --json --timestamp monitor printed the same changes"
# Nothing more comes (a refused command, a listing): only the probe.
adm "$LB" -D -t 10.0.100.1:81 2>/dev/null && fail "-D of a missing service accepted"
adm "$LB" -L -n >/dev/null || fail "-L -n failed"
adm "$LB" -S >/dev/null || fail "-S failed"
adm_ok "$LB" "${PROBE[@]}"
sleep 1
expect_changes text "$want_text" "a refused command or a listing was printed"
expect_changes other "" "the monitor of namespace x printed changes of namespace lb"
log "the monitor in x saw none of lb's changes"
mon_stop text TERM
mon_stop json INT
mon_stop other TERM

# --- 2. Who may listen. ------------------------------------------------------
adm_bin=$(command -v rvsadm)
if ! setpriv --reuid 65534 --regid 65534 --clear-groups test -x "$adm_bin" 2>/dev/null; then
  chmod 755 "$TEST_TMP" && cp "$adm_bin" "$TEST_TMP/rvsadm" && chmod 755 "$TEST_TMP/rvsadm"
  adm_bin=$TEST_TMP/rvsadm
fi
eperm="rvsadm: monitoring configuration changes failed: Operation not permitted; needs CAP_NET_ADMIN (run as root)"
out=$(timeout 10 ip netns exec "$LB" setpriv --reuid 65534 --regid 65534 --clear-groups \
  "$adm_bin" --monitor 2>&1); rc=$?
log "uid 65534: rvsadm --monitor in lb: exit $rc: $out"
assert_eq "$rc" 1 "exit status of uid 65534's --monitor (124: it was let in)"
assert_eq "$out" "$eperm" "uid 65534's --monitor"
out=$(timeout 10 ip netns exec "$LB" capsh --drop=cap_net_admin -- -c "exec $adm_bin --monitor" 2>&1); rc=$?
log "root without CAP_NET_ADMIN: rvsadm --monitor in lb: exit $rc: $out"
assert_eq "$rc" 1 "exit status of --monitor without CAP_NET_ADMIN"
assert_eq "$out" "$eperm" "--monitor without CAP_NET_ADMIN"
# In a namespace of its own, uid 65534 has CAP_NET_ADMIN over it: it
# listens, and sees its own change (and its probe).
own=$(timeout 30 setpriv --reuid 65534 --regid 65534 --clear-groups unshare -Urn bash -c '
  o=$(mktemp) || exit 1
  trap "rm -f $o" EXIT
  "$1" --monitor >"$o" 2>&1 &
  m=$!
  for i in $(seq 1 50); do
    "$1" --set 0 0 0 || exit 1
    sleep 0.2
    grep -q -- "--set 0 0 0" "$o" && break
  done
  "$1" -A -t 10.0.100.5:80 -s rr || exit 1
  sleep 1
  kill $m; wait $m || { echo "monitor exit $?"; cat "$o"; exit 1; }
  grep -v -- "--set 0 0 0" "$o"' _ "$adm_bin" 2>&1); rc=$?
log "uid 65534 in its own namespace: exit $rc: $own"
assert_eq "$rc" 0 "uid 65534's monitor of its own namespace (exit status)"
assert_eq "$own" "-A -t 10.0.100.5:80 -s rr" "uid 65534's monitor of its own namespace"

# --- 3. The module unloaded under a running monitor. -------------------------
mon_start "$LB" gone
rmmod rvs || fail "rmmod rvs with a monitor running"
for _ in $(seq 1 50); do kill -0 "${MON[gone]}" 2>/dev/null || break; sleep 0.1; done
kill -0 "${MON[gone]}" 2>/dev/null && fail "the monitor still runs 5 s after rmmod rvs"
wait "${MON[gone]}"; rc=$?
assert_eq "$rc" 1 "exit status of the monitor after rmmod rvs"
assert_eq "$(cat "$TEST_TMP/gone.err")" \
  "rvsadm: the rvs module was unloaded: no more changes will be seen (start rvsadm --monitor again once it is loaded)" \
  "the monitor's message after rmmod rvs"
log "rmmod rvs ended the monitor with status 1"

# --- 4. ipvsadm's changes, through the "IPVS" family (ipvs_compat=1). --------
compat_init
[ "$(cat /sys/module/rvs/parameters/ipvs_compat)" = Y ] || fail "rvs.ko is not loaded with ipvs_compat=1"
newns C compat
nsip "$C" <<IP
link add eth1 type veth peer name eth1p
link set eth1 up
link set eth1p up
addr add 10.81.0.1/24 dev eth1
IP
mon_start "$C" ipvs
ipvs_steps=(
  "-A -t 10.0.100.1:80 -s rr|-A -t 10.0.100.1:80 -s rr"
  "-a -t 10.0.100.1:80 -r 10.0.1.1:80 -m -w 2|-a -t 10.0.100.1:80 -r 10.0.1.1:80 -m -w 2"
  "-a -t 10.0.100.1:80 -r 10.0.1.2:80 -g|-a -t 10.0.100.1:80 -r 10.0.1.2:80 -g -w 1"
  "-e -t 10.0.100.1:80 -r 10.0.1.1:80 -m -w 0|-e -t 10.0.100.1:80 -r 10.0.1.1:80 -m -w 0"
  "-E -t 10.0.100.1:80 -s wrr -p 60|-E -t 10.0.100.1:80 -s wrr -p 60"
  "-A -f 7 -s rr|-A -f 7 -s rr"
  "-A -t [2001:db8::1]:443 -s wlc|-A -t [2001:db8::1]:443 -s wlc"
  "-d -t 10.0.100.1:80 -r 10.0.1.2:80|-d -t 10.0.100.1:80 -r 10.0.1.2:80"
  "-Z -t 10.0.100.1:80|-Z -t 10.0.100.1:80"
  "-Z|-Z"
  "--set 900 120 300|--set 900 120 300"
  "--start-daemon master --mcast-interface eth1 --syncid 7|--start-daemon master --mcast-interface eth1 --syncid 7"
  "--stop-daemon master|--stop-daemon master"
  "-D -f 7|-D -f 7"
  "-C|-C"
)
want_ipvs=
for step in "${ipvs_steps[@]}"; do
  read -r -a args <<<"${step%%|*}"
  log "[compat] ipvsadm ${args[*]}"
  ip netns exec "$C" ipvsadm "${args[@]}" || fail "ipvsadm ${args[*]} failed"
  want_ipvs+="${step#*|}"$'\n'
done
want_ipvs=${want_ipvs%$'\n'}
mon_wait ipvs "${#ipvs_steps[@]}"
expect_changes ipvs "$want_ipvs" "rvsadm --monitor's lines differ from ipvsadm's changes"
log "rvsadm --monitor printed ipvsadm's ${#ipvs_steps[@]} changes"
mon_stop ipvs TERM
pass "--monitor prints every change of its namespace as it happens, whoever makes it; only with CAP_NET_ADMIN"
