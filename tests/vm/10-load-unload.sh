#!/bin/bash
# rvs.ko unloads and loads cleanly, and registers its generic netlink family.
# Each namespace's connection table starts at 256 buckets (rvsadm -L's
# "size="; it grows with its entries, tests/vm/88); the conn_tab_bits
# parameter is its ceiling, and out of its range (8 to 24) the module
# refuses to load and says why.
. "$(dirname "$0")/../lib.sh"

rvs_loaded || fail "rvs.ko is not loaded at test start"
genl ctrl get name RVS >/dev/null 2>&1 || fail "family RVS not registered"
rmmod rvs || fail "rmmod rvs"
rvs_loaded && fail "rvs still in /proc/modules after rmmod"
genl ctrl get name RVS >/dev/null 2>&1 && fail "family RVS still registered after unload"
insmod "$RVS_ROOT/rvs.ko" || fail "insmod rvs.ko"
genl ctrl get name RVS >/dev/null 2>&1 || fail "family RVS not registered after reload"
dmesg | grep -q 'rvs: loaded' || fail "no load message in dmesg"

# size= of the listing's first line: before the first service (the size
# the table will start with) and with a service (the table's own).
size() { rvsadm -L -n | sed -n '1s/.*(size=\([0-9]*\)).*/\1/p'; }
assert_eq "$(size)" 256 "a table's first size"
assert_eq "$(cat /sys/module/rvs/parameters/conn_tab_bits)" 20 "default ceiling in sysfs"
rmmod rvs || fail "rmmod rvs"
for bad in 7 25; do
  mark=$(kmsg_mark)
  insmod "$RVS_ROOT/rvs.ko" conn_tab_bits=$bad 2>/dev/null && fail "conn_tab_bits=$bad was accepted"
  rvs_loaded && fail "rvs loaded with conn_tab_bits=$bad"
  dmesg_since "$mark" | grep -q "conn_tab_bits=$bad: conn_tab_bits must be from 8 to 24" ||
    fail "no reason in the kernel log for refusing conn_tab_bits=$bad"
done
insmod "$RVS_ROOT/rvs.ko" conn_tab_bits=12 || fail "insmod conn_tab_bits=12"
assert_eq "$(cat /sys/module/rvs/parameters/conn_tab_bits)" 12 "conn_tab_bits=12 in sysfs"
assert_eq "$(size)" 256 "table size before a service, conn_tab_bits 12"
newns NS t
ip netns exec "$NS" rvsadm -A -t 10.0.0.1:80 -s rr || fail "a service in a new namespace"
got=$(ip netns exec "$NS" rvsadm -L -n | sed -n '1s/.*(size=\([0-9]*\)).*/\1/p')
assert_eq "$got" 256 "the namespace's new table, conn_tab_bits 12"
ip netns exec "$NS" rvsadm -C || fail "flush"
rmmod rvs || fail "rmmod after conn_tab_bits=12"
insmod "$RVS_ROOT/rvs.ko" || fail "insmod rvs.ko with the default size"
assert_eq "$(cat /sys/module/rvs/parameters/conn_tab_bits)" 20 "default ceiling after reload"
pass "unload and reload clean; tables start at 256 buckets; conn_tab_bits is checked"
