#!/bin/bash
# The kernel side validates every request itself: malformed, truncated or
# invalid messages built byte by byte (bypassing rvsadm's checks) get the
# precise errno and an extended-ACK message, and the table stays as the
# valid requests left it. rvs only.
. "$(dirname "$0")/../lib.sh"
adm_init rr
rvs_only
newns LB lb
ip netns exec "$LB" python3 "$RVS_ROOT/tests/py/netlink_validation.py" || fail "netlink validation cases"
pass "every bad request rejected with errno and message"
