#!/bin/bash
# The ingress fast path (--set-option fastpath=1): established NAT
# connections, IPv4 and IPv6, both directions, are handled at the devices'
# ingress hook, so the director's INPUT and FORWARD chains see only the
# packets that open and close them; every packet is still counted, the TTL
# and hop limit still drop by one, and the data arrives intact. The same
# for direct routing and IP-in-IP tunnels (INPUT). Off again, the chains
# see every packet. Connection sync of a firewall-mark service carries the
# service's mark, in the master's messages and in the whole table it sends
# a backup that starts late. Devices come and go under it, and the module
# unloads with it on.
#   client 10.0.0.2 -- director (VIP 10.0.100.1 on lo) -- br0 -- real server 10.0.1.1
. "$(dirname "$0")/../lib.sh"

rvs_only
adm_init rr
mk_test_tmp
topo_nat fp 1
topo_nat_ipv6
VIP4=$VIP

# Counters outside rvs: what the client and the real server send, what the
# director's filter chains see, and the TTL / hop limit that arrives.
ip netns exec "$LB" nft -f - <<EOF || fail "nft (director)"
table inet fp {
  counter in4 {}
  counter in6 {}
  counter fwd4 {}
  counter fwd6 {}
  chain input {
    type filter hook input priority 0;
    ip daddr $VIP4 tcp dport 8000 counter name in4
    ip6 daddr $VIP6 tcp dport 8000 counter name in6
  }
  chain forward {
    type filter hook forward priority 0;
    ip saddr ${RIP[1]} tcp sport 8000 counter name fwd4
    ip6 saddr 2001:db8:1::1 tcp sport 8000 counter name fwd6
  }
}
EOF
# end_counters NS PEER4 PEER6 OUT IN: at one end (client or real server),
# what it sends to its peer (port 8000 as OUT: dport or sport) and what
# arrives from it with a TTL / hop limit other than 63 (port 8000 as IN).
end_counters() {
  ip netns exec "$1" nft -f - <<EOF || fail "nft (${1#"$NS_PREFIX"-})"
table inet fp {
  counter sent4 {}
  counter sent6 {}
  counter got_ttl {}
  counter got_hop {}
  chain output {
    type filter hook output priority 0;
    ip daddr $2 tcp $4 8000 counter name sent4
    ip6 daddr $3 tcp $4 8000 counter name sent6
  }
  chain input {
    type filter hook input priority 0;
    ip saddr $2 tcp $5 8000 ip ttl != 63 counter name got_ttl
    ip6 saddr $3 tcp $5 8000 ip6 hoplimit != 63 counter name got_hop
  }
}
EOF
}
end_counters "$CL" "$VIP4" "$VIP6" dport sport
end_counters "${RS[1]}" "$CIP" 2001:db8::2 sport dport
reset_fp() {
  local ns
  for ns in "$LB" "$CL" "${RS[1]}"; do
    ip netns exec "$ns" nft reset counters table inet fp >/dev/null || fail "nft reset"
  done
}

adm_ok "$LB" -A -t $VIP4:8000 -s rr
adm_ok "$LB" -a -t $VIP4:8000 -r ${RIP[1]}:8000 -m -w 1
adm_ok "$LB" -A -t "[$VIP6]:8000" -s rr
adm_ok "$LB" -a -t "[$VIP6]:8000" -r "[2001:db8:1::1]:8000" -m -w 1

# pkts VIP: "INPKTS OUTPKTS" of the service at VIP (-L --stats --json).
pkts() {
  adm "$LB" -L -n --stats --json | python3 -c '
import json, sys
for s in json.load(sys.stdin)["services"]:
    if s["address"] == sys.argv[1]:
        print(s["stats"]["inpkts"], s["stats"]["outpkts"])' "$1"
}

