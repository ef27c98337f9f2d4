#!/bin/bash
# IPVS's files besides /proc/net/ip_vs (58-ipvs-compat reads that one), on
# rvs loaded with ipvs_compat=1 (the rvs pass) and on the kernel's IPVS
# (the IPVS pass), with real connections through a NAT service:
#  - /proc/net/ip_vs_conn and ipvsadm -L -c (which reads it): each
#    connection once, held or closed, in IPVS's text (hex addresses and ports, state,
#    seconds left); ip_vs_conn_sync the same with its origin (LOCAL);
#  - Prometheus node_exporter's ipvs collector reads /proc/net/ip_vs and
#    ip_vs_stats: each real server's active and inactive connections and
#    weight, the namespace's connections and packets;
#  - /proc/net/ip_vs_stats: the namespace's connections and packets, in
#    hex; ipvsadm -Z zeroes them;
#  - /proc/net/ip_vs_stats_percpu: one line per possible CPU, whose sum is
#    the total line;
#  - the sysctls kube-proxy writes at start (net.ipv4.vs.conntrack,
#    conn_reuse_mode, expire_nodest_conn, expire_quiescent_template):
#    written and read back, refused to root of a user namespace that does
#    not own the network namespace; on rvs, the same values through
#    rvsadm -L --options; sloppy_tcp and sloppy_sctp the same way;
#  - the directory's files: on rvs, IPVS's integer knobs but four (see
#    rvs/core/ipvs_sysctl.rs); range errors (EINVAL); drop_entry and
#    secure_tcp's modes mapped onto rvs's units; the knobs rvs has no
#    setting for take only the value that says what rvs does, and refuse
#    others with EOPNOTSUPP and a kernel log line saying why.
. "$(dirname "$0")/../lib.sh"
ipvs_clients
adm_init rr
mk_test_tmp
topo_nat files 2
# Port 80 holds its connections open (tests/py/held.py); port 81 answers
# and closes.
for i in 1 2; do serve_held "${RS[$i]}" 80 rs$i; serve_name_bg "${RS[$i]}" tcp 81 rs$i; done
for i in 1 2; do wait_listen "${RS[$i]}" tcp 80; wait_listen "${RS[$i]}" tcp 81; done
ipv() { adm "$LB" "$@"; }
pcat() { ip netns exec "$LB" cat "/proc/net/$1"; }

for port in 80 81; do
  adm_ok "$LB" -A -t $VIP:$port -s rr
  for i in 1 2; do adm_ok "$LB" -a -t $VIP:$port -r ${RIP[$i]}:$port -m; done
done

# Two connections held open (one to each server), then ten short ones.
coproc HELD { ip netns exec "$CL" python3 "$RVS_ROOT/tests/py/held.py" hold $VIP 80 2; }
at_exit "kill $HELD_PID 2>/dev/null"
read -r -t 20 held <&"${HELD[0]}" || fail "the held connections did not open"
log "held connections to: $held"
assert_eq "$(printf '%s\n' $held | sort | tr '\n' ' ')" "rs1 rs2 " "held connections"
got=$(lb_names "$CL" tcp $VIP 81 10 | count_names)
assert_eq "$got" "rs1:5 rs2:5" "ten short connections"

# --- /proc/net/ip_vs_conn ----------------------------------------------
pc=$(pcat ip_vs_conn) || fail "no /proc/net/ip_vs_conn in the director's namespace"
log "/proc/net/ip_vs_conn:"; printf '%s\n' "$pc" | sed 's/^/#   |/; s/$/|/' >&2
assert_eq "$(printf '%s\n' "$pc" | sed -n 1p)" \
  "Pro FromIP   FPrt ToIP     TPrt DestIP   DPrt State       Expires PEName PEData" "ip_vs_conn title"
