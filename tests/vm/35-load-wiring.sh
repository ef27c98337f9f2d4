#!/bin/bash
# The load-counting schedulers' wiring, choice by choice: connections are
# opened one after the other and all held open, so every server's active
# count is known at each choice, and the sequence of servers lc, wlc, sed,
# nq and ovf pick must be exactly what the host-side model of IPVS's rules
# (tests/py/load_model.py) says: least connections, least per weight
# (compared by cross-multiplying, ties to the newest server), shortest
# expected delay, never queue (an idle server first), and ovf filling the
# highest weight up to its weight, then the next, then refusing. Counting
# only that "both servers got some" cannot see a wrong comparison. twos,
# random by design, is checked against its rule's odds (below).
. "$(dirname "$0")/../lib.sh"
adm_init lc wlc sed nq ovf twos
topo_nat ldw 3
for i in 1 2 3; do serve_held "${RS[$i]}" 80 rs$i; done
for i in 1 2 3; do wait_listen "${RS[$i]}" tcp 80; done

# check SCHED PORT N W1 W2 W3: a service on VIP:PORT with servers rs1..rs3
# of those weights (added in that order, so listed rs3 first), N held
# connections, the servers they reached against the model's.
check() {
  local sched=$1 port=$2 n=$3 i want got
  shift 3
  adm_ok "$LB" -A -t $VIP:$port -s "$sched"
  for i in 1 2 3; do adm_ok "$LB" -a -t $VIP:$port -r ${RIP[$i]}:80 -m -w "${!i}"; done
  want=$(python3 "$RVS_ROOT/tests/py/load_model.py" "$sched" rs3:$3 rs2:$2 rs1:$1 "$n")
  got=$(timeout 120 ip netns exec "$CL" python3 "$RVS_ROOT/tests/py/held.py" connect $VIP "$port" "$n")
  log "$sched, weights rs1:$1 rs2:$2 rs3:$3, $n held connections -> $got"
  assert_eq "$got" "$want" "$sched's choices with every connection held (the model's)"
}

check lc 81 9 1 2 3
check wlc 82 12 1 2 3
check sed 83 12 1 2 3
check nq 84 12 1 2 3
check ovf 85 7 2 1 0
# twos: of two weighted random draws, the less loaded server. rs1 first
# holds 160 connections alone; then rs2 (weight 1, listed first) joins and
# 150 more connections are opened, all held, so rs2 stays the less loaded
# throughout and rs1 gets one only when both draws fall on it. IPVS draws
# r in 0..=total and walks the list, so the first listed server has one
# extra ticket: rs1 is drawn 1/3 of the time, chosen 1/9: 16.7 of 150 on
# average (standard deviation 3.8). A single weighted draw would give rs1
# 50, least-connection 0, a uniform pick 75; [4, 32] tells them apart.
adm_ok "$LB" -A -t $VIP:86 -s twos
adm_ok "$LB" -a -t $VIP:86 -r ${RIP[1]}:80 -m -w 1
fifo=$(mktemp -u) && mkfifo "$fifo" && at_exit rm -f "$fifo"
preload=$(mktemp) && at_exit rm -f "$preload"
ip netns exec "$CL" python3 "$RVS_ROOT/tests/py/held.py" hold $VIP 86 160 <"$fifo" >"$preload" &
bg_track $!
exec 9>"$fifo"
for _ in $(seq 600); do [ -s "$preload" ] && break; sleep 0.2; done
n1=$(tr ' ' '\n' <"$preload" | grep -c '^rs1$')
assert_eq "$n1" 160 "rs1 alone takes the 160 preloading connections"
adm_ok "$LB" -a -t $VIP:86 -r ${RIP[2]}:80 -m -w 1
got=$(timeout 120 ip netns exec "$CL" python3 "$RVS_ROOT/tests/py/held.py" connect $VIP 86 150)
exec 9>&-
n1=$(echo "$got" | tr ' ' '\n' | grep -c '^rs1$')
n2=$(echo "$got" | tr ' ' '\n' | grep -c '^rs2$')
log "twos, rs1 holding 160 connections: of 150 more, rs1 $n1, rs2 $n2"
assert_eq "$((n1 + n2))" 150 "every twos connection reached a server"
[ "$n1" -ge 4 ] && [ "$n1" -le 32 ] ||
  fail "twos gave the loaded server $n1 of 150 connections: its rule (both draws on it, 1/9) expects 4..32"
pass "lc, wlc, sed, nq and ovf choose exactly as IPVS's rules say, ovf refuses once every server is over its weight; twos takes the less loaded of two draws"
