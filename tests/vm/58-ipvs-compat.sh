#!/bin/bash
# The real ipvsadm drives rvs.ko loaded with ipvs_compat=1 (rvs answers the
# generic netlink family "IPVS" too) exactly as it drives the kernel's
# IPVS: the same commands, listings, statistics, save/restore, timeouts,
# error messages (ipvsadm prints them from the errno it gets) and balanced
# traffic; and moby/ipvs's raw requests (tests/py/moby_requests.py). The
# IPVS pass runs the same steps on ip_vs, which is what validates every
# expected value below. Then pyroute2 (PyPI, its IPVS API) adds, dumps,
# gets, edits and deletes a service and its real servers.
#
# On rvs only, first: "IPVS" is one name, so ip_vs cannot load beside rvs
# with ipvs_compat=1, and rvs with ipvs_compat=1 cannot load beside ip_vs
# (EEXIST and a dmesg line saying what to do); without ipvs_compat both
# load side by side, as before.
. "$(dirname "$0")/../lib.sh"

mk_test_tmp
if [ "$ADM" = rvsadm ]; then
  command -v ipvsadm >/dev/null || fail "ipvsadm not installed (qemu/install-deps installs it)"
  rvs_loaded && { rmmod rvs || fail "rmmod rvs"; }
  at_exit 'rmmod rvs 2>/dev/null; modprobe -r ip_vs 2>/dev/null'

  modprobe ip_vs || fail "cannot load ip_vs"
  dmesg -C
  err=$(insmod "$RVS_ROOT/rvs.ko" ipvs_compat=1 2>&1) && fail "rvs.ko ipvs_compat=1 loaded beside ip_vs"
  log "insmod rvs.ko ipvs_compat=1 beside ip_vs: $err"
  case $err in *"File exists"*) ;; *) fail "expected EEXIST (File exists), got: $err" ;; esac
  dmesg | grep -q 'ipvs_compat=1: the generic netlink family "IPVS" is taken' ||
    fail "no dmesg line explains the refusal: $(dmesg | tail -3)"
  rvs_loaded && fail "rvs is in /proc/modules after the refused load"
  insmod "$RVS_ROOT/rvs.ko" || fail "rvs.ko without ipvs_compat does not load beside ip_vs"
  rmmod rvs || fail "rmmod rvs"
  modprobe -r ip_vs || fail "modprobe -r ip_vs"

  insmod "$RVS_ROOT/rvs.ko" ipvs_compat=1 || fail "insmod rvs.ko ipvs_compat=1"
  assert_eq "$(cat /sys/module/rvs/parameters/ipvs_compat)" Y "ipvs_compat as the module reports it"
  # rvs refuses ip_vs before its init runs (its init would create
  # /proc/net/ip_vs, which rvs owns now): EEXIST, which modprobe takes for
  # "already loaded" (exit 0). What counts: not loaded, and rvs says why.
  dmesg -C
  modprobe ip_vs 2>/dev/null
  grep -q '^ip_vs ' /proc/modules && fail "ip_vs loaded beside rvs ipvs_compat=1"
  dmesg | grep -q 'rvs: refusing to load ip_vs' ||
    fail "rvs did not say why ip_vs was refused: $(dmesg | tail -3)"
  log "ip_vs refused beside rvs ipvs_compat=1, as expected"
  ADM=ipvsadm RVS_COMPAT=1
fi
adm_init rr wrr
ipv() { adm "$LB" "$@"; }
norm() { sed -e 's/[[:space:]]\+/ /g' -e 's/ $//'; }
# The listing without the header and without the connection counters (a
# real server's ActiveConn and InActConn depend on the traffic so far).
body() { ipv -L -n | tail -n +4 | awk '$1 == "->" {$0 = " " $1 " " $2 " " $3 " " $4} 1' | norm; }

topo_nat compat 3
for i in 1 2 3; do serve_name_bg "${RS[$i]}" tcp 80 rs$i; done
for i in 1 2 3; do wait_listen "${RS[$i]}" tcp 80; done

# The header comes from GET_INFO: IPVS's version; the table size differs
# (IPVS's default is 4096 buckets, rvs's 262144).
head=$(ipv -L -n | sed -n 1p) || fail "ipvsadm -L -n failed"
log "header: $head"
printf '%s\n' "$head" | grep -Eqx 'IP Virtual Server version 1\.2\.1 \(size=[0-9]+\)' ||
  fail "header is not 'IP Virtual Server version 1.2.1 (size=N)': $head"

