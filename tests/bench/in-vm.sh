#!/bin/bash
# rvs benchmark, guest side (run by tests/bench/run through qemu/run
# --no-module, or by tests/vm/80-bench-smoke.sh). For each round, each
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
#   RVS_BENCH_SVCS=10      services (10 real servers each) added one admin process
#                          per operation (control plane, per call)
#   RVS_BENCH_BATCH_SVCS=10000  services (10 real servers each) loaded in one batch
#                          (ipvsadm -R, rvsadm -R if it has it, and tests/bench/nlbatch.py
#                          for both) and then listed
#   RVS_BENCH_PKTS=100000  packets per director-cost measurement (pktgen)
#   RVS_BENCH_CONNS=1048576  entries in the big connection table (conntab)
#   RVS_BENCH_SCENARIOS="nat-tcp-1 nat-tcp-8 dr-tcp-1 tun-tcp-1 conn-rate udp-nat udp-dr udp-cost udp6-cost conntab ctl"
#   RVS_BENCH_ENGINES="ipvs rvs"  engines measured (e.g. "rvs" alone for a
#                          scenario that compares rvs with itself)
#   RVS_BENCH_RVS_PARAMS=  rvs.ko's module parameters, e.g. "conn_tab_bits=22"
#   RVS_BENCH_QUICK=1      smoke mode: 1 round, 1 s samples, small counts, scenarios
#                          nat-tcp-1 conntab ctl
#   RVS_VM_ICOUNT=1        (set by qemu/run under instruction counting; needs 1 vCPU)
#                          the director-cost scenarios (udp-cost udp6-cost conntab)
#                          report instructions per packet (*-insn) instead of CPU ns
#                          (*-ns); the other scenarios are skipped
#
# Internal: in-vm.sh --one SCENARIO runs one sample with $RVS_ADM as engine.
set -u
here=$(cd "$(dirname "$0")" && pwd)
RVS_ROOT=${RVS_ROOT:-$(cd "$here/../.." && pwd)}
CONNRATE=${RVS_BENCH_CONNRATE:-$here/../../target/release/connrate}

if [ "${RVS_BENCH_QUICK:-0}" = 1 ]; then
  : "${RVS_BENCH_ROUNDS:=1}" "${RVS_BENCH_SECS:=1}" "${RVS_BENCH_SVCS:=1}"
  : "${RVS_BENCH_BATCH_SVCS:=10}" "${RVS_BENCH_PKTS:=2000}" "${RVS_BENCH_CONNS:=2000}"
  : "${RVS_BENCH_SCENARIOS:=nat-tcp-1 conntab ctl}"
