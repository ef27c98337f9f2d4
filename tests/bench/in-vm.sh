#!/bin/bash
# rvs benchmark, guest side (run by tests/bench/run through qemu/run
# --no-module, or by tests/vm/50-bench-smoke.sh). For each round, each
# scenario runs on the kernel's IPVS (modprobe ip_vs, ipvsadm) and then on
# rvs (insmod rvs.ko, rvsadm), A/B/A/B, on a topology rebuilt from scratch
# each time; the engine is loaded just before and unloaded just after each
# sample, so the two are never loaded together.
#
# Prints a progress line per scenario+engine+round on stderr and one
# machine-readable line per measurement on stdout:
#   RVSBENCH <TAB> metric <TAB> engine <TAB> round <TAB> value|NA <TAB> unit
#
# Environment:
#   RVS_BENCH_ROUNDS=3     rounds (A/B pairs) per scenario
#   RVS_BENCH_SECS=5       seconds per traffic sample
#   RVS_BENCH_SVCS=10      services (10 real servers each) for the control plane
#   RVS_BENCH_SCENARIOS="nat-tcp-1 nat-tcp-8 dr-tcp-1 tun-tcp-1 conn-rate udp-nat udp-dr ctl"
#   RVS_BENCH_QUICK=1      smoke mode: 1 round, 1 s samples, 2 services, scenarios
#                          nat-tcp-1 conn-rate udp-nat ctl (a few minutes under TCG)
#
# Internal: in-vm.sh --one SCENARIO runs one sample with $RVS_ADM as engine.
set -u
here=$(cd "$(dirname "$0")" && pwd)
RVS_ROOT=${RVS_ROOT:-$(cd "$here/../.." && pwd)}
CONNRATE=${RVS_BENCH_CONNRATE:-$here/connrate/target/release/connrate}

if [ "${RVS_BENCH_QUICK:-0}" = 1 ]; then
  : "${RVS_BENCH_ROUNDS:=1}" "${RVS_BENCH_SECS:=1}" "${RVS_BENCH_SVCS:=2}"
  : "${RVS_BENCH_SCENARIOS:=nat-tcp-1 conn-rate udp-nat ctl}"
fi
ROUNDS=${RVS_BENCH_ROUNDS:-3}
SECS=${RVS_BENCH_SECS:-5}
# Under TCG one admin process costs ~0.3 s (ipvsadm) to ~0.8 s (rvsadm), so
# the brief's 1,000 services x 10 (11,000 processes) would take hours.
SVCS=${RVS_BENCH_SVCS:-10}
SCENARIOS=${RVS_BENCH_SCENARIOS:-nat-tcp-1 nat-tcp-8 dr-tcp-1 tun-tcp-1 conn-rate udp-nat udp-dr ctl}

