#!/bin/bash
# Profiles the director during the nat-tcp-1 benchmark scenario (guest side):
#   qemu/run --no-module -- tests/bench/profile.sh [rvs|ipvs] [SECS]
# Loads the engine, builds the NAT topology, runs iperf3 (1 stream) through
# the VIP while `perf record -a -e cpu-clock` samples every CPU, and prints
# the top kernel symbols (perf report --sort sym).
. "$(dirname "$0")/../lib.sh"
eng=${1:-rvs} secs=${2:-5}
command -v perf >/dev/null || skip "perf not installed"
grep -q '^rvs ' /proc/modules && rmmod rvs
grep -q '^ip_vs ' /proc/modules && modprobe -r ip_vs_rr ip_vs
if [ "$eng" = rvs ]; then insmod "$RVS_ROOT/rvs.ko" || fail insmod; ADM=rvsadm
else modprobe ip_vs && modprobe ip_vs_rr || fail modprobe; ADM=ipvsadm; fi
mk_test_tmp
export TMPDIR=$TEST_TMP
topo_nat prof 1
adm_ok "$LB" -A -t $VIP:5201 -s rr
adm_ok "$LB" -a -t $VIP:5201 -r ${RIP[1]}:5201 -m -w 1
ip netns exec "${RS[1]}" iperf3 -s -1 -p 5201 >/dev/null 2>&1 </dev/null &
bg_track $!
wait_listen "${RS[1]}" tcp 5201
perf record -q -a -e cpu-clock -o "$TEST_TMP/perf.data" -- \
  ip netns exec "$CL" iperf3 -c $VIP -p 5201 -t "$secs" -P 1 2>&1 | grep -E 'sender|receiver'
echo "== $eng: top symbols (all CPUs, cpu-clock samples)"
perf report -i "$TEST_TMP/perf.data" --stdio --sort sym 2>/dev/null | grep -v '^#' | grep -v '^$' | head -45
mod=$([ "$eng" = rvs ] && echo rvs || echo ip_vs)
echo "== $eng: symbols inside [$mod] (percent of all samples)"
perf report -i "$TEST_TMP/perf.data" --stdio --dsos "[$mod]" --sort sym 2>/dev/null | grep -v '^#' | grep -v '^$' | head -15
echo "== $eng: by module/dso"
perf report -i "$TEST_TMP/perf.data" --stdio --sort dso 2>/dev/null | grep -v '^#' | grep -v '^$' | head -12
kill_ns_procs
[ "$eng" = rvs ] && { "$ADM" -C; } || ipvsadm -C
cleanup_ns
sleep 1
[ "$eng" = rvs ] && rmmod rvs || modprobe -r ip_vs_rr ip_vs
exit 0
