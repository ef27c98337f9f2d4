# shellcheck shell=bash
# Sourced by tests/lib.sh and tests/vm/run: what a test or the runner
# logged to the kernel since a point, robust to the ring buffer wrapping.

# kmsg_mark: writes a unique line to the kernel log and prints it, for
# dmesg_since.
kmsg_mark() {
  local m="rvs-mark-$$-$RANDOM-$(date +%s%N)"
  echo "$m" > /dev/kmsg
  echo "$m"
}

# dmesg_since MARK: the kernel log after MARK's line. When the ring buffer
# has wrapped and MARK is gone, all of it is newer: prints everything.
# (Counting lines instead fails once the buffer is full: the count stops
# growing and new lines are missed.)
dmesg_since() {
  dmesg | awk -v m="$1" '{line[NR] = $0} index($0, m) {start = NR} END {for (i = start + 1; i <= NR; i++) print line[i]}'
}
