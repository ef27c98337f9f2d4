#!/bin/bash
# Connection listing at scale: 100,000 UDP flows through NAT, then -L -c
# (and --json) lists each exactly once. The listing is a multipart netlink
# dump that is resumed many times, so an entry skipped or repeated at a
# message boundary, or entries lost while the dump walks the table, show up
# as a wrong count or a duplicate. On IPVS, ipvsadm reads the same list
# from /proc/net/ip_vs_conn; --json is rvsadm's only.
. "$(dirname "$0")/../lib.sh"
adm_init rr
mk_test_tmp
topo_nat big 2
# IPVS's /proc/net/ip_vs_conn walks the table from its start at every
# read, so its listing time grows with the square of the entries (221 s
# for 100,000 under TCG, rvs's dump 8 s): 20,000 there check the same
# semantics.
if [ "$ADM" = rvsadm ]; then N=${RVS_LIST_FLOWS:-100000}; else N=${RVS_LIST_FLOWS:-20000}; fi
for i in 1 2; do drop_udp_port "${RS[$i]}" 53; done
adm_ok "$LB" --set 0 0 3600
adm_ok "$LB" -A -u $VIP:53 -s rr
for i in 1 2; do adm_ok "$LB" -a -u $VIP:53 -r ${RIP[$i]}:53 -m; done

start=$(date +%s.%N)
sent=$(ip netns exec "$CL" python3 "$RVS_ROOT/tests/py/udp_flows.py" $VIP 53 $N 10.0.0.2 10.0.0.3) ||
  fail "udp_flows.py failed"
log "sent $sent flows in $(echo "$(date +%s.%N) - $start" | bc) s"
assert_eq "$sent" "$N" "flows sent"

# Wait until the director has scheduled them all (InActConn of the service).
inact() { adm "$LB" -L -n | awk '$1 == "->" && $2 ~ /:53$/ {s += $6} END {print s + 0}'; }
for _ in $(seq 60); do [ "$(inact)" -ge "$N" ] && break; sleep 1; done
assert_eq "$(inact)" "$N" "inactive connections after $N flows"

t0=$(date +%s.%N)
adm "$LB" -L -n -c >"$TEST_TMP/conns" 2>"$TEST_TMP/err" || fail "-L -n -c: $(cat "$TEST_TMP/err")"
secs=$(echo "$(date +%s.%N) - $t0" | bc)
lines=$(($(wc -l <"$TEST_TMP/conns") - 2))
log "-L -n -c listed $lines entries in $secs s"
head -4 "$TEST_TMP/conns" | sed 's/^/#   /' >&2
assert_eq "$lines" "$N" "entries listed"
# Each client address:port exactly once, and exactly the ones sent.
awk 'NR > 2 {print $4}' "$TEST_TMP/conns" | sort >"$TEST_TMP/got"
python3 - "$N" >"$TEST_TMP/want" <<'PY'
import sys
n, out = int(sys.argv[1]), []
for src in ("10.0.0.2", "10.0.0.3"):
    for port in range(1024, 65536):
        if len(out) == n:
            break
        out.append("%s:%d" % (src, port))
print("\n".join(sorted(out)))
PY
dups=$(uniq -d "$TEST_TMP/got" | head -3)
[ -z "$dups" ] || fail "entries listed twice, e.g. $dups"
cmp -s "$TEST_TMP/got" "$TEST_TMP/want" || fail "listed clients differ from those sent: $(diff "$TEST_TMP/want" "$TEST_TMP/got" | head -4 | tr '\n' ' ')"
awk 'NR > 2 && ($1 != "UDP" || $5 != "10.0.100.1:53") {bad++} END {exit bad > 0}' "$TEST_TMP/conns" ||
  fail "entries with the wrong protocol or virtual address"

[ "$ADM" = rvsadm ] || pass "$N connections listed exactly once"
t0=$(date +%s.%N)
adm "$LB" -L -n -c --json >"$TEST_TMP/json" || fail "-L -n -c --json"
log "-L -n -c --json in $(echo "$(date +%s.%N) - $t0" | bc) s"
python3 - "$TEST_TMP/json" "$N" <<'PY' || fail "JSON listing"
import json, sys
conns = json.load(open(sys.argv[1]))["connections"]
keys = {c["client"] for c in conns}
assert len(conns) == int(sys.argv[2]) == len(keys), (len(conns), len(keys))
PY
pass "$N connections listed exactly once"
