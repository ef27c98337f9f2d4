#!/bin/bash
# The kernel's own IPVS selftest, unchanged: ipvs.sh from the test
# kernel's source tree (tools/testing/selftests/net/netfilter), which
# sends data through a director in DR, NAT and IP-in-IP tunnel mode,
# configured with the real ipvsadm, and compares what the real server
# received. On rvs loaded with ipvs_compat=1 (the rvs pass; the selftest
# sees /proc/sys/net/ipv4/vs and does not load ip_vs) and on the kernel's
# IPVS (the IPVS pass). Its skip (exit 4: a tool missing) is a failure.
. "$(dirname "$0")/../lib.sh"
ipvs_clients
adm_init rr
sel=${RVS_KDIR:-}/tools/testing/selftests/net/netfilter
[ -f "$sel/ipvs.sh" ] || fail "no $sel/ipvs.sh (the test kernel's source tree; qemu/run exports RVS_KDIR)"
command -v socat >/dev/null || fail "socat not installed (qemu/install-deps installs it)"

# Into a file, not a command substitution: a process the selftest leaves
# behind holding its output cannot keep this test waiting.
log=$(mktemp); at_exit "rm -f $log"
(cd "$sel" && exec timeout -k 5 300 bash ./ipvs.sh) >"$log" 2>&1 </dev/null; rc=$?
out=$(cat "$log")
printf '%s\n' "$out" | sed 's/^/#   /' >&2
[ $rc = 0 ] || fail "the kernel's ipvs.sh failed (exit $rc)"
for mode in DR NAT Tunnel; do
  printf '%s\n' "$out" | grep -qx "Testing $mode mode..." || fail "ipvs.sh did not test $mode mode"
done
printf '%s\n' "$out" | grep -q 'ipvs.sh: .*PASS' || fail "ipvs.sh did not say PASS"
if [ "${RVS_COMPAT:-0}" = 1 ]; then
  grep -q '^ip_vs ' /proc/modules && fail "ip_vs is loaded: the selftest did not test rvs"
  assert_eq "$(cat /sys/module/rvs/parameters/ipvs_compat)" Y "rvs's ipvs_compat during the selftest"
fi
pass "the kernel's ipvs.sh (DR, NAT, tunnel) passed on $( [ "${RVS_COMPAT:-0}" = 1 ] && echo "rvs (ipvs_compat=1)" || echo IPVS )"
