#!/bin/bash
# The other schedulers with real traffic: sh and mh keep a client on one
# server, dh keeps a destination on one server, fo sends everything to the
# highest weight, ovf to the highest weight while it has room, twos spreads
# over both, lc/wlc alternate and sed/nq break ties to the newest server;
# lblc/lblcr keep the destination address (the VIP) on one server and move
# it when that server is quiesced; lblc does not move it back.
. "$(dirname "$0")/../lib.sh"
adm_init sh dh mh fo ovf twos lc wlc sed nq lblc lblcr
topo_nat sch 2
for i in 1 2; do serve_name "${RS[$i]}" tcp 80 rs$i; done

# run SCHED W1 W2 N: a fresh service with that scheduler and weights, then
# N connections from the client; prints the per-server counts. Each run
# has a virtual port of its own (8001, 8002, ...; the real servers' port
# stays 80): IPVS gives a re-added real server of a deleted service its
# old counters back (its dest trash), and the earlier run's TIME_WAIT
# connections would then weigh on lc and wlc.
mk_test_tmp
echo 8000 >"$TEST_TMP/vport"
run() {
  local vp; vp=$(( $(cat "$TEST_TMP/vport") + 1 )); echo $vp >"$TEST_TMP/vport"
  adm "$LB" -D -t $VIP:$((vp - 1)) 2>/dev/null
  adm_ok "$LB" -A -t $VIP:$vp -s "$1"
  adm_ok "$LB" -a -t $VIP:$vp -r ${RIP[1]}:80 -m -w "$2"
  adm_ok "$LB" -a -t $VIP:$vp -r ${RIP[2]}:80 -m -w "$3"
  lb_names "$CL" tcp $VIP $vp "$4" | count_names
}

for s in sh mh dh; do
  got=$(run $s 1 1 8); log "$s, one client, 8 connections -> $got"
  case "$got" in rs[12]:8) ;; *) fail "$s did not keep the client on one server: $got" ;; esac
done
got=$(run fo 1 3 6); log "fo, weights 1:3 -> $got"
assert_eq "$got" "rs2:6" "fo picks the highest weight"
got=$(run fo 5 3 6); log "fo, weights 5:3 -> $got"
assert_eq "$got" "rs1:6" "fo follows a weight change"
got=$(run ovf 1 4 4); log "ovf, weights 1:4, sequential -> $got"
assert_eq "$got" "rs2:4" "ovf fills the highest weight first"
got=$(run twos 1 1 20); log "twos, weights 1:1, 20 connections -> $got"
case "$got" in "rs1:"*" rs2:"*) ;; *) fail "twos used only one server: $got" ;; esac
# lc/wlc count inactive (TIME_WAIT) connections too, so sequential
# connections alternate; sed/nq count only active ones, so with idle
# servers every tie goes to the newest server (listed first), as in IPVS.
for s in lc wlc; do
  got=$(run $s 1 1 6); log "$s, idle servers, sequential -> $got"
  case "$got" in "rs1:"[2-4]" rs2:"[2-4]) ;; *) fail "$s did not balance idle servers: $got" ;; esac
done
for s in sed nq; do
  got=$(run $s 1 1 6); log "$s, idle servers, sequential -> $got"
  assert_eq "$got" "rs2:6" "$s sends ties to the newest server"
done
# lblc/lblcr: unlike wlc, every connection to the VIP goes to one server
# (the first least loaded: the newest); quiescing it moves the address to
# the other one, where lblc keeps it after the first comes back. Each on its own
# virtual port: IPVS revives a deleted service's real servers with their
# connection counts when the same service is added again.
vp=8100
for s in lblc lblcr; do
  vp=$((vp + 1))
  adm_ok "$LB" -A -t $VIP:$vp -s $s
  adm_ok "$LB" -a -t $VIP:$vp -r ${RIP[1]}:80 -m -w 1
  adm_ok "$LB" -a -t $VIP:$vp -r ${RIP[2]}:80 -m -w 1
  got=$(lb_names "$CL" tcp $VIP $vp 4 | count_names); log "$s, one destination address, sequential -> $got"
  assert_eq "$got" "rs2:4" "$s keeps the address on one server"
  adm_ok "$LB" -e -t $VIP:$vp -r ${RIP[2]}:80 -m -w 0
  got=$(lb_names "$CL" tcp $VIP $vp 3 | count_names); log "$s, rs2 quiesced -> $got"
  assert_eq "$got" "rs1:3" "$s moves the address off a quiesced server"
  [ $s = lblcr ] && continue
  # lblcr would now balance over its set {rs1, rs2}; lblc stays on rs1.
  adm_ok "$LB" -e -t $VIP:$vp -r ${RIP[2]}:80 -m -w 1
  got=$(lb_names "$CL" tcp $VIP $vp 3 | count_names); log "$s, rs2 back -> $got"
  assert_eq "$got" "rs1:3" "$s keeps the address where it moved"
done
pass "sh, mh, dh, fo, ovf, twos, lc, wlc, sed, nq, lblc and lblcr behave"
