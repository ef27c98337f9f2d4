#!/bin/bash
# The family answers in a second network namespace, and namespaces created
# after the module loaded get their state too.
. "$(dirname "$0")/../lib.sh"

newns ns a
ip netns exec "$ns" genl ctrl get name RVS >/dev/null 2>&1 || fail "family RVS not visible in $ns"
command -v rvsadm >/dev/null || fail "rvsadm not on PATH"
out=$(ip netns exec "$ns" rvsadm -L -n 2>&1) || fail "rvsadm -Ln in $ns: $out"
echo "$out" | grep -q '^IP Virtual Server version' || fail "unexpected listing in $ns: $out"
pass "family answers in $ns"
