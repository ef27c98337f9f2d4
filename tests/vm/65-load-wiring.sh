#!/bin/bash
# The load-counting schedulers' wiring, choice by choice: connections are
# opened one after the other and all held open, so every server's active
# count is known at each choice, and the sequence of servers lc, wlc, sed,
# nq and ovf pick must be exactly what the host-side model of IPVS's rules
# (tests/py/load_model.py) says: least connections, least per weight
# (compared by cross-multiplying, ties to the newest server), shortest
# expected delay, never queue (an idle server first), and ovf filling the
# highest weight up to its weight, then the next, then refusing. Counting
# only that "both servers got some" cannot see a wrong comparison.
. "$(dirname "$0")/../lib.sh"
adm_init lc wlc sed nq ovf
topo_nat ldw 3
for i in 1 2 3; do
  ip netns exec "${RS[$i]}" python3 "$RVS_ROOT/tests/py/held.py" serve 80 rs$i </dev/null >/dev/null 2>&1 &
  bg_track $!
done
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
pass "lc, wlc, sed, nq and ovf choose exactly as IPVS's rules say, ovf refuses once every server is over its weight"
