#!/bin/bash
# rvs.ko unloads and loads cleanly, and registers its generic netlink family.
. "$(dirname "$0")/../lib.sh"

rvs_loaded || fail "rvs.ko is not loaded at test start"
genl ctrl get name RVS >/dev/null 2>&1 || fail "family RVS not registered"
rmmod rvs || fail "rmmod rvs"
rvs_loaded && fail "rvs still in /proc/modules after rmmod"
genl ctrl get name RVS >/dev/null 2>&1 && fail "family RVS still registered after unload"
insmod "$RVS_ROOT/rvs.ko" || fail "insmod rvs.ko"
genl ctrl get name RVS >/dev/null 2>&1 || fail "family RVS not registered after reload"
dmesg | grep -q 'rvs: loaded' || fail "no load message in dmesg"
pass "unload and reload clean"