fi
ROUNDS=${RVS_BENCH_ROUNDS:-3}
SECS=${RVS_BENCH_SECS:-5}
# Under TCG one admin process costs ~0.3 s (ipvsadm) to ~0.8 s (rvsadm), so
# the brief's 1,000 services x 10 (11,000 processes) would take hours.
SVCS=${RVS_BENCH_SVCS:-10}
BATCH_SVCS=${RVS_BENCH_BATCH_SVCS:-10000}
PKTS=${RVS_BENCH_PKTS:-100000}
CONNS=${RVS_BENCH_CONNS:-1048576}
SCENARIOS=${RVS_BENCH_SCENARIOS:-nat-tcp-1 nat-tcp-8 dr-tcp-1 tun-tcp-1 conn-rate udp-nat udp-dr udp-cost udp6-cost conntab ctl}
ICOUNT=${RVS_VM_ICOUNT:-0}
# The director-cost metrics' suffix and unit: CPU ns per packet, or guest
# instructions per packet under instruction counting (measure below).
if [ "$ICOUNT" = 1 ]; then M=insn; else M=ns; fi
U=$M/pkt

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


  # --- Director cost per packet (udp-cost, conntab) -------------------------
  # Topology: client CL --veth c0/d0--> director LB --dummy r0--> nowhere.
  # pktgen in CL sends 60-byte UDP datagrams to VIP:9000; the real server
  # 10.0.1.1 sits behind a dummy device with a permanent neighbour entry, so
  # forwarded packets are freed at once and the director's receive, engine
  # and transmit work is what the packet costs beyond pktgen itself.
  pkt_topo() {  # FWD (-m or -g)
    newns CL "$1-cl"; newns LB "$1-lb"
    VIP=10.0.100.1
    ip link add c0 netns "$CL" type veth peer name d0 netns "$LB" || fail "veth"
    nsip "$LB" <<IP
link set d0 up
addr add 10.0.0.1/24 dev d0
addr add $VIP/32 dev lo
link add r0 type dummy
link set r0 up
addr add 10.0.1.254/24 dev r0
neigh add 10.0.1.1 lladdr 02:00:00:00:01:01 dev r0 nud permanent
route add 10.64.0.0/10 via 10.0.0.2 dev d0
IP
    nsip "$CL" <<IP
link set c0 up
addr add 10.0.0.2/24 dev c0
IP
    nsysctl "$LB" net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0 \
      net.ipv4.conf.default.rp_filter=0 net.ipv4.conf.d0.rp_filter=0
    # pktgen outruns the director: room in the backlog so nothing is dropped
    # before the engine sees it (global sysctl; the VM is ours).
    sysctl -qw net.core.netdev_max_backlog=100000
    LBMAC=$(cat "/sys/class/net/d0/address" 2>/dev/null || ip -n "$LB" -o link show d0 | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
    [ -n "$LBMAC" ] || LBMAC=$(ip -n "$LB" -o link show d0 | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
    modprobe pktgen || fail "no pktgen module"
    adm_ok "$LB" -A -u $VIP:9000 -s rr
    adm_ok "$LB" -a -u $VIP:9000 -r 10.0.1.1:9000 "$2" -w 1
    # UDP entries live 900 s, so the first flows outlive a slow 1M fill.
    adm_ok "$LB" --set 900 120 900
  }
  # pktgen_run SETTING...: one pktgen run from CL's c0 to the director's
  # MAC, UDP port 9000, with these further settings.
  # It also leaves the run's window in $TEST_TMP/pgwin, read by the shell
  # that starts pktgen, so that no process starts inside it: "T0 T1 I0 I1",
  # the guest clock (us) and all CPUs' idle time (ns, /proc/timer_list,
  # measured at each idle entry and exit, not sampled by ticks) before and
  # after the run.
  pktgen_run() {
    ip netns exec "$CL" bash -s "$LBMAC" "$TEST_TMP/pgwin" "$@" <<'PG' || fail "pktgen failed"
set -e
mac=$1 win=$2; shift 2
pg() { echo "$2" > "/proc/net/pktgen/$1"; }
idle_ns() {  # sets IDLE: the sum of every CPU's idle_sleeptime
  local l
  IDLE=0
  while read -r l; do
    case $l in .idle_sleeptime*) l=${l#*: }; IDLE=$((IDLE + ${l% nsecs})) ;; esac
  done </proc/timer_list
}
pg kpktgend_0 rem_device_all
pg kpktgend_0 "add_device c0"
for c in "clone_skb 0" "delay 0" "dst_mac $mac" "udp_dst_min 9000" "udp_dst_max 9000" "$@"; do
  pg c0 "$c"
done
idle_ns; i0=$IDLE; t0=${EPOCHREALTIME/./}
pg pgctrl start
t1=${EPOCHREALTIME/./}; idle_ns; i1=$IDLE
echo "$t0 $t1 $i0 $i1" >"$win"
grep -q "Result: OK" /proc/net/pktgen/c0
PG
  }
  # pktgen_send COUNT DST SRC_MIN SRC_MAX: COUNT datagrams from CL to
  # DST:9000, source address cycling over SRC_MIN..SRC_MAX, port 1000.
  pktgen_send() {
    pktgen_run "count $1" "pkt_size 60" "dst $2" "src_min $3" "src_max $4" \
      "udp_src_min 1000" "udp_src_max 1000"
  }
  # pktgen_send6 COUNT DST6: COUNT datagrams from CL's 2001:db8::2 to
  # [DST6]:9000, source port cycling over 1000..1999 (1,000 flows).
  # With a UDP checksum: pktgen leaves it 0 otherwise, which IPv6 forbids
  # (RFC 8200 8.1); rvs, checking it, lets such datagrams go to the stack,
  # which drops them (Udp6InCsumErrors), and no flow is ever made.
  pktgen_send6() {
    pktgen_run "count $1" "pkt_size 80" "dst6 $2" "src6 2001:db8::2" \
      "udp_src_min 1000" "udp_src_max 1999" "flag UDPCSUM"
  }
  busy_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; }
  # measure SENDER ARGS...: the cost of one packet while SENDER sends PKTS
  # packets (SENDER PKTS ARGS...); prints it.
  #  - wall-clock VM: CPU time (all CPUs' busy time in /proc/stat, sampled
  #    by the 250 Hz tick) per packet, in ns;
  #  - under instruction counting (qemu/run with RVS_VM_ICOUNT=1, one
  #    vCPU): guest time then advances by one ns per instruction and skips
  #    idle periods, so the run's window minus the CPU's idle time in it is
  #    the number of instructions the guest executed: instructions per
  #    packet (sender, director and everything else the guest ran then).
  measure() {
    local b0 b1 hz send=$1
    shift
    hz=$(getconf CLK_TCK)
    b0=$(busy_ticks)
    "$send" "$PKTS" "$@"
    b1=$(busy_ticks)
    if [ "$ICOUNT" = 1 ]; then
      read -r t0 t1 i0 i1 <"$TEST_TMP/pgwin" || fail "no pktgen window"
      awk -v t="$(( (t1 - t0) * 1000 - (i1 - i0) ))" -v n="$PKTS" 'BEGIN {printf "%.0f", t / n}'
    else
      awk -v d=$((b1 - b0)) -v hz="$hz" -v n="$PKTS" 'BEGIN {printf "%.0f", d * 1e9 / hz / n}'
    fi
  }
  # wire_cost DEV COSTFN ARGS...: the cost of the same packets dropped
  # as they arrive, at DEV's ingress hook (an nftables netdev chain):
  # pktgen, the veth and the receive path, which every packet pays before
  # the director decides anything. A packet's director cost is its cost
  # less this.
  wire_cost() {
    local dev=$1 fn=$2 w
    shift 2
    ip netns exec "$LB" nft -f - <<NFT || fail "nft netdev drop"
table netdev wire {
  chain in {
    type filter hook ingress device $dev priority -500; policy drop;
  }
}
NFT
    w=$("$fn" "$@")
    ip netns exec "$LB" nft delete table netdev wire || fail "nft delete table netdev wire"
    echo "$w"
  }
  # director_rows NAME COST FORWARD: the director's share (less $WIRE) of
  # the engine's cost (NAME-director-*) and of plain forwarding's
  # (NAME-forward-director-*), and the wire cost itself (NAME-wire-*).
  director_rows() {
    log "$ADM $1: the same packets dropped on arrival: ${WIRE} $U"
    val "$1-wire-$M" "$WIRE" $U
    val "$1-director-$M" "$(($2 - WIRE))" $U
    val "$1-forward-director-$M" "$(($3 - WIRE))" $U
  }
  # fast_cost NAME COSTFN ARGS...: rvs only: the same packets with the
  # ingress fast path on (NAME-fast-*, and its director share
  # NAME-fast-director-*), then off again. IPVS has no fast path: its rows
  # stay NA and the report compares them with IPVS's NAME rows.
  fast_cost() {
    local name=$1 fn=$2 cf
    shift 2
    [ "$ADM" = rvsadm ] || return 0
    adm_ok "$LB" --set-option fastpath=1
    cf=$("$fn" "$@")
    adm_ok "$LB" --set-option fastpath=0
    log "$ADM $name with the fast path: ${cf} $U"
    val "$name-fast-$M" "$cf" $U
    val "$name-fast-director-$M" "$((cf - WIRE))" $U
  }
  cost() { measure pktgen_send "$@"; }     # DST SRC_MIN SRC_MAX
  cost6() { measure pktgen_send6 "$@"; }   # DST6
  # conns_now [SERVER]: entries in the table (active + inactive of the real
  # server, as the listing writes it; default 10.0.1.1:9000).
  conns_now() {
    ip netns exec "$LB" "$ADM" -L -n | awk -v rs="${1:-10.0.1.1:9000}" '$1 == "->" && $2 == rs {print $5 + $6}'
  }
  # pkt_topo6 TAG FWD: pkt_topo's IPv6 twin. Client 2001:db8::2, director
  # 2001:db8::1 (VIP 2001:db8:100::1), real server 2001:db8:1::1 behind a
  # dummy device with a permanent neighbour entry.
  pkt_topo6() {
    newns CL "$1-cl"; newns LB "$1-lb"
    VIP=2001:db8:100::1
    ip link add c0 netns "$CL" type veth peer name d0 netns "$LB" || fail "veth"
    nsip "$LB" <<IP
link set d0 up
addr add 2001:db8::1/64 dev d0 nodad
addr add $VIP/128 dev lo nodad
link add r0 type dummy
link set r0 up
addr add 2001:db8:1::254/64 dev r0 nodad
neigh add 2001:db8:1::1 lladdr 02:00:00:00:01:01 dev r0 nud permanent
IP
    nsip "$CL" <<IP
link set c0 up
addr add 2001:db8::2/64 dev c0 nodad
IP
    nsysctl "$LB" net.ipv6.conf.all.forwarding=1
    sysctl -qw net.core.netdev_max_backlog=100000
    LBMAC=$(ip -n "$LB" -o link show d0 | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
    [ -n "$LBMAC" ] || fail "no MAC for the director's d0"
    # The client must not wait for neighbour discovery of the director.
    ip -n "$CL" neigh add 2001:db8::1 lladdr "$LBMAC" dev c0 nud permanent
    modprobe pktgen || fail "no pktgen module"
    adm_ok "$LB" -A -u "[$VIP]:9000" -s rr
    adm_ok "$LB" -a -u "[$VIP]:9000" -r "[2001:db8:1::1]:9000" "$2" -w 1
    adm_ok "$LB" --set 900 120 900
  }
  slab_kb() { awk '/^Slab:/ {print $2}' /proc/meminfo; }
  # objsize of the engine's connection cache in /proc/slabinfo (NA if merged).
  conn_objsize() {
    local v
    v=$(awk '$1 == "ip_vs_conn" || $1 == "rvs_conn" {print $4}' /proc/slabinfo 2>/dev/null | head -1)
    echo "${v:-NA}"
  }
  # ip_int A.B.C.D / int_ip N
  int_ip() { echo "$(($1 >> 24 & 255)).$(($1 >> 16 & 255)).$(($1 >> 8 & 255)).$(($1 & 255))"; }
  FLOW0=$(( (10 << 24) | (64 << 16) ))   # 10.64.0.0: first client address

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
    udp-cost)
      # Scenario 3 with the director as the bottleneck: CPU ns per 60-byte
      # UDP packet over 1,000 established flows, NAT then DR, and the same
      # packets plainly forwarded to the real server (no engine work) as
      # the baseline; *-engine = cost - baseline.
      for fwd in nat dr; do
        ( [ $fwd = nat ] && f=-m || f=-g
          pkt_topo "uc$fwd" "$f"
          lo=$(int_ip $FLOW0) hi=$(int_ip $((FLOW0 + 999)))
          pktgen_send 1000 $VIP "$lo" "$hi"
          n=$(conns_now)
          [ "${n:-0}" -ge 900 ] || fail "$fwd: only ${n:-0} of 1000 flows in the table"
          base=$(cost 10.0.1.1 "$lo" "$hi")
          c=$(cost $VIP "$lo" "$hi")
          log "$ADM $fwd: ${c} $U, plain forwarding ${base} $U, $n entries"
          val udp-$fwd-$M "$c" $U
          val udp-$fwd-engine-$M "$((c - base))" $U
          val udp-$fwd-forward-$M "$base" $U
          WIRE=$(wire_cost d0 cost $VIP "$lo" "$hi")
          director_rows udp-$fwd "$c" "$base"
          fast_cost udp-$fwd cost $VIP "$lo" "$hi"
          cleanup_ns ) || exit 1
      done ;;
    udp6-cost)
      # udp-cost over IPv6: CPU ns per 80-byte UDP packet over 1,000 flows
      # (one client address, 1,000 source ports), NAT then DR, and plain
      # IPv6 forwarding of the same packets as the baseline.
      for fwd in nat dr; do
        ( [ $fwd = nat ] && f=-m || f=-g
          pkt_topo6 "u6$fwd" "$f"
          pktgen_send6 1000 $VIP
          n=$(conns_now "[2001:db8:1::1]:9000")
          [ "${n:-0}" -ge 900 ] || fail "IPv6 $fwd: only ${n:-0} of 1000 flows in the table"
          base=$(cost6 2001:db8:1::1)
          c=$(cost6 $VIP)
          log "$ADM IPv6 $fwd: ${c} $U, plain forwarding ${base} $U, $n entries"
          val udp6-$fwd-$M "$c" $U
          val udp6-$fwd-engine-$M "$((c - base))" $U
          val udp6-$fwd-forward-$M "$base" $U
          WIRE=$(wire_cost d0 cost6 $VIP)
          director_rows udp6-$fwd "$c" "$base"
          fast_cost udp6-$fwd cost6 $VIP
          cleanup_ns ) || exit 1
      done ;;
    conntab)
      # Scenario 4 + 6: director cost per packet with 1,000 and with
      # CONNS entries in the connection table (same 1,000 measured flows),
      # and kernel memory per entry (slab growth over the fill).
      pkt_topo ct -m
      # rvs refuses entries past conn_max (default 2^20): not a limit of
      # the table's, so it is raised for larger fills.
      if [ "$ADM" = rvsadm ] && [ "$CONNS" -gt $((1048576 - 2000)) ]; then
        adm_ok "$LB" --set-option conn_max=$((CONNS + 4096))
      fi
      lo=$(int_ip $FLOW0) hi=$(int_ip $((FLOW0 + 999)))
      pktgen_send 1000 $VIP "$lo" "$hi"
      base=$(cost 10.0.1.1 "$lo" "$hi")
      c1=$(cost $VIP "$lo" "$hi")
      n1=$(conns_now)
      sync; echo 2 >/proc/sys/vm/drop_caches; s0=$(slab_kb)
      t0=$(date +%s%N)
      pktgen_send $((CONNS - 1000)) $VIP "$(int_ip $((FLOW0 + 1000)))" "$(int_ip $((FLOW0 + CONNS - 1)))"
      t1=$(date +%s%N)
      n2=$(conns_now)
      sync; echo 2 >/proc/sys/vm/drop_caches; s1=$(slab_kb)
      c2=$(cost $VIP "$lo" "$hi")
      n3=$(conns_now)
      log "$ADM: $n1 entries: ${c1} $U; $n2 entries (fill $(( (t1 - t0) / 1000000 )) ms): ${c2} $U ($n3 after); plain forwarding ${base} $U; slab ${s0} -> ${s1} kB; objsize $(conn_objsize)"
      [ "${n2:-0}" -ge $((CONNS * 9 / 10)) ] || fail "only ${n2:-0} of $CONNS entries in the table"
      # Under instruction counting only the per-packet costs (metric
      # names *-insn); the fill rate and memory come from the wall-clock run.
      sfx=; [ "$ICOUNT" = 1 ] && sfx=-insn
      val conntab-1k-$M "$c1" $U
      val conntab-big-$M "$c2" $U
      val conntab-big-vs-1k$sfx "$(awk -v a="$c1" -v b="$c2" 'BEGIN {printf "%.3f", b / a}')" x
      val conntab-big-vs-1k-engine$sfx "$(awk -v a="$((c1 - base))" -v b="$((c2 - base))" 'BEGIN {printf "%.3f", (a > 0) ? b / a : 0}')" x
      if [ "$ICOUNT" = 0 ]; then
        val conntab-fill "$(awk -v a=$t0 -v b=$t1 -v n=$((n2 - n1)) 'BEGIN {printf "%.0f", n / ((b - a) / 1e9)}')" conn/s
        val mem-per-conn "$(awk -v a="$s0" -v b="$s1" -v n=$((n2 - n1)) 'BEGIN {printf "%.0f", (b - a) * 1024 / n}')" B
        val conn-objsize "$(conn_objsize)" B
      fi
      # Unloading frees the entries; flush first so the unload is quick.
      ip netns exec "$LB" "$ADM" -C ;;
    ctl)
      # Control plane (scenario 5):
      #  per call: SVCS TCP services with 10 real servers each, one admin
      #    process per operation (a shell loop), as scripts drive ipvsadm;
      #  batch: BATCH_SVCS services x 10 loaded by one process: ipvsadm -R /
      #    rvsadm -R (when rvsadm has it) and tests/bench/nlbatch.py, the
      #    same netlink requests over one socket to either engine;
      #  list: one -L -n of the BATCH_SVCS services; flush: one -C.
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
      gen_ops() {  # N: one admin command line per operation (ipvsadm -S format)
        awk -v n="$1" 'BEGIN {
          for (i = 0; i < n; i++) {
            a = sprintf("10.%d.%d.%d", 100 + int(i / 65536), int(i / 256) % 256, i % 256)
            printf "-A -t %s:80 -s rr\n", a
            for (j = 1; j <= 10; j++) printf "-a -t %s:80 -r 172.16.%d.%d:80 -m -w 1\n", a, i % 250, j
          } }'
      }
      ms() { echo $(( $(date +%s%N) / 1000000 )); }
      secs() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", (b - a) / 1000}'; }
      check_list() {  # FILE NSVCS
        local nsvc ndst
        nsvc=$(grep -c '^TCP' "$1") ndst=$(grep -c -- '^  -> [0-9]' "$1")
        [ "$nsvc" = "$2" ] && [ "$ndst" = $(($2 * 10)) ] ||
          fail "listing shows $nsvc services and $ndst real servers, expected $2 and $(($2 * 10))"
      }
      gen_ops "$SVCS" >"$TEST_TMP/ops"
      nops=$(wc -l <"$TEST_TMP/ops")
      t0=$(ms)
      ip netns exec "$LB" bash -c 'while read -r line; do $1 $line || exit 1; done' _ "$ADM" <"$TEST_TMP/ops" ||
        fail "adding $SVCS services failed"
      t1=$(ms)
      ip netns exec "$LB" "$ADM" -L -n >"$TEST_TMP/list" || fail "$ADM -L -n failed"
      check_list "$TEST_TMP/list" "$SVCS"
      ip netns exec "$LB" "$ADM" -C || fail "$ADM -C failed"
      log "$ADM: $nops operations, one process each, in $((t1 - t0)) ms"
      val ctl-add-svcs "$(secs $t0 $t1)" s
      op_ms=$(awk -v a=$t0 -v b=$t1 -v n="$nops" 'BEGIN {printf "%.1f", (b - a) / n}')
      val ctl-op "$op_ms" ms/op
      val ctl-percall-est "$(awk -v m="$op_ms" -v n=$((BATCH_SVCS * 11)) 'BEGIN {printf "%.0f", m * n / 1000}')" s

      gen_ops "$BATCH_SVCS" >"$TEST_TMP/rules"
      eng=rvs; [ "${ADM##*/}" = ipvsadm ] && eng=ipvs
      # Batch over one netlink socket, the same requests for both engines.
      out=$(ip netns exec "$LB" python3 "$RVS_ROOT/tests/bench/nlbatch.py" $eng "$BATCH_SVCS") ||
        fail "nlbatch.py: $out"
      val ctl-batch "$out" s
      # Each engine's fastest load over one socket: IPVS has only one
      # request per operation (ctl-batch's); rvs takes the whole set as one
      # all-or-nothing request (RVS_CMD_APPLY, what -R --atomic sends),
      # encoded by the same Python code.
      if [ $eng = rvs ]; then
        ip netns exec "$LB" "$ADM" -C || fail "$ADM -C failed"
        load=$(ip netns exec "$LB" python3 "$RVS_ROOT/tests/bench/nlbatch.py" rvs-apply "$BATCH_SVCS" 2>"$TEST_TMP/apply.err") ||
          fail "nlbatch.py rvs-apply: $load $(cat "$TEST_TMP/apply.err")"
        log "$(cat "$TEST_TMP/apply.err")"
        ip netns exec "$LB" "$ADM" -L -n >"$TEST_TMP/list" || fail "$ADM -L -n failed"
        check_list "$TEST_TMP/list" "$BATCH_SVCS"
      else
        load=$out
      fi
      val ctl-load "$load" s
      t2=$(ms)
      ip netns exec "$LB" "$ADM" -L -n >"$TEST_TMP/list" || fail "$ADM -L -n failed"
      t3=$(ms)
      check_list "$TEST_TMP/list" "$BATCH_SVCS"
      val ctl-list "$(secs $t2 $t3)" s
      t4=$(ms)
      ip netns exec "$LB" "$ADM" -C || fail "$ADM -C failed"
      t5=$(ms)
      val ctl-flush "$(secs $t4 $t5)" s
      # Restore (-R) of the same rules, if this admin tool has it.
      if ip netns exec "$LB" "$ADM" -R </dev/null >/dev/null 2>&1; then
        t6=$(ms)
        ip netns exec "$LB" "$ADM" -R <"$TEST_TMP/rules" || fail "$ADM -R"
        t7=$(ms)
        ip netns exec "$LB" "$ADM" -L -n >"$TEST_TMP/list" || fail "$ADM -L -n failed"
        check_list "$TEST_TMP/list" "$BATCH_SVCS"
        val ctl-restore "$(secs $t6 $t7)" s
        ip netns exec "$LB" "$ADM" -C
        if [ $eng = rvs ]; then
          t6=$(ms)
          ip netns exec "$LB" "$ADM" -R --atomic <"$TEST_TMP/rules" || fail "$ADM -R --atomic"
          t7=$(ms)
          ip netns exec "$LB" "$ADM" -L -n >"$TEST_TMP/list" || fail "$ADM -L -n failed"
          check_list "$TEST_TMP/list" "$BATCH_SVCS"
          val ctl-restore-atomic "$(secs $t6 $t7)" s
          ip netns exec "$LB" "$ADM" -C
        else
          val ctl-restore-atomic NA s
        fi
      else
        val ctl-restore NA s
      fi
      log "$ADM: $BATCH_SVCS services x 10: batch ${out} s, list $(secs $t2 $t3) s, flush $(secs $t4 $t5) s"
      case $ADM in /*) rm -f "$ADM" ;; esac ;;
    *) fail "unknown scenario $scen" ;;
  esac
  exit 0
fi

# ---------------------------------------------------------------------------
# Driver.
[ -x "$CONNRATE" ] || { echo "in-vm.sh: $CONNRATE missing (cargo build --release -p connrate)" >&2; exit 1; }
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
      # shellcheck disable=SC2086 # parameters, one word each
      insmod "$RVS_ROOT/rvs.ko" ${RVS_BENCH_RVS_PARAMS:-} ;;
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

if [ "$ICOUNT" = 1 ]; then
  # Under icount the vCPUs run in turn on one clock: only with one vCPU is
  # the window minus idle time one CPU's instructions.
  [ "$(nproc)" = 1 ] || { echo "in-vm.sh: instruction counting needs a VM of 1 vCPU (have $(nproc))" >&2; exit 1; }
  keep=
  for scen in $SCENARIOS; do
    case $scen in
      udp-cost|udp6-cost|conntab) keep="$keep $scen" ;;
      *) echo "# $scen: skipped under instruction counting (not a director-cost scenario)" >&2 ;;
    esac
  done
  SCENARIOS=${keep# }
fi
echo "# rvs bench: rounds=$ROUNDS secs=$SECS svcs=$SVCS batch_svcs=$BATCH_SVCS pkts=$PKTS conns=$CONNS cpus=$(nproc) kernel=$(uname -r) icount=$ICOUNT" >&2
echo "# scenarios: $SCENARIOS" >&2
# The instruction-counting run has its own meta line (it may share raw.tsv
# with a wall-clock run).
meta=RVSBENCH_META; [ "$ICOUNT" = 1 ] && meta=RVSBENCH_META_ICOUNT
printf '%s\trounds=%s\tsecs=%s\tsvcs=%s\tbatch_svcs=%s\tpkts=%s\tconns=%s\tcpus=%s\tkernel=%s\tloadavg=%s\n' \
  "$meta" "$ROUNDS" "$SECS" "$SVCS" "$BATCH_SVCS" "$PKTS" "$CONNS" "$(nproc)" "$(uname -r)" "$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' /)"
status=0
errf=$(mktemp -p "${RVS_SCRATCH:-/tmp}" rvs-bench-err.XXXXXX) || errf=/dev/null
for scen in $SCENARIOS; do
  for r in $(seq 1 "$ROUNDS"); do
    for eng in ${RVS_BENCH_ENGINES:-ipvs rvs}; do
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
