#!/bin/bash
# A cluster of three directors behind ECMP, routes announced by BGP
# (bird2, Debian's), as Maglev, Katran and GLB run:
#
#   client -- router (bird2, ECMP route to the VIP, L4 hash) == fabric ==
#   lb1, lb2, lb3 (bird2 each, announce VIP/32; VIP on lo; DR, mh with
#   mh-port) == backend L2 == rs1, rs2 (VIP on lo; replies via the router)
#
#  - the router learns the VIP from each director and installs one route
#    with three next hops (the time it took is logged);
#  - 60 short connections spread over all three directors and are all
#    answered;
#  - 24 held connections; the director holding most of them stops its
#    BGP daemon: the router withdraws that path and ECMP moves those flows
#    (and some others) to the survivors, which have never seen them.
#    With sloppy_tcp=1 every held connection carries on (mh picks the same
#    real server on every director); with sloppy_tcp=0 at least the
#    failed director's flows are lost (reset by the survivor);
#  - a director with no real server left withdraws its announcement (a
#    health loop disables its BGP export), and the others take all new
#    connections.
# Both on rvs and on the kernel's IPVS (mh, DR and sloppy_tcp are IPVS's).
. "$(dirname "$0")/../lib.sh"
adm_init mh
command -v bird >/dev/null || fail "bird2 not installed (qemu/install-deps installs it)"
mk_test_tmp
VIP=10.0.100.1 CIP=10.0.0.2
newns CL ecmp-cl; newns RT ecmp-rt; newns SW ecmp-sw
LBS=("") RS=("")
for k in 1 2 3; do newns LBS[$k] ecmp-lb$k; done
for i in 1 2; do newns RS[$i] ecmp-rs$i; done

# --- topology ------------------------------------------------------------
vethns "$CL" c0 "$RT" r0
nsip "$CL" <<IP
addr add $CIP/24 dev c0
route add default via 10.0.0.1
IP
nsip "$RT" <<IP
addr add 10.0.0.1/24 dev r0
link add br0 type bridge
link set br0 up
addr add 10.0.2.254/24 dev br0
IP
nsysctl "$RT" net.ipv4.ip_forward=1 net.ipv4.fib_multipath_hash_policy=1 \
  net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
nsip "$SW" <<IP
link add br0 type bridge
link set br0 up
IP
# The router's leg on the backend: the real servers' replies leave by it.
vethns "$RT" b0 "$SW" swr
ip -n "$SW" link set swr master br0
ip -n "$RT" addr add 10.0.1.254/24 dev b0
for k in 1 2 3; do
  lb=${LBS[$k]}
  vethns "$RT" f$k "$lb" f0
  ip -n "$RT" link set f$k master br0
  vethns "$lb" k0 "$SW" swl$k
  ip -n "$SW" link set swl$k master br0
  nsip "$lb" <<IP
addr add 10.0.2.$k/24 dev f0
addr add 10.0.1.$((10 + k))/24 dev k0
addr add $VIP/32 dev lo
IP
done
for i in 1 2; do
  rs=${RS[$i]}
  vethns "$rs" s0 "$SW" sws$i
  ip -n "$SW" link set sws$i master br0
  nsip "$rs" <<IP
addr add 10.0.1.$i/24 dev s0
addr add $VIP/32 dev lo
route add default via 10.0.1.254
IP
  nsysctl "$rs" net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2
done

# Real servers: port 80 echoes lines (held connections), 81 answers its
# name and closes (short connections).
for i in 1 2; do
  ip netns exec "${RS[$i]}" python3 -c '
import socket, threading
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 80)); s.listen(128)
def echo(c):
    try:
        while True:
            d = c.recv(256)
            if not d:
                break
            c.sendall(d)
    except OSError:
        pass
    c.close()
while True:
    c, _ = s.accept()
    threading.Thread(target=echo, args=(c,), daemon=True).start()
' </dev/null >/dev/null 2>&1 &
  bg_track $!
  serve_name_bg "${RS[$i]}" tcp 81 rs$i
done
for i in 1 2; do wait_listen "${RS[$i]}" tcp 80; wait_listen "${RS[$i]}" tcp 81; done