adm_ok "$LB" -A -t $VIP:80 -s rr
for i in 1 2 3; do adm_ok "$LB" -a -t $VIP:80 -r ${RIP[$i]}:80 -m -w 1; done
assert_eq "$(body)" "TCP 10.0.100.1:80 rr
 -> 10.0.1.1:80 Masq 1
 -> 10.0.1.2:80 Masq 1
 -> 10.0.1.3:80 Masq 1" "listing after -A and three -a"

expect_balance "$CL" tcp $VIP 80 30 "rs1:10 rs2:10 rs3:10" "rr configured by ipvsadm"

# Counters through STATS/STATS64 (IPVS folds its per-CPU counters in
# every 2 s, hence settled).
conns_of() { ipv -L -n --stats --exact -t $VIP:80 | awk -v a="$1" '$1 == a || $2 == a {print $(NF-4); exit}'; }
assert_eq "$(settled 30 conns_of $VIP:80)" 30 "service connections in -L --stats"
assert_eq "$(settled 10 conns_of ${RIP[2]}:80)" 10 "rs2's connections in -L --stats"

# Edits: scheduler, weight 0 (no new connections), persistence.
adm_ok "$LB" -E -t $VIP:80 -s wrr
adm_ok "$LB" -e -t $VIP:80 -r ${RIP[3]}:80 -m -w 0
expect_balance "$CL" tcp $VIP 80 20 "rs1:10 rs2:10" "wrr with rs3 at weight 0" 21000
adm_ok "$LB" -d -t $VIP:80 -r ${RIP[3]}:80
adm_ok "$LB" -E -t $VIP:80 -s rr -p 300
ipv -L -n | grep -qx 'TCP  10.0.100.1:80 rr persistent 300' ||
  fail "no 'TCP  10.0.100.1:80 rr persistent 300' line: $(ipv -L -n)"

# A firewall-mark service and an IPv6 service (16-byte addresses).
adm_ok "$LB" -A -f 7 -s rr
adm_ok "$LB" -a -f 7 -r ${RIP[1]}:0 -m -w 2
adm_ok "$LB" -A -t [2001:db8:100::1]:443 -s wrr
adm_ok "$LB" -a -t [2001:db8:100::1]:443 -r [2001:db8:1::1]:443 -m -w 5
assert_eq "$(body)" "TCP 10.0.100.1:80 rr persistent 300
 -> 10.0.1.1:80 Masq 1
 -> 10.0.1.2:80 Masq 1
TCP [2001:db8:100::1]:443 wrr
 -> [2001:db8:1::1]:443 Masq 5
FWM 7 rr
 -> 10.0.1.1:0 Masq 2" "listing of TCP, IPv6 and firewall-mark services"

# Save, flush, restore: the same rules come back.
ipv -S -n >"$TEST_TMP/saved" || fail "ipvsadm -S -n failed"
log "ipvsadm -S -n:"; sed 's/^/#   /' "$TEST_TMP/saved" >&2
adm_ok "$LB" -C
assert_eq "$(body)" "" "listing after -C"
ip netns exec "$LB" ipvsadm -R <"$TEST_TMP/saved" || fail "ipvsadm -R failed"
assert_eq "$(ipv -S -n)" "$(cat "$TEST_TMP/saved")" "ipvsadm -S -n after -R"

# /proc/net/ip_vs, in IPVS's text (node_exporter's ipvs collector parses
# it): hex addresses and ports, IPv6 in eight groups, trailing blanks.
# Services come in hash order, so each line is looked for on its own. The
# connection counts of the :80 servers depend on the engine (a flush keeps
# IPVS's connections), the others are 0.
pv=$(ip netns exec "$LB" cat /proc/net/ip_vs) || fail "no /proc/net/ip_vs in the director's namespace"
log "/proc/net/ip_vs:"; printf '%s\n' "$pv" | sed 's/^/#   |/; s/$/|/' >&2
assert_eq "$(printf '%s\n' "$pv" | wc -l)" 10 "lines in /proc/net/ip_vs"
printf '%s\n' "$pv" | sed -n 1p | grep -Eqx 'IP Virtual Server version 1\.2\.1 \(size=[0-9]+\)' ||
  fail "/proc/net/ip_vs: first line is not IPVS's version line"
for l in "Prot LocalAddress:Port Scheduler Flags" \
  "  -> RemoteAddress:Port Forward Weight ActiveConn InActConn" \
  "TCP  [2001:0db8:0100:0000:0000:0000:0000:0001]:01BB wrr " \
  "  -> [2001:0db8:0001:0000:0000:0000:0000:0001]:01BB      Masq    5      0          0         " \
  "FWM  00000007 rr " \
  "  -> 0A000101:0000      Masq    2      0          0         "; do
  printf '%s\n' "$pv" | grep -qxF -- "$l" || fail "/proc/net/ip_vs lacks the line '$l'"
