#!/bin/bash
# rvsadm -d ... --drain SECONDS (rvs's addition; IPVS can only quiesce a
# server with weight 0 and leave its connections be):
#  - the draining server takes no new connection at once, persistence
#    templates included (a client whose template names it moves on),
#    while its established connections carry on (they still answer);
#  - the listing shows it draining with the seconds left (--json too);
#  - at the deadline its remaining connections are reset at both ends with
#    exact sequence numbers (no challenge ACK) and it is deleted; the other
#    server's connections are untouched;
#  - -e cancels a drain; -d without --drain ends one at once (reset and
#    delete); --drain out of range is refused.
. "$(dirname "$0")/../lib.sh"
rvs_only
adm_init rr
mk_test_tmp

topo_nat drain 2
probe_serve "${RS[1]}" 80 rs1
probe_serve "${RS[2]}" 80 rs2
for ns in "$CL" "${RS[1]}" "${RS[2]}"; do count_tcp "$ns"; done
adm_ok "$LB" -A -t $VIP:80 -s rr
adm_ok "$LB" -a -t $VIP:80 -r ${RIP[1]}:80 -m
adm_ok "$LB" -a -t $VIP:80 -r ${RIP[2]}:80 -m

# drain_left ADDR: the seconds left of ADDR's drain in --json ("-" if none).
drain_left() {
  adm "$LB" -L -n --json | python3 -c '
import json, sys
for s in json.load(sys.stdin)["services"]:
    for d in s["dests"]:
        if d["address"] == sys.argv[1] and s.get("port") == int(sys.argv[2]):
            v = d.get("drain_secs_left")
            print("-" if v is None else v)' "$1" "$2"
}
# names N: the servers answering N new connections, counted.
names() {
  local i
  for i in $(seq 1 "$1"); do
    ip netns exec "$CL" timeout 5 socat -T2 - "TCP4:$VIP:${2:-80}" </dev/null 2>/dev/null | head -1
  done | count_names
}

# Persistence (first: the 25 s drain below must not end before its
# resets are counted, on a slow host too): a client bound to a server
# keeps it until that server drains, then moves on.
adm_ok "$LB" -A -t $VIP:81 -s rr -p 120
probe_serve "${RS[1]}" 81 p1
probe_serve "${RS[2]}" 81 p2
adm_ok "$LB" -a -t $VIP:81 -r ${RIP[1]}:81 -m
adm_ok "$LB" -a -t $VIP:81 -r ${RIP[2]}:81 -m
first=$(names 3 81)
case $first in p1:3) old=1 new=2 ;; p2:3) old=2 new=1 ;; *) fail "persistence did not hold: $first" ;; esac
adm_ok "$LB" -d -t $VIP:81 -r ${RIP[$old]}:81 --drain 60
assert_eq "$(names 3 81)" "p$new:3" "a persistent client of a draining server moves on"
# -e cancels the drain: no seconds left, the server is listed as before.
adm_ok "$LB" -e -t $VIP:81 -r ${RIP[$old]}:81 -m -w 1
assert_eq "$(drain_left ${RIP[$old]} 81)" - "-e cancelled the drain"

probe_hold "$CL" $VIP 80 2 early
probe_hold "$CL" $VIP 80 2 late
assert_eq "$(sort "$TEST_TMP/early.out" | grep -c -x rs1)" 1 "rr: one early connection on rs1"
drain_t0=$SECONDS
adm_ok "$LB" -d -t $VIP:80 -r ${RIP[1]}:80 --drain 25
left=$(drain_left ${RIP[1]} 80)
log "drain started: $left s left; listing:"
adm "$LB" -L -n | sed 's/^/#   /' >&2
case $left in [1-9] | 1[0-9] | 2[0-5]) ;; *) fail "JSON seconds left of the drain: '$left'" ;; esac
adm "$LB" -L -n | grep -F "${RIP[1]}:80" | grep -q draining || fail "-L does not show rs1 draining"
assert_eq "$(drain_left ${RIP[2]} 80)" - "rs2 is not draining"
# New connections: all to rs2. Old ones: still served by rs1.
assert_eq "$(names 6)" "rs2:6" "new connections while rs1 drains"
assert_eq "$(probe_results early | summary)" "rs1:alive=1 rs2:alive=1" "established connections while rs1 drains"
log "$((SECONDS - drain_t0)) s into the drain: new connections went to rs2, established ones answered"

# The deadline: rs1 deleted, its connection reset at both ends.
adm "$LB" -L -n | grep -qF "${RIP[1]}:80" ||
  fail "rs1 went $((SECONDS - drain_t0)) s into its 25 s drain, before its resets could be counted (host too slow)"
for ns in "$CL" "${RS[1]}" "${RS[2]}"; do reset_counts "$ns"; done
: >"$TEST_TMP/rs1.log"
for _ in $(seq 1 400); do
  adm "$LB" -L -n | grep -qF "${RIP[1]}:80" || break
  sleep 0.1
done
adm "$LB" -L -n | grep -qF "${RIP[1]}:80" && fail "rs1 still listed $((SECONDS - drain_t0)) s after its drain of 25 s began"
log "rs1 deleted $((SECONDS - drain_t0)) s after its drain of 25 s began"
[ $((SECONDS - drain_t0)) -ge 24 ] || fail "rs1 deleted before its deadline"
sleep 1
log "after the deadline: client $(counts "$CL"); rs1 $(counts "${RS[1]}"); rs2 $(counts "${RS[2]}")"
assert_eq "$(counts "$CL")" "rst_in=1 ack_out=0" "client: one exact reset (rs1's late connection)"
assert_eq "$(counts "${RS[1]}")" "rst_in=1 ack_out=0" "rs1: one exact reset"
assert_eq "$(counts "${RS[2]}")" "rst_in=0 ack_out=0" "rs2: untouched"
assert_eq "$(log_resets rs1)" 1 "rs1's application saw the reset"
assert_eq "$(probe_results late | summary)" "rs1:reset=1 rs2:alive=1" "the late connections after the deadline"

# -d without --drain ends a drain at once.
adm_ok "$LB" -a -t $VIP:80 -r ${RIP[1]}:80 -m
probe_hold "$CL" $VIP 80 2 third
adm_ok "$LB" -d -t $VIP:80 -r ${RIP[2]}:80 --drain 60
for ns in "$CL" "${RS[2]}"; do reset_counts "$ns"; done
: >"$TEST_TMP/rs2.log"
adm_ok "$LB" -d -t $VIP:80 -r ${RIP[2]}:80
sleep 1
adm "$LB" -L -n | grep -qF "${RIP[2]}:80" && fail "rs2 listed after -d ended its drain"
assert_eq "$(counts "$CL")" "rst_in=1 ack_out=0" "-d: the client's rs2 connection reset"
assert_eq "$(log_resets rs2)" 1 "-d: rs2's application saw the reset"
assert_eq "$(probe_results third | summary)" "rs1:alive=1 rs2:reset=1" "-d ended only rs2's connection"

# Refusals.
for bad in 0 86401 x; do
  out=$(adm "$LB" -d -t $VIP:80 -r ${RIP[1]}:80 --drain $bad 2>&1) && fail "--drain $bad accepted"
  log "--drain $bad: $out"
done
out=$(adm "$LB" -a -t $VIP:80 -r 10.0.1.7:80 -m --drain 5 2>&1) && fail "--drain accepted with -a"
log "--drain with -a: $out"
adm "$LB" -L -n | grep -qF "${RIP[1]}:80" || fail "a refused --drain changed the server"
pass "drain: no new connections, old ones carry on, reset and deleted at the deadline"
