#!/bin/bash
# Benchmark smoke (CI): runs tests/bench/in-vm.sh in RVS_BENCH_QUICK=1 mode
# (1 round, 1 s samples, small counts; nat-tcp-1, conntab, ctl on
# IPVS then rvs) and checks that every metric has a number for both
# engines. Numbers are not judged.
. "$(dirname "$0")/../lib.sh"

bench=$RVS_ROOT/tests/bench/in-vm.sh
connrate=$RVS_ROOT/target/release/connrate
[ -x "$connrate" ] || fail "connrate not built cargo build --release -p connrate"
command -v ipvsadm >/dev/null || fail "ipvsadm not installed"
command -v iperf3 >/dev/null || fail "iperf3 not installed"
modinfo ip_vs >/dev/null 2>&1 || fail "no ip_vs module"
mk_test_tmp

# The bench loads and unloads the engines itself; tests/vm/run reloads rvs after.
RVS_BENCH_QUICK=1 bash "$bench" >"$TEST_TMP/out" 2>"$TEST_TMP/err"
rc=$?
sed 's/^/#   /' "$TEST_TMP/err" | grep -v '#   # \[' >&2
[ $rc = 0 ] || fail "in-vm.sh exited $rc"
metrics=$(awk -F'\t' '$1 == "RVSBENCH" {print $2}' "$TEST_TMP/out" | sort -u)
[ -n "$metrics" ] || fail "no measurements"
for m in $metrics; do
  for eng in ipvs rvs; do
    v=$(awk -F'\t' -v m="$m" -v e="$eng" '$1 == "RVSBENCH" && $2 == m && $3 == e {print $5}' "$TEST_TMP/out" | head -1)
    # rvsadm may have no -R yet, IPVS has no atomic restore; a merged
    # slab cache has no slabinfo line.
    case "$m/$eng/$v" in ctl-restore/rvs/NA|ctl-restore-atomic/ipvs/NA|conn-objsize/*/NA) continue ;; esac
    # Differences to the plain-forwarding baseline may be 0 or below in
    # a noisy one-round smoke run, and so may memory per entry (slab
    # growth over only ~1,000 entries: other caches shrinking at the same
    # time gave IPVS -164 B once); everything else must be positive.
    case $m in
      *-engine*|mem-per-conn) [[ "$v" =~ ^-?[0-9]+(\.[0-9]+)?$ ]] || fail "$m on $eng: no number ('$v')" ;;
      *) [[ "$v" =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v v="$v" 'BEGIN {exit !(v > 0)}' ||
           fail "$m on $eng: no positive number ('$v')" ;;
    esac
  done
done
pass "bench quick mode: $(echo $metrics | wc -w) metrics with numbers for IPVS and rvs"
