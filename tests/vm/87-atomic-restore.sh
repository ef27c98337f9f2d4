#!/bin/bash
# rvsadm -R --atomic (rvs's addition: IPVS applies ipvsadm -R line by line):
#  - it leaves the table as -R line by line would (-S compares);
#  - every line or none: a refused line leaves the table exactly as it
#    was and the error names that line; a line that is not a rule change
#    is refused before anything is sent;
#  - one step for new connections: replacing every service by a flush
#    and the new rules, over and over under a steady stream of new
#    connections, never leaves one unanswered (plain -R, for comparison,
#    has moments without a service);
#  - a -C inside it leaves established connections alone;
#  - --monitor announces it as one event listing its changes, or, for
#    one too big to copy, tells the listener it lost a change;
#  - mh, whose table is built before the publish, picks as after the same
#    changes made line by line;
#  - 2,000 services x 5 real servers in one request.
. "$(dirname "$0")/../lib.sh"
rvs_only
adm_init rr
mk_test_tmp

topo_nat atomic 4
for i in 1 2 3 4; do serve_name_bg "${RS[$i]}" tcp 80 rs$i; done
for i in 1 2 3 4; do wait_listen "${RS[$i]}" tcp 80; done
for i in 1 2 3 4; do probe_serve "${RS[$i]}" 81 h$i; done

# rules A|B: a table of two services on real servers 1 and 2 (A) or 3
# and 4 (B).
rules() {
  local a b
  case $1 in A) a=1 b=2 ;; B) a=3 b=4 ;; esac
  echo "-A -t $VIP:80 -s rr"
  echo "-a -t $VIP:80 -r ${RIP[$a]}:80 -m -w 1"
  echo "-a -t $VIP:80 -r ${RIP[$b]}:80 -m -w 1"
  echo "-A -t $VIP:81 -s rr"
  echo "-a -t $VIP:81 -r ${RIP[$a]}:81 -m -w 2"
  echo "-a -t $VIP:81 -r ${RIP[$b]}:81 -m -w 1"
  echo "-e -t $VIP:81 -r ${RIP[$a]}:81 -m -w 1"
}
atomic() { ip netns exec "$LB" rvsadm -R --atomic; }
plain() { ip netns exec "$LB" rvsadm -R; }

# The same table as line by line.
rules A | plain || fail "plain restore of table A failed"
want=$(adm "$LB" -S -n)
adm_ok "$LB" -C
rules A | atomic || fail "atomic restore of table A failed"
assert_eq "$(adm "$LB" -S -n)" "$want" "-R --atomic leaves the table -R leaves"
log "table A: $(echo "$want" | wc -l) lines"

# All or nothing: the third line is refused (the server exists), so the
# first two (a delete, an add) must not have happened either.
before=$(adm "$LB" -S -n)
out=$({ echo "-D -t $VIP:81"; echo "-a -t $VIP:80 -r ${RIP[3]}:80 -m"; echo "-a -t $VIP:80 -r ${RIP[1]}:80 -m"; } |
  ip netns exec "$LB" rvsadm -R --atomic 2>&1)
rc=$?
log "refused: rc=$rc: $out"
assert_eq $rc 1 "exit status of a refused atomic restore"
case $out in
  *"refused line 3 \`-a -t $VIP:80 -r ${RIP[1]}:80 -m'"*"File exists"*"nothing was applied"*) ;;
  *) fail "the error does not name line 3 and its cause: $out" ;;
esac
assert_eq "$(adm "$LB" -S -n)" "$before" "a refused atomic restore changed nothing"
# A later line that depends on an earlier one of the same request, and a
# check against the table as the earlier lines leave it (the service is
# deleted by line 1, so line 2 finds none).
out=$({ echo "-D -t $VIP:81"; echo "-e -t $VIP:81 -r ${RIP[1]}:81 -m -w 5"; } |
  ip netns exec "$LB" rvsadm -R --atomic 2>&1) && fail "an edit of a service deleted earlier in the request was accepted"
case $out in
  *"refused line 2"*"No such process"*) ;;
  *) fail "unexpected error for line 2: $out" ;;
esac
assert_eq "$(adm "$LB" -S -n)" "$before" "a refused atomic restore changed nothing (2)"
# Not a rule change: refused before anything is sent, exit status 2.
out=$(printf -- '-D -t %s:81\n-Z\n' $VIP | ip netns exec "$LB" rvsadm -R --atomic 2>&1)
assert_eq $? 2 "exit status of a line that cannot be part of an atomic restore"
case $out in *"line 2 \`-Z'"*) ;; *) fail "the error does not name line 2: $out" ;; esac
assert_eq "$(adm "$LB" -S -n)" "$before" "a refused atomic restore changed nothing (3)"

# Established connections live through a -C inside the request.
probe_hold "$CL" $VIP 81 2 held
{ echo -C; rules B; } | atomic || fail "atomic replace by table B failed"
res=$(probe_results held | summary)
log "held through the atomic replace: $res"
case $res in "h1:alive=1 h2:alive=1") ;; *) fail "connections did not survive -C inside --atomic: $res" ;; esac

# --monitor sees one event with the changes.
ip netns exec "$LB" rvsadm --monitor >"$TEST_TMP/mon" 2>&1 &
mon=$!
bg_track $mon
sleep 1
{ echo -C; rules A; } | atomic || fail "atomic replace by table A failed"
for i in $(seq 1 50); do grep -q -- "-e -t $VIP:81" "$TEST_TMP/mon" && break; sleep 0.1; done
kill $mon 2>/dev/null
log "monitor: $(tr '\n' '|' <"$TEST_TMP/mon")"
assert_eq "$(head -1 "$TEST_TMP/mon")" "# -R --atomic: 8 changes at once" "monitor's first line"
assert_eq "$(sed -n 2p "$TEST_TMP/mon")" "-C" "monitor's second line"

