#!/bin/bash
# 100 load/unload cycles, with 20 extra network namespaces alive so every load
# builds and every unload frees 21 per-namespace states: no splat (checked by
# the runner) and no kernel memory growth beyond noise.
. "$(dirname "$0")/../lib.sh"

cycles=${RVS_CYCLES:-100}
for i in $(seq 1 20); do mkns "n$i" >/dev/null; done
rmmod rvs || fail "rmmod rvs"
# Warm up: first loads populate caches (kernfs, module loader) for good.
# Expedited grace periods: the same work, without waiting out normal RCU
# latency on every unload (TCG makes those slow).
echo 1 > /sys/kernel/rcu_expedited 2>/dev/null
at_exit 'echo 0 > /sys/kernel/rcu_expedited'
for i in 1 2 3; do insmod "$RVS_ROOT/rvs.ko" && rmmod rvs || fail "warm-up cycle $i"; done
settle_memory
before=$(kmem_kb)
for i in $(seq 1 "$cycles"); do
  insmod "$RVS_ROOT/rvs.ko" || fail "insmod failed at cycle $i"
  rmmod rvs || fail "rmmod failed at cycle $i"
done
settle_memory
after=$(kmem_kb)
insmod "$RVS_ROOT/rvs.ko" || fail "final insmod"
growth=$((after - before))
log "kernel memory before ${before} kB, after ${after} kB, growth ${growth} kB over $cycles cycles"
# A leak of one per-namespace state per cycle (21 x 100 objects) of even a
# few hundred bytes would pass 512 kB; what remains is allocator noise.
[ "$growth" -lt 512 ] || fail "kernel memory grew by ${growth} kB over $cycles cycles"
pass "$cycles cycles clean"
