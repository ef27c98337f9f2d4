#!/bin/bash
# rmmod rvs while clients stream connections through a NAT service: the
# unload succeeds (or fails cleanly with "in use" and succeeds once the
# traffic stops), with no splat (the runner checks dmesg); then rvs.ko is
# loaded again, starts empty, and balances again.
. "$(dirname "$0")/../lib.sh"

rvs_only
adm_init
mk_test_tmp
topo_nat unl 2
for i in 1 2; do serve_name_bg "${RS[$i]}" tcp 80 rs$i; done
for i in 1 2; do wait_listen "${RS[$i]}" tcp 80; done
adm_ok "$LB" -A -t $VIP:80 -s rr
for i in 1 2; do adm_ok "$LB" -a -t $VIP:80 -r ${RIP[$i]}:80 -m -w 1; done
expect_balance "$CL" tcp $VIP 80 2 "rs1:1 rs2:1" "before the unload"

# A client looping for at most 20 s (or until $TEST_TMP/stop exists),
# counting answered and failed connections into $TEST_TMP/progress.
ip netns exec "$CL" timeout 30 python3 -c '
import os, socket, sys, time
vip, stop, prog = sys.argv[1], sys.argv[2], sys.argv[3]
ok = err = 0
end = time.time() + 20
while time.time() < end and not os.path.exists(stop):
    try:
        s = socket.create_connection((vip, 80), timeout=1)
        s.settimeout(1)
        if s.recv(64).startswith(b"rs"): ok += 1
        else: err += 1
        s.close()
    except OSError:
        err += 1
        time.sleep(0.05)
    with open(prog + ".new", "w") as f: f.write("%d %d\n" % (ok, err))
    os.replace(prog + ".new", prog)
' "$VIP" "$TEST_TMP/stop" "$TEST_TMP/progress" </dev/null >/dev/null 2>&1 &
loop=$!
bg_track $loop
for i in $(seq 1 100); do
  read -r ok err 2>/dev/null <"$TEST_TMP/progress" && [ "${ok:-0}" -ge 5 ] && break
  sleep 0.1
done
[ "${ok:-0}" -ge 5 ] || fail "the client loop got no answers before the unload (progress: $(cat "$TEST_TMP/progress" 2>/dev/null))"
log "client loop running: ${ok} answered, ${err} failed so far; rmmod rvs"

if out=$(timeout 30 rmmod rvs 2>&1); then
  log "rmmod under traffic succeeded"
else
  log "rmmod under traffic refused: $out"
  grep -Eiq 'in use|busy' <<<"$out" || fail "rmmod failed, and not with 'in use': $out"
  touch "$TEST_TMP/stop"; wait "$loop"
  unloaded=0
  for i in 1 2 3 4 5; do
    timeout 30 rmmod rvs 2>/dev/null && { unloaded=1; break; }
    sleep 1
  done
  [ "$unloaded" = 1 ] || fail "rmmod still fails after the traffic stopped"
  log "rmmod succeeded after the traffic stopped"
fi
rvs_loaded && fail "rvs still loaded after rmmod"
touch "$TEST_TMP/stop"; wait "$loop" 2>/dev/null
read -r ok err <"$TEST_TMP/progress"
log "client loop: $ok answered, $err failed in all"
genl ctrl get name RVS >/dev/null 2>&1 && fail "family RVS still registered after rmmod"

insmod "$RVS_ROOT/rvs.ko" || fail "insmod rvs.ko after the unload"
body=$(adm "$LB" -L -n | tail -n +4)
[ -z "$body" ] || fail "services survived the module reload: $body"
adm_ok "$LB" -A -t $VIP:80 -s rr
for i in 1 2; do adm_ok "$LB" -a -t $VIP:80 -r ${RIP[$i]}:80 -m -w 1; done
expect_balance "$CL" tcp $VIP 80 4 "rs1:2 rs2:2" "after the reload"
pass "unloaded under traffic cleanly and reloaded"
