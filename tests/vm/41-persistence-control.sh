#!/bin/bash
# A persistence template lives while it controls connections (IPVS: a
# template with n_control != 0 is not expired, ip_vs_conn_expire): a
# client holding one connection open longer than the persistence timeout
# (-p 2) keeps its server for new connections (a websocket or an FTP
# control connection must not lose stickiness after -p seconds), and the
# template stays listed by -Lc meanwhile.
. "$(dirname "$0")/../lib.sh"
adm_init rr
mk_test_tmp
P=2
topo_nat pctl 2
# Each real server answers its name and keeps the connection open until
# the client closes it.
for i in 1 2; do serve_held "${RS[$i]}" 80 rs$i; done
for i in 1 2; do wait_listen "${RS[$i]}" tcp 80; done

# names N: N short connections from the client, one answer a line.
names() {
  timeout 60 ip netns exec "$CL" python3 -c '
import socket, sys
for _ in range(int(sys.argv[2])):
    s = socket.create_connection((sys.argv[1], 80), timeout=3)
    s.settimeout(3)
    data = b""
    while not data.endswith(b"\n"):
        d = s.recv(64)
        if not d: break
        data += d
    s.close()
    print(data.decode().strip() or "ERR:empty")
' $VIP "$1" | count_names
}

adm_ok "$LB" -A -t $VIP:80 -s rr -p $P
for i in 1 2; do adm_ok "$LB" -a -t $VIP:80 -r ${RIP[$i]}:80 -m -w 1; done

# The long connection: opened first, held until the test ends.
ip netns exec "$CL" python3 -c '
import os, socket, sys, time
s = socket.create_connection((sys.argv[1], 80), timeout=3)
s.settimeout(3)
data = b""
while not data.endswith(b"\n"):
    d = s.recv(64)
    if not d: break
    data += d
with open(sys.argv[2] + "/held.tmp", "w") as f:
    f.write(data.decode().strip() + "\n")
os.rename(sys.argv[2] + "/held.tmp", sys.argv[2] + "/held")
while not os.path.exists(sys.argv[2] + "/stop"):
    time.sleep(0.2)
s.close()
' $VIP "$TEST_TMP" </dev/null >"$TEST_TMP/held.log" 2>&1 &
held_pid=$!
bg_track $held_pid
at_exit touch "$TEST_TMP/stop"
for _ in $(seq 1 100); do [ -f "$TEST_TMP/held" ] && break; sleep 0.1; done
[ -f "$TEST_TMP/held" ] || fail "the long connection did not open: $(cat "$TEST_TMP/held.log")"
held=$(cat "$TEST_TMP/held")
case "$held" in rs[12]) ;; *) fail "the long connection got '$held'" ;; esac
log "long connection -> $held"

# Twice: wait well past the persistence timeout (the template's own expiry
# plus a collector pass), then new connections from the same client.
for round in 1 2; do
  sleep $((P + 3))
  kill -0 $held_pid 2>/dev/null || fail "the long connection ended early: $(cat "$TEST_TMP/held.log")"
  tpl=$(adm "$LB" -L -n -c | awk '$3 == "ASSURED" && $4 ~ /:0$/' | wc -l)
  log "round $round: $((P + 3)) s later, templates listed: $tpl"
  got=$(names 4)
  log "round $round: 4 new connections -> $got"
  assert_eq "$got" "$held:4" "round $round: new connections while the long one lives (-p $P)"
  assert_eq "$tpl" 1 "round $round: the controlling template is listed"
done
pass "a template controlling a live connection outlives -p and keeps its client"