# "%-3s %08X %04X %08X %04X %s %04X %-11s %7u%s\n": IPv4 lines are 65
# characters. The held ones are ESTABLISHED with about 900 s left, the
# short ones closing or closed (as the FIN order fell).
assert_eq "$(printf '%s\n' "$pc" | tail -n +2 | awk 'length($0) != 65' | wc -l)" 0 "ip_vs_conn lines not 65 characters wide"
est=$(printf '%s\n' "$pc" | grep -E '^TCP 0A000002 [0-9A-F]{4} 0A006401 0050 0A00010[12] 0050 ESTABLISHED +[0-9]+$')
assert_eq "$(printf '%s\n' "$est" | grep -c .)" 2 "ESTABLISHED lines in ip_vs_conn"
assert_eq "$(printf '%s\n' "$est" | awk '{print $6}' | sort | tr '\n' ' ')" "0A000101 0A000102 " "their real servers"
printf '%s\n' "$est" | awk '{ if ($9 < 850 || $9 > 900) exit 1 }' || fail "held connections' expiry not in 850..900 s"
closed=$(printf '%s\n' "$pc" | grep -cE '^TCP 0A000002 [0-9A-F]{4} 0A006401 0051 0A00010[12] 0051 (TIME_WAIT|CLOSE|FIN_WAIT|CLOSE_WAIT|LAST_ACK) +[0-9]+$')
assert_eq "$closed" 10 "closed connections in ip_vs_conn"
assert_eq "$(printf '%s\n' "$pc" | wc -l)" 13 "lines in ip_vs_conn (title, 12 connections)"

# ipvsadm -L -c -n formats the file's lines.
lc=$(ipv -L -c -n) || fail "ipvsadm -L -c -n failed"
log "ipvsadm -L -c -n:"; printf '%s\n' "$lc" | sed 's/^/#   /' >&2
assert_eq "$(printf '%s\n' "$lc" | awk '$3 == "ESTABLISHED" && $5 == "10.0.100.1:80" {print $1, $6}' | sort | tr '\n' ' ')" \
  "TCP 10.0.1.1:80 TCP 10.0.1.2:80 " "ESTABLISHED connections in ipvsadm -L -c"
assert_eq "$(printf '%s\n' "$lc" | grep -cE '^TCP .* 10\.0\.0\.2:[0-9]+ +10\.0\.100\.1:8[01] +10\.0\.1\.[12]:8[01]$')" 12 "connections in ipvsadm -L -c"

# --- /proc/net/ip_vs_conn_sync -------------------------------------------
ps=$(pcat ip_vs_conn_sync) || fail "no /proc/net/ip_vs_conn_sync"
assert_eq "$(printf '%s\n' "$ps" | sed -n 1p)" \
  "Pro FromIP   FPrt ToIP     TPrt DestIP   DPrt State       Origin Expires" "ip_vs_conn_sync title"
assert_eq "$(printf '%s\n' "$ps" | grep -cE '^TCP 0A000002 [0-9A-F]{4} 0A006401 0050 0A00010[12] 0050 ESTABLISHED LOCAL  +[0-9]+$')" \
  2 "ESTABLISHED LOCAL lines in ip_vs_conn_sync"
assert_eq "$(printf '%s\n' "$ps" | wc -l)" 13 "lines in ip_vs_conn_sync"

# --- Prometheus node_exporter's ipvs collector ---------------------------
# It parses /proc/net/ip_vs and /proc/net/ip_vs_stats of the namespace it
# runs in (Debian's prometheus-node-exporter; only that collector).
command -v prometheus-node-exporter >/dev/null ||
  fail "prometheus-node-exporter not installed (qemu/install-deps installs it)"
ip netns exec "$LB" prometheus-node-exporter --collector.disable-defaults --collector.ipvs \
  --web.listen-address=127.0.0.1:9100 >"$TEST_TMP/node_exporter.log" 2>&1 &