done
# IPVS prints the persistence timeout in jiffies: 300 s times HZ.
pt=$(printf '%s\n' "$pv" | sed -n 's/^TCP  0A006401:0050 rr  persistent \([0-9]*\) FFFFFFFF$/\1/p')
case $((${pt:-1} % 300)):$((${pt:-0} / 300)) in 0:100 | 0:250 | 0:300 | 0:1000) ;; *)
  fail "/proc/net/ip_vs: no 'TCP  0A006401:0050 rr  persistent 300*HZ FFFFFFFF' line (timeout '${pt}')" ;;
esac
for rs in 0A000101 0A000102; do
  printf '%s\n' "$pv" | grep -Eqx "  -> $rs:0050      Masq    1      [0-9]+ +[0-9]+ +" ||
    fail "/proc/net/ip_vs lacks the line of real server $rs:0050"
done

# Timeouts (GET_CONFIG/SET_CONFIG).
assert_eq "$(ipv -L --timeout)" "Timeout (tcp tcpfin udp): 900 120 300" "default timeouts"
adm_ok "$LB" --set 100 20 30
assert_eq "$(ipv -L --timeout)" "Timeout (tcp tcpfin udp): 100 20 30" "timeouts after --set"

# Zeroing.
adm_ok "$LB" -Z
assert_eq "$(settled 0 conns_of $VIP:80)" 0 "service connections after -Z"

# No sync daemon runs: an empty list.
out=$(ipv -L --daemon 2>&1) || fail "ipvsadm -L --daemon failed: $out"
assert_eq "$out" "" "ipvsadm -L --daemon"

# Errors, as ipvsadm words them from the errno it receives.
expect_error() {
  local want=$1 out; shift
  out=$(ipv "$@" 2>&1) && fail "ipvsadm $* succeeded"
  log "ipvsadm $*: $out"
  case $out in *"$want"*) ;; *) fail "ipvsadm $*: expected '$want', got: $out" ;; esac
}
expect_error "Service already exists" -A -t $VIP:80 -s rr
expect_error "No such service" -D -t 10.9.9.9:80
expect_error "Service not defined" -a -t 10.9.9.9:80 -r ${RIP[1]}:80 -m
expect_error "Destination already exists" -a -t $VIP:80 -r ${RIP[1]}:80 -m
expect_error "No such destination" -d -t $VIP:80 -r ${RIP[3]}:80
expect_error "Scheduler or persistence engine not found" -A -t $VIP:81 -s nosuch

# Still balancing after all of that.
# Persistent: four connections from one client, all to the same server.
got=$(lb_names "$CL" tcp $VIP 80 4 22000 | count_names)
log "persistent service after restore: 4 requests -> $got"
case $got in rs1:4 | rs2:4) ;; *) fail "persistence after restore: expected one server for all 4, got '$got'" ;; esac
# pyroute2's IPVS API (tests/py/pyroute2_ipvs.py): what it adds, ipvsadm
# lists; what it dumps, gets, edits and deletes, it checks.
py2() { ip netns exec "$LB" timeout 120 python3 "$RVS_ROOT/tests/py/pyroute2_ipvs.py" "$@" $VIP ${RIP[1]} ${RIP[2]} 2>&1; }
out=$(py2 add) || fail "pyroute2 add: $out"
printf '%s\n' "$out" | sed 's/^/#   pyroute2: /' >&2
assert_eq "$(ipv -L -n -t $VIP:8080 | tail -n +3 | awk '$1 == "->" {$0 = " " $1 " " $2 " " $3 " " $4} 1' | norm)" \
  "TCP 10.0.100.1:8080 wlc
 -> 10.0.1.1:8080 Masq 1
 -> 10.0.1.2:8080 Masq 2" "ipvsadm's listing of what pyroute2 added"
out=$(py2 check) || fail "pyroute2 check: $out"
printf '%s\n' "$out" | sed 's/^/#   pyroute2: /' >&2
ipv -L -n -t $VIP:8080 >/dev/null 2>&1 && fail "the service pyroute2 deleted is still listed"

# moby/ipvs's requests (Docker swarm, kube-proxy), replayed byte for byte.
out=$(ip netns exec "$LB" python3 "$RVS_ROOT/tests/py/moby_requests.py" 2>&1); rc=$?
printf '%s\n' "$out" >&2
[ $rc = 0 ] || fail "moby/ipvs's requests were not answered as IPVS answers them"
pass "ipvsadm drove $( [ "${RVS_COMPAT:-0}" = 1 ] && echo "rvs (ipvs_compat=1)" || echo IPVS ): listings, stats, edits, save/restore, timeouts, errors, traffic"
