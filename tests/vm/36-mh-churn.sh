#!/bin/bash
# mh while its real servers change: one real server is added and deleted
# in a loop while clients from 40 source addresses open connections. The
# scheduler's Maglev table and its list of servers must always belong
# together: every connection succeeds without a dropped SYN (no SYN
# retransmission) and reaches the server that the table for the list
# before or after the change gives it (a table built for another list
# would send it one server off, or past the end of the list: dropped).
# After the churn, every client reaches exactly the server the Maglev
# computation (tests/py/maglev.py, a model of IPVS's ip_vs_mh) expects.
. "$(dirname "$0")/../lib.sh"
adm_init mh
mk_test_tmp
topo_nat mhc 4
for i in 1 2 3 4; do serve_name_bg "${RS[$i]}" tcp 80 rs$i; done
for i in 1 2 3 4; do wait_listen "${RS[$i]}" tcp 80; done
for i in $(seq 10 49); do echo "addr add 10.0.0.$i/24 dev c0"; done | nsip "$CL"
svc="-t $VIP:80"
adm_ok "$LB" -A $svc -s mh
for i in 1 2 3; do adm_ok "$LB" -a $svc -r ${RIP[$i]}:80 -m -w 1; done

# clients ROUNDS MODE: ROUNDS rounds of one connection from each client
# address; MODE "churn" accepts the server of either list (rs4 in or
# out), "with" only that of the list with rs4. Fails on any error, any
# unexpected server and any SYN retransmission in the client namespace.
clients() {
  ip netns exec "$CL" env PYTHONPATH="$RVS_ROOT/tests/py" python3 - "$VIP" "$1" "$2" ${RIP[1]} ${RIP[2]} ${RIP[3]} ${RIP[4]} <<'PY'
import socket, sys, maglev
vip, rounds, mode, rips = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:8]
name = {"rs%d" % (i + 1): rips[i] for i in range(4)}
def syn_retrans():
    lines = open("/proc/net/netstat").read().split("\n")
    for keys, vals in zip(lines[0::2], lines[1::2]):
        if keys.startswith("TcpExt:"):
            return int(dict(zip(keys.split(), vals.split()))["TCPSynRetrans"])
# Newest first, as the service lists them.
without = [(rips[i], 80, 1) for i in (2, 1, 0)]
with4 = [(rips[3], 80, 1)] + without
lists = [with4] if mode == "with" else [with4, without]
tables = [(l, maglev.table(l)) for l in lists]
clients = ["10.0.0.%d" % i for i in range(10, 50)]
before = syn_retrans()
bad, n, stalled = [], 0, 0
for r in range(rounds):
    for c in clients:
        want = {l[maglev.server_of(t, c)][0] for l, t in tables}
        try:
            s = socket.socket()
            s.settimeout(10)
            s.bind((c, 0))
            s.connect((vip, 80))
            got = b""
            while True:
                d = s.recv(64)
                if not d:
                    break
                got += d
            s.close()
            got = got.decode().strip()
        except OSError as e:
            got = "ERR:%s" % e
        n += 1
        if got.startswith("ERR") and rips[3] in want and mode == "churn":
            # Its server (rs4) was deleted under it: IPVS too lets such a
            # connection stall now and then. Counted, not a failure.
            stalled += 1
        elif name.get(got) not in want:
            bad.append("%s -> %s (expected %s)" % (c, got, " or ".join(sorted(want))))
retrans = syn_retrans() - before
print("%d connections, %d unexpected, %d SYN retransmissions, %d to rs4 stalled" % (n, len(bad), retrans, stalled))
for b in bad[:10]:
    print("  " + b)
sys.exit(1 if bad or retrans else 0)
PY
}


adm_ok "$LB" -a $svc -r ${RIP[4]}:80 -m -w 1
out=$(clients 1 with 2>&1) || fail "before the churn: $out"
log "before the churn: $out"

# The churn: rs4 leaves and comes back in a loop, as fast as one netlink
# socket goes (the engine's family: IPVS's numbering), until the file
# "churn" is removed; "changes" counts the pairs.
touch "$TEST_TMP/churn"
ip netns exec "$LB" env PYTHONPATH="$RVS_ROOT/tests/py" python3 - "$TEST_TMP" $VIP ${RIP[4]} "$ADM" <<'PY' &
import sys, os, rvsnl
tmp, vip, rip, adm = sys.argv[1:5]
g = rvsnl.Genl(family=b"IPVS" if adm == "ipvsadm" else b"RVS")
svc = rvsnl.svc(addr=vip, port=80, sched=None, flags=False)
dest = rvsnl.dest(addr=rip, port=80, fwd=0, weight=1)
open(tmp + "/ready", "w").close()
n = bad = 0
while os.path.exists(tmp + "/churn"):
    e1, m1, _ = g.rvs("RVS_CMD_DEL_DEST", svc, dest)
    e2, m2, _ = g.rvs("RVS_CMD_NEW_DEST", svc, dest)
    n += 1
    if e1 or e2:
        bad += 1
        if bad < 5:
            print("# churn: %d %s / %d %s" % (e1, m1, e2, m2), file=sys.stderr)
open(tmp + "/changes", "w").write("%d %d\n" % (n, bad))
PY
churn=$!
bg_track $churn
for i in $(seq 1 600); do [ -e "$TEST_TMP/ready" ] && break; sleep 0.1; done
[ -e "$TEST_TMP/ready" ] || fail "the churn process did not start"
out=$(clients "${MH_CHURN_ROUNDS:-10}" churn 2>&1); rc=$?
rm -f "$TEST_TMP/churn"
wait $churn
read -r changes churn_bad <"$TEST_TMP/changes" || fail "the churn process failed"
log "during $changes deletions and re-additions of rs4: $out"
[ $rc = 0 ] || fail "during the churn: $out"
[ "$churn_bad" = 0 ] || fail "$churn_bad of $changes churn requests failed"
[ "$changes" -gt 2 ] || fail "the churn made only $changes changes"
adm "$LB" -L -n $svc | sed 's/^/#   /' >&2
out=$(clients 2 with 2>&1) || fail "after the churn: $out"
log "after the churn: $out"
pass "mh: no connection lost or misrouted while its servers changed"