# --- the service, the same on every director --------------------------------
for k in 1 2 3; do
  lb=${LBS[$k]}
  for port in 80 81; do
    adm_ok "$lb" -A -t $VIP:$port -s mh -b mh-port
    for i in 1 2; do adm_ok "$lb" -a -t $VIP:$port -r 10.0.1.$i:$port -g; done
  done
  LB=$lb set_opt sloppy_tcp 1
done

# --- BGP -----------------------------------------------------------------------
# Directors: AS 65001, announce VIP/32 (a static route bird keeps to
# itself: no kernel protocol), fast timers. The router: AS 65000, merges
# equal paths into one multipath kernel route.
for k in 1 2 3; do
  cat >"$TEST_TMP/lb$k.conf" <<CONF
router id 10.0.2.$k;
protocol device {}
protocol static vip { ipv4; route $VIP/32 blackhole; }
protocol bgp uplink {
  local 10.0.2.$k as 65001;
  neighbor 10.0.2.254 as 65000;
  hold time 3; keepalive time 1; connect retry time 1;
  ipv4 { import none; export where proto = "vip"; };
}
CONF
done
{
  echo "router id 10.0.2.254;"
  echo "protocol device {}"
  echo "protocol kernel { merge paths on; ipv4 { import none; export all; }; }"
  for k in 1 2 3; do
    echo "protocol bgp lb$k { local 10.0.2.254 as 65000; neighbor 10.0.2.$k as 65001;"
    echo "  hold time 3; keepalive time 1; connect retry time 1; ipv4 { import all; export none; }; }"
  done
} >"$TEST_TMP/rt.conf"
# bird_start NAME NS: bird in the foreground, in the background of this
# test; sets BIRD_PID[NAME].
declare -A BIRD_PID
bird_start() {
  ip netns exec "$2" bird -f -c "$TEST_TMP/$1.conf" -s "$TEST_TMP/$1.ctl" -P "$TEST_TMP/$1.pid" \
    </dev/null >"$TEST_TMP/$1.log" 2>&1 &
  BIRD_PID[$1]=$!
  bg_track $!
}
birdc_() { birdc -s "$TEST_TMP/$1.ctl" "${@:2}"; }
# hops: the number of next hops of the router's route to the VIP.
hops() {
  local r; r=$(ip -n "$RT" route show $VIP/32)
  case $r in
    "") echo 0 ;;
    *nexthop*) printf '%s\n' "$r" | grep -c nexthop ;;
    *) echo 1 ;;
  esac
}
# wait_hops N WHAT: waits (up to 30 s) for N next hops; logs how long.
wait_hops() {
  local t0 i; t0=$(date +%s%N)
  for i in $(seq 1 300); do
    [ "$(hops)" = "$1" ] && { log "$2: $1 next hops after $(( ($(date +%s%N) - t0) / 1000000 )) ms"; return 0; }
    sleep 0.1
  done
  ip -n "$RT" route show $VIP/32 >&2
  birdc_ rt show protocols all >&2
  fail "$2: the router has $(hops) next hops to the VIP, not $1"
}

bird_start rt "$RT"
for k in 1 2 3; do bird_start lb$k "${LBS[$k]}"; done
wait_hops 3 "BGP up"
ip -n "$RT" route show $VIP/32 | sed 's/^/#   /' >&2

# conns LB PORT: connections the director LB scheduled to VIP:PORT.
conns() { adm "$1" -L -n --stats --exact | awk -v s="$VIP:$2" '$2 == s {print $3}'; }

# --- spread --------------------------------------------------------------------
names=$(lb_names "$CL" tcp $VIP 81 60 | count_names)
log "60 connections to VIP:81: $names"
assert_eq "$(printf '%s\n' "$names" | grep -c ERR)" 0 "errors among 60 connections ($names)"
# IPVS folds its per-CPU counters into the listing every 2 s: wait for
# the three to add up to 60.
for try in $(seq 1 10); do
  spread="" sum=0
  for k in 1 2 3; do n=$(conns "${LBS[$k]}" 81); spread+=" lb$k:$n"; sum=$((sum + ${n:-0})); done
  [ $sum = 60 ] && break
  sleep 1
done
log "connections per director:$spread"
assert_eq "$sum" 60 "connections counted by the three directors ($spread)"
for k in 1 2 3; do
  case " $spread " in *" lb$k:0 "*) fail "lb$k took none of the 60 connections ($spread)" ;; esac