# ---------------------------------------------------------------------------
# One sample (child process: lib.sh's exit trap removes its namespaces).
if [ "${1:-}" = --one ]; then
  scen=$2
  . "$RVS_ROOT/tests/lib.sh" || exit 1
  adm_init rr >/dev/null 2>&1
  mk_test_tmp
  export TMPDIR=$TEST_TMP   # iperf3 writes a temporary file
  val() { printf 'VAL\t%s\t%s\t%s\n' "$1" "$2" "$3"; }

  # iperf3 P [EXTRA...]: client in $CL to $VIP:5201, server in ${RS[1]};
  # prints the receiver's Mbit/s.
  iperf() {
    local p=$1 out; shift
    ip netns exec "${RS[1]}" iperf3 -s -1 -p 5201 >/dev/null 2>&1 </dev/null &
    bg_track $!
    wait_listen "${RS[1]}" tcp 5201
    out=$(timeout $((SECS + 30)) ip netns exec "$CL" iperf3 -c $VIP -p 5201 -t "$SECS" -P "$p" -J "$@" 2>&1) ||
      fail "iperf3 failed: $(printf '%s' "$out" | tail -3)"
    printf '%s' "$out" | python3 -c 'import json,sys; print("%.1f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e6))'
  }
  direct_rs() {  # real server of topo_direct: VIP on lo, no ARP for it, no rp_filter
    nsysctl "${RS[1]}" net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2 \
      net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
      net.ipv4.conf.r0.rp_filter=0 net.ipv4.conf.f0.rp_filter=0
    ip -n "${RS[1]}" addr add $VIP/32 dev lo
  }
  tun_rs() {
    ip -n "${RS[1]}" link set tunl0 up 2>/dev/null || { ip -n "${RS[1]}" link add tunl0 type ipip; ip -n "${RS[1]}" link set tunl0 up; }
    nsysctl "${RS[1]}" net.ipv4.conf.tunl0.rp_filter=0
    direct_rs
    nsysctl "$LB" net.ipv4.ip_forward=0 net.ipv4.conf.all.send_redirects=0 net.ipv4.conf.default.send_redirects=0
  }
  # udp_rate PROTO_FLAGS: sink on RS1 port 9000, 4 flows of 18-byte
  # datagrams from the client for SECS+2 s; prints the sink's packets/s.
  udp_rate() {
    ip netns exec "${RS[1]}" "$CONNRATE" udp-sink 9000 -t "$SECS" >"$TEST_TMP/sink" 2>&1 </dev/null &
    local sink=$!
    bg_track $sink
    wait_listen "${RS[1]}" udp 9000
    ip netns exec "$CL" "$CONNRATE" udp-flood $VIP:9000 -c 4 -t $((SECS + 2)) -l 18 >"$TEST_TMP/flood" 2>&1
    wait $sink
    log "$(cat "$TEST_TMP/flood") / $(cat "$TEST_TMP/sink")"
    sed -n 's/.*recv_pps=\([0-9.]*\).*/\1/p' "$TEST_TMP/sink"
  }

  case $scen in
    nat-tcp-1|nat-tcp-8)
      topo_nat nat 1
      adm_ok "$LB" -A -t $VIP:5201 -s rr
      adm_ok "$LB" -a -t $VIP:5201 -r ${RIP[1]}:5201 -m -w 1
      v=$(iperf "${scen##*-}") || exit 1
      val "$scen" "$v" Mbit/s ;;
    dr-tcp-1)
      topo_direct dr; direct_rs
      adm_ok "$LB" -A -t $VIP:5201 -s rr
      adm_ok "$LB" -a -t $VIP:5201 -r ${RIP[1]}:5201 -g -w 1
      v=$(iperf 1) || exit 1
      val "$scen" "$v" Mbit/s ;;
    tun-tcp-1)
      # MSS 1400 so segments plus the IPIP header fit the 1500 MTU without
      # depending on path MTU discovery (same for both engines).
      topo_direct tun; tun_rs
      adm_ok "$LB" -A -t $VIP:5201 -s rr
      adm_ok "$LB" -a -t $VIP:5201 -r ${RIP[1]}:5201 -i -w 1
      v=$(iperf 1 -M 1400) || exit 1
      val "$scen" "$v" Mbit/s ;;
    conn-rate)
      # Short TCP connections through NAT, rr over 2 real servers that
      # accept and close at once; 8 concurrent connections.
      topo_nat cr 2
      nsysctl "$CL" net.ipv4.ip_local_port_range="10000 65000"
      for i in 1 2; do
        ip netns exec "${RS[$i]}" "$CONNRATE" tcp-server 80 </dev/null >/dev/null 2>&1 &
        bg_track $!
      done
      for i in 1 2; do wait_listen "${RS[$i]}" tcp 80; done
      adm_ok "$LB" -A -t $VIP:80 -s rr
      for i in 1 2; do adm_ok "$LB" -a -t $VIP:80 -r ${RIP[$i]}:80 -m -w 1; done
      out=$(ip netns exec "$CL" "$CONNRATE" tcp-client $VIP:80 -c 8 -t "$SECS") || fail "connrate: $out"
      log "$out"
      case $out in *" errors=0 "*) ;; *) log "WARNING: connection errors: $out" ;; esac
      val "$scen" "$(printf '%s' "$out" | sed -n 's/.*conn_per_s=\([0-9.]*\).*/\1/p')" conn/s ;;
    udp-nat)
      topo_nat un 1
      adm_ok "$LB" -A -u $VIP:9000 -s rr
      adm_ok "$LB" -a -u $VIP:9000 -r ${RIP[1]}:9000 -m -w 1
      val "$scen" "$(udp_rate)" pkt/s ;;
    udp-dr)
      topo_direct ud; direct_rs
      adm_ok "$LB" -A -u $VIP:9000 -s rr
      adm_ok "$LB" -a -u $VIP:9000 -r ${RIP[1]}:9000 -g -w 1
      val "$scen" "$(udp_rate)" pkt/s ;;
    ctl)
      # Control plane: SVCS TCP services with 10 real servers each, one
      # admin process per operation; then one full listing; then (ipvsadm
      # only) flush and restore the same rules from ipvsadm -S output.
      newns LB ctl
      # The guest's root is the host's filesystem over 9p without a page
      # cache: every exec of the 1.1 MB rvsadm re-reads it through 9p
      # (~0.5 s per process under TCG, more than the whole ipvsadm
      # operation). Run the admin tool from a tmpfs copy, as it would run
      # from a local disk. ipvsadm is copied too (its small shared
      # libraries still come over 9p).
      for d in /dev/shm "$TEST_TMP"; do
        if cp "$(command -v "$ADM")" "$d/$ADM" 2>/dev/null; then ADM=$d/$ADM; break; fi
      done
      log "admin tool run from $ADM"
      gen_ops() {  # prints one admin command line per operation
        local i j a
        for i in $(seq 0 $((SVCS - 1))); do
          a="10.$((100 + i / 65536)).$((i / 256 % 256)).$((i % 256))"
          echo "-A -t $a:80 -s rr"
          for j in $(seq 1 10); do echo "-a -t $a:80 -r 172.16.$((i % 250)).$j:80 -m -w 1"; done
        done
      }
      gen_ops >"$TEST_TMP/ops"
      nops=$(wc -l <"$TEST_TMP/ops")
      ms() { echo $(( $(date +%s%N) / 1000000 )); }
      t0=$(ms)
      ip netns exec "$LB" bash -c 'while read -r line; do $1 $line || exit 1; done' _ "$ADM" <"$TEST_TMP/ops" ||
        fail "adding $SVCS services failed"
      t1=$(ms)
      ip netns exec "$LB" "$ADM" -L -n >"$TEST_TMP/list" || fail "$ADM -L -n failed"
      t2=$(ms)
      nsvc=$(grep -c '^TCP' "$TEST_TMP/list") ndst=$(grep -c -- '^  -> [0-9]' "$TEST_TMP/list")
      log "$ADM: $nops operations in $((t1 - t0)) ms; listing: $nsvc services, $ndst real servers in $((t2 - t1)) ms"
      [ "$nsvc" = "$SVCS" ] && [ "$ndst" = $((SVCS * 10)) ] ||
        fail "listing shows $nsvc services and $ndst real servers, expected $SVCS and $((SVCS * 10))"
      val ctl-add-svcs "$(awk -v a=$t0 -v b=$t1 'BEGIN {printf "%.3f", (b - a) / 1000}')" s
      val ctl-list "$(awk -v a=$t1 -v b=$t2 'BEGIN {printf "%.3f", (b - a) / 1000}')" s
      if [ "${ADM##*/}" = ipvsadm ]; then
        ip netns exec "$LB" ipvsadm -S -n >"$TEST_TMP/rules" || fail "ipvsadm -S"
        ip netns exec "$LB" ipvsadm -C
        t3=$(ms)
        ip netns exec "$LB" ipvsadm -R <"$TEST_TMP/rules" || fail "ipvsadm -R"
        t4=$(ms)
        val ctl-restore "$(awk -v a=$t3 -v b=$t4 'BEGIN {printf "%.3f", (b - a) / 1000}')" s
      else
        val ctl-restore NA s   # rvsadm has no -R yet
      fi
      ip netns exec "$LB" "$ADM" -C
      case $ADM in /*) rm -f "$ADM" ;; esac ;;
    *) fail "unknown scenario $scen" ;;
  esac
  exit 0
fi

# ---------------------------------------------------------------------------
# Driver.
[ -x "$CONNRATE" ] || { echo "in-vm.sh: $CONNRATE missing (cargo build --release in tests/bench/connrate)" >&2; exit 1; }
command -v ipvsadm >/dev/null || { echo "in-vm.sh: ipvsadm not installed" >&2; exit 1; }
command -v iperf3 >/dev/null || { echo "in-vm.sh: iperf3 not installed" >&2; exit 1; }

rvs_loaded() { grep -q '^rvs ' /proc/modules; }
ipvs_loaded() { grep -q '^ip_vs ' /proc/modules; }
# Every loaded IPVS module, schedulers first (each holds ip_vs): other
# tests may have left more than ip_vs_rr loaded.
ipvs_mods() { awk '$1 ~ /^ip_vs_/ {print $1}' /proc/modules; echo ip_vs; }

engine_up() {
  case $1 in
    ipvs)
      rvs_loaded && { echo "in-vm.sh: rvs still loaded" >&2; return 1; }
      modprobe ip_vs && modprobe ip_vs_rr ;;
    rvs)
      ipvs_loaded && { echo "in-vm.sh: ip_vs still loaded" >&2; return 1; }
      insmod "$RVS_ROOT/rvs.ko" ;;
  esac
}
engine_down() {
  local i
  case $1 in
    ipvs) for i in 1 2 3 4 5; do modprobe -r $(ipvs_mods) 2>/dev/null && return 0; sleep 1; done ;;
    rvs) for i in 1 2 3 4 5; do rmmod rvs 2>/dev/null && return 0; sleep 1; done ;;
  esac
  echo "in-vm.sh: cannot unload $1" >&2
  return 1
}
# Start clean: neither engine loaded.
rvs_loaded && { rmmod rvs || exit 1; }
ipvs_loaded && { modprobe -r $(ipvs_mods) || exit 1; }

echo "# rvs bench: rounds=$ROUNDS secs=$SECS svcs=$SVCS cpus=$(nproc) kernel=$(uname -r)" >&2
echo "# scenarios: $SCENARIOS" >&2
printf 'RVSBENCH_META\trounds=%s\tsecs=%s\tsvcs=%s\tcpus=%s\tkernel=%s\n' "$ROUNDS" "$SECS" "$SVCS" "$(nproc)" "$(uname -r)"
status=0
errf=$(mktemp -p "${RVS_SCRATCH:-/tmp}" rvs-bench-err.XXXXXX) || errf=/dev/null
for scen in $SCENARIOS; do
  for r in $(seq 1 "$ROUNDS"); do
    for eng in ipvs rvs; do
      [ $eng = ipvs ] && adm=ipvsadm || adm=rvsadm
      start=$(date +%s%N)
      if engine_up $eng; then
        out=$(RVS_ADM=$adm bash "$here/in-vm.sh" --one "$scen" 2>"$errf" || echo FAILED)
        engine_down $eng || status=1
      else
        out=FAILED
      fi
      secs=$(( ($(date +%s%N) - start) / 1000000000 ))
      if [ "$out" = FAILED ] || ! printf '%s\n' "$out" | grep -q '^VAL'; then
        echo "[$scen $eng round $r/$ROUNDS] FAILED (${secs}s):" >&2
        sed 's/^/    /' "$errf" | tail -15 >&2
        printf 'RVSBENCH\t%s\t%s\t%s\tNA\t\n' "$scen" "$eng" "$r"
        status=1
        continue
      fi
      printf '%s\n' "$out" | grep '^VAL' | while IFS=$'\t' read -r _ m v u; do
        echo "[$scen $eng round $r/$ROUNDS] $m = $v $u (${secs}s)" >&2
        printf 'RVSBENCH\t%s\t%s\t%s\t%s\t%s\n' "$m" "$eng" "$r" "${v:-NA}" "$u"
      done
    done
  done
done
[ "$errf" = /dev/null ] || rm -f "$errf"
exit $status