# One step under traffic: swap A and B ten times while a client opens
# connections one after another until the swaps are done; each must be
# answered by a server.
# swaps HOW: ten swaps with HOW (atomic|plain) under the client's
# stream; prints the client's answers, counted.
swaps() {
  rm -f "$TEST_TMP/stop"
  ip netns exec "$CL" python3 -c '
import os, socket, sys
stop, addr = sys.argv[1], sys.argv[2]
for _ in range(5000):
    if os.path.exists(stop):
        break
    try:
        s = socket.create_connection((addr, 80), timeout=3)
        data = b""
        while True:
            d = s.recv(256)
            if not d:
                break
            data += d
        s.close()
        print(data.decode(errors="replace").strip() or "ERR:empty", flush=True)
    except OSError as e:
        print("ERR:" + type(e).__name__, flush=True)
' "$TEST_TMP/stop" $VIP >"$TEST_TMP/names" &
  local client=$! n side
  : >"$TEST_TMP/swap.err"
  sleep 1
  for n in 1 2 3 4 5; do
    for side in B A; do
      { echo -C; rules $side; } | $1 >/dev/null 2>>"$TEST_TMP/swap.err" || echo "swap $n$side failed" >>"$TEST_TMP/swap.err"
    done
  done
  touch "$TEST_TMP/stop"
  wait $client
  count_names <"$TEST_TMP/names"
}
got=$(swaps plain)
log "plain -R, 10 swaps: answers $got (moments without a service refuse connections)"
[ -s "$TEST_TMP/swap.err" ] && fail "plain swaps failed: $(cat "$TEST_TMP/swap.err")"
got=$(swaps atomic)
log "-R --atomic, 10 swaps: answers $got"
[ -s "$TEST_TMP/swap.err" ] && fail "atomic swaps failed: $(cat "$TEST_TMP/swap.err")"
case " $got" in
  *ERR*) fail "a connection was not answered across atomic swaps: $got" ;;
esac
total=$(echo "$got" | tr ' ' '\n' | awk -F: '$1 ~ /^rs[1-4]$/ {s += $2} END {print s + 0}')
[ "$total" -ge 20 ] || fail "only $total connections during the atomic swaps"

# mh's table, built ahead of the publish from the weights the change
# sets: the same flows land where the same changes made line by line
# send them.
for i in 1 2 3 4; do serve_name_bg "${RS[$i]}" udp 53 rs$i; done
for i in 1 2 3 4; do wait_listen "${RS[$i]}" udp 53; done
mh_base() {
  echo "-A -u $VIP:53 -s mh -b mh-port"
  for i in 1 2 3; do echo "-a -u $VIP:53 -r ${RIP[$i]}:53 -m -w 1"; done
}
mh_change() {
  echo "-e -u $VIP:53 -r ${RIP[1]}:53 -m -w 4"
  echo "-a -u $VIP:53 -r ${RIP[4]}:53 -m -w 2"
  echo "-d -u $VIP:53 -r ${RIP[2]}:53"
}
adm_ok "$LB" -C
mh_base | plain || fail "mh table"
mh_change | plain || fail "mh changes line by line"
want=$(lb_names "$CL" udp $VIP 53 60 30000)
adm_ok "$LB" -C
mh_base | plain || fail "mh table (2)"
mh_change | atomic || fail "mh changes at once"
got=$(lb_names "$CL" udp $VIP 53 60 30000)
log "mh after the changes: $(echo "$got" | count_names)"
assert_eq "$(echo "$got" | count_names)" "$(echo "$want" | count_names)" "mh's spread after an atomic change"
assert_eq "$got" "$want" "mh's choice for each of 60 flows after an atomic change"
adm_ok "$LB" -C

# A large table in one request.
{
  echo -C
  for s in $(seq 0 1999); do
    a=10.1.$((s / 250)).$((s % 250 + 1))
    echo "-A -t $a:80 -s wrr"
    for r in 1 2 3 4 5; do echo "-a -t $a:80 -r 10.2.$r.$((s % 250 + 1)):80 -m -w $r"; done
  done
} >"$TEST_TMP/big"
# Its 1.5 MB are more than the module copies to --monitor (1 MiB): the
# monitor is told it lost a change.
ip netns exec "$LB" rvsadm --monitor >"$TEST_TMP/mon2" 2>&1 &
mon=$!
bg_track $mon
sleep 1
t0=$(date +%s.%N)
atomic <"$TEST_TMP/big" || fail "atomic restore of 12,001 lines failed"
t1=$(date +%s.%N)
adm_ok "$LB" -Z
for i in $(seq 1 50); do grep -q -- "^-Z" "$TEST_TMP/mon2" && break; sleep 0.1; done
kill $mon 2>/dev/null
log "monitor: $(tr '\n' '|' <"$TEST_TMP/mon2")"
assert_eq "$(head -1 "$TEST_TMP/mon2")" "# events lost: the receive buffer overflowed; read the table again (-S) to resynchronise" "monitor after a change too big to copy"
assert_eq "$(sed -n 2p "$TEST_TMP/mon2")" "-Z" "monitor's next event"
log "12,001 lines (2,000 services x 5 servers) applied atomically in $(echo "$t1 - $t0" | bc) s"
assert_eq "$(adm "$LB" -L -n | grep -c '^TCP')" 2000 "services after the large restore"
assert_eq "$(adm "$LB" -L -n | grep -c '^  -> [0-9]')" 10000 "real servers after the large restore"
adm_ok "$LB" -C
pass "-R --atomic: all or nothing, one step for new connections, connections kept, announced, 12,001 lines"