# transfer FAMILY LABEL: 2 MiB from the client to the real server through
# the VIP of FAMILY (4 or 6), counters reset first; sets SENT (client
# packets), RSENT (real server packets), IN (director INPUT), FWD
# (director FORWARD), COUNTED and COUNTED_OUT (the service's inpkts and
# outpkts grew by).
transfer() {
  local v=$1 vip=$VIP4 i0 o0 i1 o1
  [ "$v" = 6 ] && vip=$VIP6
  reset_fp
  read -r i0 o0 < <(pkts "$vip")
  check_transfer "$CL" "${RS[1]}" "$vip" 8000 8000 2097152 "$2"
  SENT=$(nft_counter "$CL" inet fp sent$v)
  RSENT=$(nft_counter "${RS[1]}" inet fp sent$v)
  IN=$(nft_counter "$LB" inet fp in$v)
  FWD=$(nft_counter "$LB" inet fp fwd$v)
  read -r i1 o1 < <(pkts "$vip")
  COUNTED=$((i1 - i0)) COUNTED_OUT=$((o1 - o0))
  local t=ttl; [ "$v" = 6 ] && t=hop
  assert_eq "$(nft_counter "$CL" inet fp got_$t)" 0 "$2: replies at the client whose TTL/hop limit is not 63"
  assert_eq "$(nft_counter "${RS[1]}" inet fp got_$t)" 0 "$2: requests at the real server whose TTL/hop limit is not 63"
  log "$2: client sent $SENT, real server $RSENT; director INPUT saw $IN, FORWARD $FWD; service counted $COUNTED in, $COUNTED_OUT out"
  [ "$SENT" -ge 20 ] && [ "$RSENT" -ge 20 ] || fail "$2: too few packets to tell the paths apart ($SENT, $RSENT)"
}

# Off (the default): every packet passes the filter chains.
for v in 4 6; do
  transfer $v "IPv$v NAT, fast path off"
  assert_eq "$IN" "$SENT" "IPv$v, fast path off: client packets seen by INPUT"
  assert_eq "$FWD" "$RSENT" "IPv$v, fast path off: real server packets seen by FORWARD"
  assert_eq "$COUNTED" "$SENT" "IPv$v, fast path off: client packets the service counted"
  assert_eq "$COUNTED_OUT" "$RSENT" "IPv$v, fast path off: real server packets the service counted"
done

mark=$(kmsg_mark)
adm_ok "$LB" --set-option fastpath=1
assert_eq "$(adm "$LB" -L --options --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["options"]["fastpath"])')" 1 "fastpath setting"
dmesg_since "$mark" | grep -q 'fast path on: [1-9][0-9]* devices hooked' ||
  fail "no 'fast path on' line in the kernel log: $(dmesg_since "$mark" | tail -3)"

# On: only the opening and closing packets (SYN, the handshake's ACK, FINs
# and what follows them) take the slow path.
for v in 4 6; do
  transfer $v "IPv$v NAT, fast path on"
  [ "$IN" -le 8 ] || fail "IPv$v, fast path on: INPUT saw $IN of the client's $SENT packets"
  [ "$FWD" -le 8 ] || fail "IPv$v, fast path on: FORWARD saw $FWD of the real server's $RSENT packets"
  assert_eq "$COUNTED" "$SENT" "IPv$v, fast path on: client packets the service counted"
  assert_eq "$COUNTED_OUT" "$RSENT" "IPv$v, fast path on: real server packets the service counted"
done

# The connections' state and expiry moved on as on the slow path: each
# ended (FIN_WAIT or TIME_WAIT, not ESTABLISHED with 900 s left).
states=$(adm "$LB" -L -n -c | awk 'NR > 2 {print $3}' | sort | uniq -c | tr -s ' ')
log "connection states: $states"
echo "$states" | grep -q ESTABLISHED && fail "a finished connection is still ESTABLISHED: $states"

# Devices that come and go while it is on are hooked and unhooked (the
# kernel log would show a splat for a hook left on a freed device).
ip -n "$LB" link add fpdummy type dummy || fail "add a dummy device"
ip -n "$LB" link set fpdummy up
ip -n "$LB" link del fpdummy || fail "delete the dummy device"
ip link add fpmove type dummy || fail "add a device to move"
ip link set fpmove netns "$LB" || fail "move a device into the director's namespace"
ip -n "$LB" link set fpmove netns 1 || fail "move it back out"
ip link del fpmove

