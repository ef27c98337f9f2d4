#!/bin/bash
# Timeouts (--set, -L --timeout), connection listing (-L -c), per-CPU
# statistics (--stats --exact) and zeroing (-Z), observed through real
# traffic: a shortened UDP timeout really expires entries; counters match
# the connections and packets sent. Runs on IPVS too (ipvsadm -Lc reads
# /proc/net/ip_vs_conn); --json is rvsadm's only.
. "$(dirname "$0")/../lib.sh"
adm_init rr
topo_nat tos 2
for i in 1 2; do serve_name_bg "${RS[$i]}" udp 53 rs$i; serve_name_bg "${RS[$i]}" tcp 80 rs$i; done
for i in 1 2; do wait_listen "${RS[$i]}" udp 53; wait_listen "${RS[$i]}" tcp 80; done
adm_ok "$LB" -A -u $VIP:53 -s rr
adm_ok "$LB" -A -t $VIP:80 -s rr
for i in 1 2; do
  adm_ok "$LB" -a -u $VIP:53 -r ${RIP[$i]}:53 -m -w 1
  adm_ok "$LB" -a -t $VIP:80 -r ${RIP[$i]}:80 -m -w 1
done

# Timeouts: defaults, then a short UDP timeout.
out=$(adm "$LB" -L --timeout) || fail "-L --timeout: $out"
assert_eq "$out" "Timeout (tcp tcpfin udp): 900 120 300" "default timeouts"
adm_ok "$LB" --set 0 0 8
out=$(adm "$LB" -L --timeout)
assert_eq "$out" "Timeout (tcp tcpfin udp): 900 120 8" "timeouts after --set 0 0 8"

# Four UDP flows: four entries in -Lc, four inactive connections.
got=$(lb_names "$CL" udp $VIP 53 4 31000 | count_names)
assert_eq "$got" "rs1:2 rs2:2" "UDP rr over 4 flows"
conns=$(adm "$LB" -L -n -c) || fail "-L -n -c: $conns"
log "connection entries:"; echo "$conns" | sed 's/^/#   /' >&2
n=$(echo "$conns" | grep -c '^UDP ')
assert_eq "$n" 4 "UDP entries listed"
echo "$conns" | grep -q "^UDP .* 10.0.0.2:31000 *$VIP:53 *10.0.1.[12]:53" || fail "entry for client port 31000 missing"
inact=$(adm "$LB" -L -n | awk '/-> 10.0.1.[12]:53/ {s += $6} END {print s}')
assert_eq "$inact" 4 "InActConn of the UDP servers"

# After the 8 s timeout (plus the 1 s collector) they are gone.
sleep 10
n=$(adm "$LB" -L -n -c | grep -c '^UDP ')
assert_eq "$n" 0 "UDP entries after the timeout"
inact=$(adm "$LB" -L -n | awk '/-> 10.0.1.[12]:53/ {s += $6} END {print s}')
assert_eq "$inact" 0 "InActConn after the timeout"

# Statistics: 6 TCP connections, 3 per server; packets both ways (NAT).
# The client counts what it sends to and gets from VIP:80 (nft, from zero
# with the director's -Z), so the director's counters can be checked
# exactly: every such packet passes its hooks once.
ip netns exec "$CL" nft -f - <<NFT || fail "nft counters on the client"
table ip wire {
  counter to_vip {}
  counter from_vip {}
  chain out { type filter hook output priority 0; ip daddr $VIP tcp dport 80 counter name to_vip; }
  chain in { type filter hook input priority 0; ip saddr $VIP tcp sport 80 counter name from_vip; }
}
NFT
wire() { nft_counter "$CL" ip wire "$1" "$2"; }
adm_ok "$LB" -Z
got=$(lb_names "$CL" tcp $VIP 80 6 | count_names)
assert_eq "$got" "rs1:3 rs2:3" "TCP rr over 6 connections"
svc_conns() { adm "$LB" -L -n --stats --exact | awk -v v="$VIP:80" '$1 == "TCP" && $2 == v {print $3}'; }
settled 6 svc_conns >/dev/null
stats=$(adm "$LB" -L -n --stats --exact) || fail "--stats: $stats"
log "statistics:"; echo "$stats" | sed 's/^/#   /' >&2
svc_conns=$(echo "$stats" | awk -v v="$VIP:80" '$1 == "TCP" && $2 == v {print $3}')
assert_eq "$svc_conns" 6 "service Conns"
for i in 1 2; do
  c=$(echo "$stats" | awk -v r="${RIP[$i]}:80" '$1 == "->" && $2 == r {print $3}')
  assert_eq "$c" 3 "Conns of ${RIP[$i]}:80"
done
inpkts=$(echo "$stats" | awk -v v="$VIP:80" '$1 == "TCP" && $2 == v {print $4}')
outpkts=$(echo "$stats" | awk -v v="$VIP:80" '$1 == "TCP" && $2 == v {print $5}')
# Each connection: at least SYN, ACK, FIN-ACK in; SYN-ACK, data, FIN out.
[ "$inpkts" -ge 18 ] || fail "service InPkts $inpkts < 18"
[ "$outpkts" -ge 18 ] || fail "service OutPkts $outpkts < 18"
# Exactly what the client's wire counters saw (read again once the last
# ACKs are through: the counters must agree at some point within 5 s).
for _ in 1 2 3 4 5 6; do
  ex=$(adm "$LB" -L -n --stats --exact | awk -v v="$VIP:80" '$1 == "TCP" && $2 == v {print $4, $5, $6, $7}')
  wi="$(wire to_vip packets) $(wire from_vip packets) $(wire to_vip bytes) $(wire from_vip bytes)"
  [ "$ex" = "$wi" ] && break
  sleep 1
done
log "director InPkts OutPkts InBytes OutBytes: $ex; the client's wire: $wi"
assert_eq "$ex" "$wi" "service packet and byte counters against the client's wire counters"
tcp_states=$(adm "$LB" -L -n -c | awk '$1 == "TCP" {print $3}' | sort -u | tr '\n' ' ')
log "TCP entry states after the connections closed: $tcp_states"
# Both sides closed (the client's FIN first): every entry waits in TIME_WAIT.
assert_eq "$tcp_states" "TIME_WAIT " "TCP entry states after close"
if [ "$ADM" = rvsadm ]; then
  json=$(adm "$LB" -L -n -c --json) || fail "-Lc --json"
  echo "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)["connections"]
tcp = [c for c in d if c["protocol"] == "tcp"]
assert len(tcp) == 6, tcp
assert all(c["state"] == "TIME_WAIT" for c in tcp), tcp
' || fail "-Lc --json does not list the 6 TIME_WAIT connections"
fi

adm_ok "$LB" -Z -t $VIP:80
svc_conns=$(adm "$LB" -L -n --stats --exact | awk -v v="$VIP:80" '$1 == "TCP" && $2 == v {print $3}')
assert_eq "$svc_conns" 0 "service Conns after -Z"
pass "timeouts expire entries; -Lc, --stats and -Z agree with the traffic"
