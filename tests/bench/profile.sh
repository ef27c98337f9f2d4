#!/bin/bash
# Profiles the director during a benchmark scenario (guest side):
#   qemu/run --no-module -- tests/bench/profile.sh [rvs|ipvs] [SECS] \
#       [nat-tcp-1|dr-tcp-1|tun-tcp-1|udp-nat|udp-dr] [fast]
# Loads the engine, builds the scenario's topology (as tests/bench/in-vm.sh),
# runs its load (iperf3 1 stream, or connrate's 18-byte UDP flood from 4
# sockets) through the VIP while
# `perf record -a -e cpu-clock` samples every CPU, and prints the top kernel
# symbols (perf report --sort sym), the engine module's own symbols and the
# share of each module; "fast" turns rvs's ingress fast path on. rvs.ko is offered to perf through --symfs so its
# symbols have names.
. "$(dirname "$0")/../lib.sh"
eng=${1:-rvs} secs=${2:-5} scen=${3:-nat-tcp-1} fast=${4:-}
CONNRATE=$RVS_ROOT/target/release/connrate
command -v perf >/dev/null || skip "perf not installed"
grep -q '^rvs ' /proc/modules && rmmod rvs
grep -q '^ip_vs ' /proc/modules && modprobe -r ip_vs_rr ip_vs
if [ "$eng" = rvs ]; then insmod "$RVS_ROOT/rvs.ko" || fail insmod; ADM=rvsadm
else modprobe ip_vs && modprobe ip_vs_rr || fail modprobe; ADM=ipvsadm; fi
mk_test_tmp
export TMPDIR=$TEST_TMP
# perf finds module objects under <symfs>/lib/modules/<release>/.
symfs=$TEST_TMP/symfs
mkdir -p "$symfs/lib/modules/$(uname -r)/extra"
cp "$RVS_ROOT/rvs.ko" "$symfs/lib/modules/$(uname -r)/extra/"
for m in $(modinfo -n ip_vs ip_vs_rr 2>/dev/null); do cp "$m" "$symfs/lib/modules/$(uname -r)/extra/" 2>/dev/null; done
# Topology and service: "TOPO METHOD PROTO PORT" per scenario.
case $scen in
  nat-tcp-1) set -- nat -m t 5201 ;;
  dr-tcp-1) set -- dr -g t 5201 ;;
  tun-tcp-1) set -- tun -i t 5201 ;;
  udp-nat) set -- nat -m u 9000 ;;
  udp-dr) set -- dr -g u 9000 ;;
  *) fail "unknown scenario $scen" ;;
esac
case $1 in
  nat) topo_nat prof 1 ;;
  dr) topo_direct prof; direct_rs ;;
  tun) topo_direct prof; tun_rs ;;
esac
adm_ok "$LB" -A -$3 $VIP:$4 -s rr
adm_ok "$LB" -a -$3 $VIP:$4 -r ${RIP[1]}:$4 $2 -w 1
[ "$fast" = fast ] && [ "$eng" = rvs ] && adm_ok "$LB" --set-option fastpath=1
# TUN: MSS 1400, so segments fit the tunnel without PMTU discovery.
mss=()
[ "$1" = tun ] && mss=(-M 1400)
if [ "$3" = t ]; then
  ip netns exec "${RS[1]}" iperf3 -s -1 -p 5201 >/dev/null 2>&1 </dev/null &
  bg_track $!
  wait_listen "${RS[1]}" tcp 5201
  load() { ip netns exec "$CL" iperf3 -c $VIP -p 5201 -t "$secs" -P 1 "${mss[@]}" 2>&1 | grep -E 'sender|receiver'; }
else
  ip netns exec "${RS[1]}" "$CONNRATE" udp-sink 9000 -t "$secs" >"$TEST_TMP/sink" 2>&1 </dev/null &
  bg_track $!
  wait_listen "${RS[1]}" udp 9000
  load() { ip netns exec "$CL" "$CONNRATE" udp-flood $VIP:9000 -c 4 -t $((secs + 1)) -l 18; sleep 1; cat "$TEST_TMP/sink"; }
fi
perf record -q -a -e cpu-clock -o "$TEST_TMP/perf.data" -- bash -c "$(declare -f load); $(declare -p VIP CL RS TEST_TMP CONNRATE secs mss); load" |
  tee "$TEST_TMP/load.out"
# A sink that saw nothing means the samples are of something else: seen
# under instruction counting, where the sink's 30 s wait for a first
# datagram (guest time) ran out while perf started, and the real server
# answered the whole flood with "port unreachable" (UdpNoPorts).
if [ "$3" = u ] && ! grep -Eq 'received=[1-9]' "$TEST_TMP/load.out"; then
  fail "no datagram reached the real server: this profile is not the scenario's"
fi
rep() { perf report -i "$TEST_TMP/perf.data" --symfs "$symfs" --kallsyms /proc/kallsyms --stdio "$@" 2>/dev/null | grep -v '^#' | grep -v '^$'; }
echo "== $eng $scen: top symbols (all CPUs, cpu-clock samples)"
rep --sort sym | head -40
mod=$([ "$eng" = rvs ] && echo rvs || echo ip_vs)
echo "== $eng $scen: symbols inside [$mod] (percent of all samples)"
rep --dsos "[$mod]" --sort sym | head -25
echo "== $eng $scen: by module/dso"
rep --sort dso | head -12
kill_ns_procs
[ "$eng" = rvs ] && { "$ADM" -C; } || ipvsadm -C
cleanup_ns
sleep 1
[ "$eng" = rvs ] && rmmod rvs || modprobe -r ip_vs_rr ip_vs
exit 0