# Direct routing and IP-in-IP tunnels (IPv4), in a topology of their own:
# the client's packets skip the director's INPUT chain too (the real
# server answers the client directly), and are all counted.
# vip_counter NS NAME HOOK: counts packets to $VIP:8000 at HOOK in NS.
vip_counter() {
  ip netns exec "$1" nft -f - <<EOF || fail "nft in ${1#"$NS_PREFIX"-}"
table inet fp {
  counter $2 {}
  chain $3 {
    type filter hook $3 priority 0;
    ip daddr $VIP tcp dport 8000 counter name $2
  }
}
EOF
}
direct_case() {
  local fwd=$1 label=$2 sent in c0 c1
  topo_direct "fp$fwd"
  if [ "$fwd" = i ]; then tun_rs; else direct_rs; fi
  vip_counter "$LB" in4 input
  vip_counter "$CL" sent4 output
  adm_ok "$LB" --set-option fastpath=1
  adm_ok "$LB" -A -t $VIP:8000 -s rr
  adm_ok "$LB" -a -t $VIP:8000 -r ${RIP[1]}:8000 -$fwd -w 1
  read -r c0 _ < <(pkts "$VIP")
  check_transfer "$CL" "${RS[1]}" "$VIP" 8000 8000 2097152 "$label, fast path on"
  read -r c1 _ < <(pkts "$VIP")
  sent=$(nft_counter "$CL" inet fp sent4) in=$(nft_counter "$LB" inet fp in4)
  log "$label, fast path on: client sent $sent; director INPUT saw $in; service counted $((c1 - c0))"
  [ "$sent" -ge 20 ] || fail "$label: too few packets to tell the paths apart ($sent)"
  [ "$in" -le 8 ] || fail "$label, fast path on: INPUT saw $in of the client's $sent packets"
  assert_eq "$((c1 - c0))" "$sent" "$label, fast path on: client packets the service counted"
}
NAT_CL=$CL NAT_LB=$LB NAT_RS=${RS[1]} NAT_RIP=${RIP[1]}
direct_case g "DR"
direct_case i "TUN (IPIP)"
CL=$NAT_CL LB=$NAT_LB RS=("" "$NAT_RS") RIP=("" "$NAT_RIP") VIP=$VIP4

# Connection sync of a firewall-mark service: the fast path's packets reach
# rvs before any rule marks them, yet the master sends the connection
# with its service's mark, so the backup (which finds the service by it)
# takes it while it is open. Mark 7 is set at PREROUTING for VIP:8100.
newns BK fp-bk
ip link add s0 netns "$LB" type veth peer name s0 netns "$BK" || fail "veth to the backup"
ip -n "$LB" addr add 10.0.9.1/24 dev s0 && ip -n "$LB" link set s0 up
ip -n "$BK" addr add 10.0.9.2/24 dev s0 && ip -n "$BK" link set s0 up
ip netns exec "$LB" nft -f - <<EOF || fail "nft mark"
table ip fpmark {
  chain pre {
    type filter hook prerouting priority -150;
    ip daddr $VIP4 tcp dport 8100 meta mark set 7
  }
}
EOF
for ns in "$LB" "$BK"; do
  adm_ok "$ns" -A -f 7 -s rr
  adm_ok "$ns" -a -f 7 -r ${RIP[1]}:8100 -m -w 1