bg_track $!
wait_listen "$LB" tcp 9100
# scrape: node_exporter's metrics now, into $TEST_TMP/metrics (one
# consistent reading for the checks that follow).
scrape() {
  ip netns exec "$LB" python3 -c '
import sys, urllib.request
sys.stdout.write(urllib.request.urlopen("http://127.0.0.1:9100/metrics", timeout=10).read().decode())' \
    >"$TEST_TMP/metrics" || fail "cannot scrape node_exporter: $(tail -3 "$TEST_TMP/node_exporter.log")"
}
# metric NAME [LABEL=VALUE...]: the value of the one sample of NAME in the
# last scrape whose labels include all those given.
metric() {
  python3 - "$TEST_TMP/metrics" "$@" <<'PY'
import re, sys
path, name = sys.argv[1], sys.argv[2]
want = dict(a.split("=", 1) for a in sys.argv[3:])
found = []
for line in open(path).read().splitlines():
    m = re.match(r'^([a-z_]+)(?:\{(.*)\})? (\S+)$', line)
    if not m or m.group(1) != name:
        continue
    labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
    if all(labels.get(k) == v for k, v in want.items()):
        found.append(m.group(3))
print(found[0] if len(found) == 1 else "found %d samples" % len(found))
PY
}
scrape
grep '^node_ipvs' "$TEST_TMP/metrics" | sed 's/^/#   node_exporter: /' >&2
pcat ip_vs | sed 's/^/#   ip_vs: /' >&2
for i in 1 2; do
  be="local_address=10.0.100.1 remote_address=${RIP[$i]} proto=TCP"
  assert_eq "$(metric node_ipvs_backend_connections_active $be local_port=80 remote_port=80)" 1 \
    "node_exporter: rs$i's active connections on :80"
  assert_eq "$(metric node_ipvs_backend_connections_inactive $be local_port=81 remote_port=81)" 5 \
    "node_exporter: rs$i's inactive connections on :81"
  assert_eq "$(metric node_ipvs_backend_weight $be local_port=80 remote_port=80)" 1 "node_exporter: rs$i's weight"
done
ne_conns() { scrape; metric node_ipvs_connections_total; }
assert_eq "$(settled 12 ne_conns)" 12 "node_exporter: node_ipvs_connections_total"
pk=$(metric node_ipvs_incoming_packets_total)
log "node_exporter: node_ipvs_incoming_packets_total $pk"
[ "${pk%%[!0-9]*}" -ge 36 ] 2>/dev/null || fail "node_exporter: incoming packets '$pk', expected at least 36"

# --- /proc/net/ip_vs_stats ----------------------------------------------
# Twelve connections; the packets both ways (IPVS folds its per-CPU
# counters in every 2 s, hence settled).
tot_conns() { pcat ip_vs_stats | awk 'NR == 3 {print $1}'; }
assert_eq "$(settled C tot_conns)" C "connections in ip_vs_stats (hex)"
st=$(pcat ip_vs_stats)
log "/proc/net/ip_vs_stats:"; printf '%s\n' "$st" | sed 's/^/#   |/; s/$/|/' >&2
assert_eq "$(printf '%s\n' "$st" | sed -n 1,2p)" \
  "   Total Incoming Outgoing         Incoming         Outgoing
   Conns  Packets  Packets            Bytes            Bytes" "ip_vs_stats titles"
assert_eq "$(printf '%s\n' "$st" | sed -n 5p)" \
  " Conns/s   Pkts/s   Pkts/s          Bytes/s          Bytes/s" "ip_vs_stats rates title"