done

# --- a director fails ------------------------------------------------------------
# held_round SLOPPY BASE: 24 held connections from client ports BASE on,
# the busiest director's BGP daemon stopped, then one more line on each;
# sets KEPT, LOST and MOST (how many the failed director held), and brings
# the director back.
held_round() {
  local sloppy=$1 base=$2 k busiest=0 most=-1 n out
  for k in 1 2 3; do LB=${LBS[$k]} set_opt sloppy_tcp "$sloppy"; done
  coproc FLOWS { ip netns exec "$CL" python3 "$RVS_ROOT/tests/py/flows.py" $VIP 80 24 "$base"; }
  read -r -t 60 out <&"${FLOWS[0]}" || fail "sloppy_tcp=$sloppy: the held connections did not open"
  assert_eq "$out" "open 24" "sloppy_tcp=$sloppy: held connections"
  for k in 1 2 3; do
    # This round's connections only (client ports base..base+99): an
    # earlier round's moved flows left entries on their first director.
    n=$(adm "${LBS[$k]}" -L -n -c | grep -cE "ESTABLISHED +$CIP:$((base / 100))[0-9][0-9] +$VIP:80 ")
    log "sloppy_tcp=$sloppy: lb$k holds $n of them"
    [ "$n" -gt "$most" ] && most=$n busiest=$k
  done
  [ "$most" -gt 0 ] || fail "no director holds a held connection"
  kill "${BIRD_PID[lb$busiest]}"
  wait_hops 2 "sloppy_tcp=$sloppy: lb$busiest's BGP daemon stopped"
  echo round >&"${FLOWS[1]}"
  read -r -t 200 out <&"${FLOWS[0]}" || fail "sloppy_tcp=$sloppy: no result after the failover"
  log "sloppy_tcp=$sloppy: after lb$busiest failed (it held $most): $out"
  kill "$FLOWS_PID" 2>/dev/null
  wait "$FLOWS_PID" 2>/dev/null
  read -r _ KEPT _ LOST <<<"$out"
  MOST=$most
  # Back to three directors.
  bird_start lb$busiest "${LBS[$busiest]}"
  wait_hops 3 "sloppy_tcp=$sloppy: lb$busiest back"
}
held_round 1 50000
kept=$KEPT lost=$LOST
assert_eq "$lost" 0 "sloppy_tcp=1: held connections lost when a director failed (kept $kept)"
held_round 0 51000
kept0=$KEPT lost0=$LOST most0=$MOST
[ "$lost0" -ge "$most0" ] ||
  fail "sloppy_tcp=0: lost $lost0, expected at least the failed director's $most0"
log "kept/lost when a director fails: sloppy_tcp=1 $kept/$lost, sloppy_tcp=0 $kept0/$lost0"

# --- a director's own health -------------------------------------------------------
# A health loop on lb3 (what an operator's agent would do): no real server
# of weight > 0 left for VIP:80 -> disable the announcement.
ip netns exec "${LBS[3]}" bash -c '
  while sleep 0.5; do
    if '"$ADM"' -L -n -t '"$VIP"':80 | grep -qE "^  -> .* [1-9][0-9]* +[0-9]+ +[0-9]+ *$"; then
      birdc -s '"$TEST_TMP"'/lb3.ctl enable vip >/dev/null
    else
      birdc -s '"$TEST_TMP"'/lb3.ctl disable vip >/dev/null
    fi
  done' </dev/null >/dev/null 2>&1 &
bg_track $!
for i in 1 2; do adm_ok "${LBS[3]}" -d -t $VIP:80 -r 10.0.1.$i:80; done
wait_hops 2 "lb3 without real servers"
before=$(conns "${LBS[3]}" 81)
names=$(lb_names "$CL" tcp $VIP 81 30 30000 | count_names)
assert_eq "$(printf '%s\n' "$names" | grep -c ERR)" 0 "errors among 30 connections after lb3 withdrew ($names)"
sleep 3 # IPVS's counters, as above
assert_eq "$(conns "${LBS[3]}" 81)" "$before" "connections lb3 took after withdrawing"
pass "ECMP cluster: 3 next hops, spread$spread; a director's failure kept $kept/$((kept + lost)) (sloppy_tcp=1), $kept0/$((kept0 + lost0)) without; health withdrawal"