done
adm_ok "$LB" --start-daemon master --mcast-interface s0 --syncid 89
adm_ok "$BK" --start-daemon backup --mcast-interface s0 --syncid 89
ip netns exec "${RS[1]}" timeout 20 socat -u TCP-LISTEN:8100,reuseaddr OPEN:/dev/null </dev/null >/dev/null 2>&1 &
bg_track $!
wait_listen "${RS[1]}" tcp 8100
# 30 lines, 0.2 s apart, on one connection.
printf 'for i in $(seq 30); do echo x; sleep 0.2; done\n' >"$TEST_TMP/slow.sh"
ip netns exec "$CL" timeout 20 socat -u "EXEC:bash $TEST_TMP/slow.sh" "TCP4:$VIP4:8100" </dev/null >/dev/null 2>&1 &
bg_track $!
# established NS TRIES [SKIP]: the first client end ($CIP:port) that NS
# lists ESTABLISHED, other than SKIP, within TRIES x 0.2 s; empty if none.
established() {
  local ns=$1 tries=$2 skip=${3:-} end i
  for i in $(seq 1 "$tries"); do
    sleep 0.2
    end=$(adm "$ns" -L -n -c | awk -v c="$CIP:" -v s="$skip" \
      'index($4, c) == 1 && $4 != s && $3 == "ESTABLISHED" {print $4; exit}')
    [ -n "$end" ] && { echo "$end"; return; }
  done
}
synced=$(established "$BK" 25)
[ -n "$synced" ] || fail "the backup did not learn the open connection of the firewall-mark service; master: $(adm "$LB" -L -n -c | tail -n +3 | tr -s ' ' | tr '\n' ';')"
log "firewall-mark service, fast path on: the backup lists $synced while it is open"

# The same for the whole table a master sends when a backup starts
# (resync): a connection the backup never heard of, idle while it starts,
# comes in that table with its service's mark (the first version sent
# mark 0 there, and the backup refused it).
adm_ok "$BK" --stop-daemon backup
# The first listener took its one connection and closed its socket.
ip netns exec "${RS[1]}" timeout 30 socat -u TCP-LISTEN:8100,reuseaddr,fork OPEN:/dev/null \
  </dev/null >/dev/null 2>&1 &
bg_track $!
wait_listen "${RS[1]}" tcp 8100
# One line, then 20 s of silence on the open connection.
printf 'echo y; sleep 20\n' >"$TEST_TMP/idle.sh"
ip netns exec "$CL" timeout 30 socat -u "EXEC:bash $TEST_TMP/idle.sh" "TCP4:$VIP4:8100" \
  </dev/null >/dev/null 2>&1 &
bg_track $!
idle=$(established "$LB" 25 "$synced")
[ -n "$idle" ] || fail "no second connection to the firewall-mark service on the master"
# The master sends its queued messages every 2 s: the connection's own
# record (at its 3rd packet) goes out while no backup listens, so only the
# whole table can bring it.
sleep 3
mark=$(kmsg_mark)
adm_ok "$BK" --start-daemon backup --mcast-interface s0 --syncid 89
learnt=$(established "$BK" 50 "$synced")
[ "$learnt" = "$idle" ] || fail "the backup did not learn $idle from the master's whole table: $(dmesg_since "$mark" | grep sync: | tail -3)"
log "firewall-mark service: a backup that starts late lists $idle from the master's whole table"

# Off again: the chains see everything once more.
mark=$(kmsg_mark)
adm_ok "$LB" --set-option fastpath=0
dmesg_since "$mark" | grep -q 'fast path off: 0 devices hooked' ||
  fail "no 'fast path off' line in the kernel log: $(dmesg_since "$mark" | tail -3)"
transfer 4 "IPv4 NAT, fast path off again"
assert_eq "$IN" "$SENT" "fast path off again: client packets seen by INPUT"

# Unloading with the fast path on in a live namespace unhooks its devices
# (the runner loads the module again).
adm_ok "$LB" --set-option fastpath=1
rmmod rvs || fail "rmmod rvs with the fast path on"
# Nothing balances any more: the director's own stack refuses the port.
serve_sink "${RS[1]}" 8000 "$TEST_TMP/late"
ip netns exec "$CL" socat -u /dev/null "TCP4:$VIP4:8000,connect-timeout=3" 2>/dev/null &&
  fail "a connection to the VIP still reached a real server after unload"
pass "fast path: established NAT flows skip the chains, counted, one hop less; on, off, device churn, unload"