read -r c ip op ib ob < <(printf '%s\n' "$st" | sed -n 3p)
log "ip_vs_stats: conns 0x$c, in $((16#$ip)) packets $((16#$ib)) bytes, out $((16#$op)) packets $((16#$ob)) bytes"
# At least SYN, ACK and the ACK of the name in, SYN-ACK and the name out,
# per connection, and at least 40 bytes a packet.
[ $((16#$ip)) -ge 36 ] && [ $((16#$op)) -ge 24 ] || fail "too few packets in ip_vs_stats: in $((16#$ip)), out $((16#$op))"
[ $((16#$ib)) -ge $((40 * 16#$ip)) ] && [ $((16#$ob)) -ge $((40 * 16#$op)) ] || fail "too few bytes in ip_vs_stats"
printf '%s\n' "$st" | sed -n 3p | grep -Eqx ' *[0-9A-F]{1,8} +[0-9A-F]{1,8} +[0-9A-F]{1,8} +[0-9A-F]{1,16} +[0-9A-F]{1,16}' ||
  fail "ip_vs_stats counters are not IPVS's '%8LX %8LX %8LX %16LX %16LX'"

# --- /proc/net/ip_vs_stats_percpu ---------------------------------------
ncpu=$(( $(cut -d- -f2 /sys/devices/system/cpu/possible) + 1 ))
pct() {
  local c=0 p=0 t= tp= cpu a b rest
  while read -r cpu a b rest; do
    case $cpu in
      "~") t=$((16#$a)) tp=$((16#$b)) ;;
      [0-9A-F] | [0-9A-F][0-9A-F] | [0-9A-F][0-9A-F][0-9A-F]) c=$((c + 16#$a)) p=$((p + 16#$b)) ;;
    esac
  done < <(pcat ip_vs_stats_percpu | sed -n "3,$((2 + ncpu + 1))p")
  if [ "$c" = "$t" ] && [ "$p" = "$tp" ]; then echo "sums match"; else echo "per-CPU $c/$p total $t/$tp"; fi
}
assert_eq "$(settled "sums match" pct)" "sums match" "ip_vs_stats_percpu: per-CPU lines sum to the total"
pp=$(pcat ip_vs_stats_percpu)
log "/proc/net/ip_vs_stats_percpu:"; printf '%s\n' "$pp" | sed 's/^/#   |/; s/$/|/' >&2
assert_eq "$(printf '%s\n' "$pp" | sed -n 2p)" "CPU    Conns  Packets  Packets            Bytes            Bytes" "percpu title"
assert_eq "$(printf '%s\n' "$pp" | awk 'NR > 2 && $1 ~ /^[0-9A-F]+$/ && NF == 6' | wc -l)" "$ncpu" "percpu: one line per possible CPU"
assert_eq "$(printf '%s\n' "$pp" | tail -2 | head -1)" \
  "     Conns/s   Pkts/s   Pkts/s          Bytes/s          Bytes/s" "percpu rates title"

# Zeroing everything zeroes the namespace's totals too.
adm_ok "$LB" -Z
assert_eq "$(settled 0 tot_conns)" 0 "ip_vs_stats connections after -Z"

# --- net.ipv4.vs sysctls --------------------------------------------------
vs() { ip netns exec "$LB" sysctl -n "net.ipv4.vs.$1"; }
opt() { ip netns exec "$LB" rvsadm -L --options | awk -v k="$1" '$1 == k {print $2}'; }
assert_eq "$(vs conn_reuse_mode) $(vs conntrack) $(vs expire_nodest_conn) $(vs expire_quiescent_template)" \
  "1 0 0 0" "defaults of conn_reuse_mode conntrack expire_nodest_conn expire_quiescent_template"
# kube-proxy's writes at start, then other values and back.
for kv in conntrack=1 conn_reuse_mode=0 expire_nodest_conn=1 expire_quiescent_template=1 \
  conn_reuse_mode=2 conntrack=0 expire_nodest_conn=0 expire_quiescent_template=0 conn_reuse_mode=1; do
  k=${kv%=*} v=${kv#*=}
  nsysctl "$LB" "net.ipv4.vs.$kv"
  assert_eq "$(vs "$k")" "$v" "net.ipv4.vs.$k after writing $v"
  if [ "${RVS_COMPAT:-0}" = 1 ]; then assert_eq "$(opt "$k")" "$v" "rvsadm -L --options $k after the sysctl"; fi
done
# Root of a user namespace that does not own the network namespace (made
# by uid 65534, as a container's root) may read but not write: writing
# needs CAP_NET_ADMIN over the namespace's owner. (Root of a user
# namespace made by uid 0 is still uid 0 outside, and may write.)
foreign() { ip netns exec "$LB" setpriv --reuid=65534 --regid=65534 --clear-groups unshare -U -r "$@"; }
out=$(foreign sh -c 'echo 1 > /proc/sys/net/ipv4/vs/expire_nodest_conn' 2>&1) &&
  fail "root of a foreign user namespace wrote net.ipv4.vs.expire_nodest_conn"
log "write from a foreign user namespace: $out"
assert_eq "$(vs expire_nodest_conn)" 0 "expire_nodest_conn after the refused write"
got=$(foreign cat /proc/sys/net/ipv4/vs/conn_reuse_mode) || fail "cannot read from a user namespace"
assert_eq "$got" 1 "conn_reuse_mode read from a foreign user namespace"

# The directory: on rvs, every integer knob of IPVS but the sync daemon's
# sync_qlen_max and sync_threshold, est_cpulist (a CPU list) and
# debug_level (CONFIG_IP_VS_DEBUG only); on IPVS, at least those.
ours="am_droprate amemthresh backup_only cache_bypass conn_reuse_mode conntrack drop_entry drop_packet est_nice expire_nodest_conn expire_quiescent_template ignore_tunneled nat_icmp_send pmtu_disc run_estimation schedule_icmp secure_tcp sloppy_sctp sloppy_tcp snat_reroute sync_persist_mode sync_ports sync_refresh_period sync_retries sync_sock_size sync_version"
files=$(ip netns exec "$LB" ls /proc/sys/net/ipv4/vs | tr '\n' ' ')
if [ "${RVS_COMPAT:-0}" = 1 ]; then
  assert_eq "$files" "$ours " "rvs's net.ipv4.vs knobs"
else
  for k in $ours; do case " $files" in *" $k "*) ;; *) fail "IPVS has no net.ipv4.vs.$k" ;; esac; done
fi
# sloppy_tcp and sloppy_sctp, both engines (73-sloppy-tcp: what they do).
for kv in sloppy_tcp=1 sloppy_sctp=1 sloppy_tcp=0 sloppy_sctp=0; do
  k=${kv%=*} v=${kv#*=}
  nsysctl "$LB" "net.ipv4.vs.$kv"
  assert_eq "$(vs "$k")" "$v" "net.ipv4.vs.$k after writing $v"
  if [ "${RVS_COMPAT:-0}" = 1 ]; then assert_eq "$(opt "$k")" "$v" "rvsadm -L --options $k after the sysctl"; fi
done

if [ "${RVS_COMPAT:-0}" = 1 ]; then
  # rvs only: its range checks (IPVS takes any integer here)...
  refused() { # refused KEY=VALUE ERRNO-TEXT
    out=$(ip netns exec "$LB" sysctl -w "net.ipv4.vs.$1" 2>&1) && fail "sysctl -w net.ipv4.vs.$1 accepted"
    log "sysctl -w net.ipv4.vs.$1: $out"
    case $out in *"$2"*) ;; *) fail "net.ipv4.vs.$1: expected '$2', got: $out" ;; esac
  }
  for kv in conntrack=2 conn_reuse_mode=4 expire_nodest_conn=-1 sloppy_tcp=2 drop_entry=4; do
    refused "$kv" "Invalid argument"
  done
  assert_eq "$(vs conntrack) $(vs conn_reuse_mode) $(vs expire_nodest_conn)" "0 1 0" "values after refused writes"
  # ... IPVS's defence modes over rvs's own units: 1 (automatic) turns
  # rvs's on at 90 % of conn_max and 60 s, 0 off; 2 and 3 are refused...
  nsysctl "$LB" net.ipv4.vs.drop_entry=1 net.ipv4.vs.secure_tcp=1
  assert_eq "$(vs drop_entry) $(opt drop_entry) $(vs secure_tcp) $(opt secure_tcp)" "1 90 1 60" \
    "drop_entry and secure_tcp after writing 1 (sysctl, then rvs's option)"
  refused drop_entry=3 "Operation not supported"
  nsysctl "$LB" net.ipv4.vs.drop_entry=0 net.ipv4.vs.secure_tcp=0
  assert_eq "$(vs drop_entry) $(opt drop_entry) $(vs secure_tcp) $(opt secure_tcp)" "0 0 0 0" \
    "drop_entry and secure_tcp after writing 0"
  # ... and the knobs it has no setting for show what rvs does, take that
  # value, and refuse any other with a reason in the kernel log.
  assert_eq "$(vs sync_version) $(vs run_estimation) $(vs snat_reroute) $(vs amemthresh)" "1 1 0 1024" \
    "sync_version run_estimation snat_reroute amemthresh"
  nsysctl "$LB" net.ipv4.vs.sync_version=1 net.ipv4.vs.cache_bypass=0
  mark=$(kmsg_mark)
  refused drop_packet=1 "Operation not supported"
  sleep 0.2 # the log takes ten refusals a second
  refused sync_version=0 "Operation not supported"
  klog=$(dmesg_since "$mark")
  for line in "net.ipv4.vs.drop_packet = 1 refused: rvs drops no packets at random" \
    "net.ipv4.vs.sync_version = 0 refused: rvs's sync master sends protocol version 1 (its backup reads 0 and 1)"; do
    case $klog in *"$line"*) ;; *) fail "no kernel log line '$line' (log: $klog)" ;; esac
  done
  assert_eq "$(vs drop_packet) $(vs sync_version)" "0 1" "drop_packet and sync_version after refused writes"
fi
pass "ip_vs_conn, ip_vs_conn_sync, ip_vs_stats, ip_vs_stats_percpu and the net.ipv4.vs sysctls, as IPVS"
