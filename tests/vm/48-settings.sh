#!/bin/bash
# Runtime settings (--set-option, -L --options): defaults, changes, JSON,
# per-namespace values, invalid input refused by rvsadm and, bypassing it,
# by the kernel with ERANGE and an extended-ACK message; a failed request
# changes nothing. What each setting does is tested with its feature.
. "$(dirname "$0")/../lib.sh"
adm_init rr
rvs_only
newns LB lb
newns OTHER other

out=$(adm "$LB" -L --options) || fail "-L --options: $out"
log "defaults:"; echo "$out" | sed 's/^/#   /' >&2
assert_eq "$(echo "$out" | awk '$1 == "expire_nodest_conn" {print $2}')" 0 "default expire_nodest_conn"
assert_eq "$(echo "$out" | awk '$1 == "expire_quiescent_template" {print $2}')" 0 "default expire_quiescent_template"

adm_ok "$LB" --set-option expire_nodest_conn=1 --set-option expire_quiescent_template=1
out=$(adm "$LB" -L --options --json) || fail "-L --options --json: $out"
got=$(echo "$out" | python3 -c 'import json,sys; o=json.load(sys.stdin)["options"]; print(o["expire_nodest_conn"], o["expire_quiescent_template"])') \
  || fail "bad JSON: $out"
assert_eq "$got" "1 1" "settings after --set-option"

# Timeouts and settings share SET_CONFIG: --set leaves settings alone and
# --set-option leaves timeouts alone.
adm_ok "$LB" --set 0 0 77
assert_eq "$(adm "$LB" -L --options | awk '$1 == "expire_nodest_conn" {print $2}')" 1 "setting after --set"
adm_ok "$LB" --set-option expire_nodest_conn=0
assert_eq "$(adm "$LB" -L --timeout)" "Timeout (tcp tcpfin udp): 900 120 77" "timeouts after --set-option"

# Another namespace keeps its own values.
assert_eq "$(adm "$OTHER" -L --options | awk '$1 == "expire_quiescent_template" {print $2}')" 0 "other namespace"

# rvsadm refuses bad input itself (exit 2, a message naming the problem).
for bad in "expire_nodest_conn=2" "nosuch=1" "expire_nodest_conn" "expire_nodest_conn=-1"; do
  out=$(adm "$LB" --set-option "$bad" 2>&1); rc=$?
  [ $rc = 2 ] || fail "--set-option $bad: exit $rc, want 2 ($out)"
  log "--set-option $bad -> $out"
done

# The kernel refuses them too (rvsadm bypassed), atomically.
ip netns exec "$LB" python3 - "$RVS_ROOT/tests/py" <<'PY' || fail "raw SET_CONFIG checks"
import errno, struct, sys
sys.path.insert(0, sys.argv[1])
from rvsnl import Genl, U, attr, u16, u32
nl = Genl()
bad = []
def check(name, want, text, *attrs):
    err, msg, _ = nl.rvs("RVS_CMD_SET_CONFIG", *attrs)
    print("# %-40s errno=%d %r" % (name, err, msg))
    if err != want or text.lower() not in msg.lower():
        bad.append(name)
n, q = U["RVS_CMD_ATTR_EXPIRE_NODEST_CONN"], U["RVS_CMD_ATTR_EXPIRE_QUIESCENT_TEMPLATE"]
check("value 2", errno.ERANGE, "expire_nodest_conn must be 0 or 1", attr(n, u32(2)))
check("value 0xffffffff", errno.ERANGE, "must be 0 or 1", attr(q, u32(0xFFFFFFFF)))
check("2-byte payload", errno.EINVAL, "", attr(n, u16(1)))
check("one good, one bad", errno.ERANGE, "expire_quiescent_template", attr(n, u32(1)), attr(q, u32(5)))
check("unknown top-level attribute", errno.EINVAL, "", attr(U["__RVS_CMD_ATTR_MAX"], u32(1)))
sys.exit(1 if bad else 0)
PY
# "one good, one bad" must not have applied the good half.
assert_eq "$(adm "$LB" -L --options | awk '$1 == "expire_nodest_conn" {print $2}')" 0 "after a refused request"
pass "settings listed, changed, isolated per namespace and validated"
