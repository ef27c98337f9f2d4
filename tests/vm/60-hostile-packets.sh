#!/bin/bash
# Hostile packets: from the client's namespace, crafted IPv4 frames are sent
# over AF_PACKET to the director (tests/py/hostile.py: truncated and lying
# headers, bad IHL and lengths, IP options, fragments, bad checksums, bad TCP
# data offsets, lying UDP lengths, TTL 1, ICMP errors about unknown
# connections and truncated quotes, ports without a service, spoofed SYN and
# UDP floods) toward NAT, DR and TUN services. The runner fails the test on
# any kernel splat; here every service must still carry a legitimate
# connection afterwards. Then two lone segments, followed one by one: a SYN
# with a bad TCP checksum and an ACK of no connection make no entry and
# reach no real server (the bad SYN: rvs only; IPVS makes an entry for it
# and forwards it with its checksum still wrong, which the test logs), and
# the director's stack counts the bad checksum; a real server's SYN-ACK to
# no connection makes no entry (NAT). The lone segments also go to an IPv6
# and a firewall-mark service, and to the tunnel server behind GUE and GRE
# (nothing encapsulated). Runs on IPVS too.
# vm-timeout: 1200
. "$(dirname "$0")/../lib.sh"
adm_init rr
FLOOD=${RVS_HOSTILE_FLOOD:-2000}
# Real servers keep a backlog above the flood: a full SYN queue would drop
# legitimate SYNs whatever the director does (the kernel's IPVS shows the
# same; Documentation/hardening.md, "Floods").
export SERVE_BACKLOG=$((FLOOD + 1024))

mac_of() { ip netns exec "$1" cat "/sys/class/net/$2/address"; }

# udp_drained NS PORT: waits (up to 20 s) until the UDP socket on PORT in
# NS has nothing left to read.
udp_drained() {
  local i q
  for i in $(seq 1 100); do
    q=$(ip netns exec "$1" ss -Huln "sport = :$2" | awk '{print $2; exit}')
    [ "${q:-0}" = 0 ] && return 0
    sleep 0.2
  done
  return 1
}

# hostile LABEL: legit before, the hostile frames, legit after.
hostile() {
  local label=$1 out
  expect_balance "$CL" tcp $VIP 80 1 "rs1:1" "$label TCP before"
  out=$(timeout 120 ip netns exec "$CL" python3 "$RVS_ROOT/tests/py/hostile.py" c0 "$(mac_of "$LB" d0)" \
    $CIP $VIP 80 53 "$FLOOD" "$label" 2>&1) || fail "$label: hostile.py failed: $out"
  printf '%s\n' "$out" >&2
  [ "$ADM" != rvsadm ] || rvs_loaded || fail "rvs.ko went away"
  adm "$LB" -L -n | sed 's/^/#   /' >&2
  # The SYN flood leaves the real server with $FLOOD half-open connections
  # (SYN-ACKs to spoofed hosts that never answer ARP); its listen backlog
  # is larger than that (see serve_name in lib.sh: the test kernel has no
  # SYN cookies), so a legitimate SYN still gets its SYN-ACK at once.
  expect_balance "$CL" tcp $VIP 80 2 "rs1:2" "$label TCP after"
  # UDP only through NAT: a DR/TUN real server's python server bound to
  # 0.0.0.0 answers from its own address, not the VIP (no IP_PKTINFO), so
  # the client drops the answer whatever rvs does. The real server's
  # one-threaded python server first works through the flood's datagrams
  # still queued on its socket: a query behind them would be answered
  # after the client's 3 s (seen: its answer met a closed port).
  if [ "$label" = NAT ]; then
    udp_drained "${RS[1]}" 53 || log "the real server's UDP socket still holds datagrams after 20 s"
    expect_balance "$CL" udp $VIP 53 1 "rs1:1" "$label UDP after" 41000
  fi
  return 0
}

# The director's TCP InCsumErrors counter.
csum_errors() {
  ip netns exec "$LB" awk '$1 == "Tcp:" {if (!c) {for (i = 2; i <= NF; i++) if ($i == "InCsumErrors") c = i} else print $c}' /proc/net/snmp
}

# lone LABEL RS_NS VIP CIP RIP [OUTER]: from client port 47001 a SYN with
# a bad TCP checksum, from 47002 an ACK of no connection, sent as raw
# frames to VIP:80 (IPv4 or IPv6); then neither may have an entry or have
# reached the real server. Its prerouting counts them before any
# decapsulation and checksum check, and OUTER (an nft match such as
# "udp dport 6080") counts what the director encapsulated toward it. With a
# RIP (NAT; "-" otherwise), the real server then sends a SYN-ACK from its
# port 80 to a client port nothing opened: that "reply" makes no entry and
# reaches the client untranslated (routed, from the real server's address).
lone() {
  local label=$1 rs=$2 vip=$3 cip=$4 rip=$5 outer=${6:-meta l4proto 253} before after bad ack tun
  ip netns exec "$rs" nft -f - <<NFT || fail "nft on the real server"
table inet seen {
  counter bad {}
  counter ack {}
  counter tun {}
  chain pre {
    type filter hook prerouting priority -300;
    tcp sport 47001 counter name bad
    tcp sport 47002 counter name ack
    $outer counter name tun
  }
}
NFT
  before=$(csum_errors)
  local mac port flags extra
  mac=$(mac_of "$LB" d0)
  while read -r port flags extra; do
    ip netns exec "$CL" python3 "$RVS_ROOT/tests/py/tcp_frame.py" c0 "$mac" "$cip" "$vip" $port 80 $flags $extra ||
      fail "$label: tcp_frame.py $port $flags $extra"
  done <<'SEGMENTS'
47001 S bad-csum
47002 A
SEGMENTS
  sleep 1
  after=$(csum_errors)
  seen() { nft_counter "$rs" inet seen "$1"; }
  bad=$(seen bad) ack=$(seen ack) tun=$(seen tun)
  entries() { adm "$LB" -L -n -c | grep -c ":$1 "; }
  log "$label: bad-checksum SYN: $(entries 47001) entries, $bad at the server, director's InCsumErrors $before -> $after; lone ACK: $(entries 47002) entries, $ack at the server; $tun encapsulated"
  assert_eq "$(entries 47002)" 0 "$label: entries for an ACK of no connection"
  assert_eq "$ack" 0 "$label: an ACK of no connection reached the server"
  if [ "$ADM" = rvsadm ]; then
    assert_eq "$(entries 47001)" 0 "$label: entries for a SYN with a bad checksum"
    assert_eq "$bad" 0 "$label: a SYN with a bad checksum reached the server"
    assert_eq "$tun" 0 "$label: encapsulated packets to the server"
    [ "$after" -gt "$before" ] || fail "$label: the director did not count the bad checksum ($before -> $after)"
  fi
  ip netns exec "$rs" nft delete table inet seen
  [ "$rip" != - ] || return 0
  # The client counts what arrives for port 47003: the director may route
  # the segment as it is (both engines do: it is a router), but must not
  # translate it into a reply from the VIP.
  local ipf=ip
  case $vip in *:*) ipf=ip6 ;; esac
  ip netns exec "$CL" nft -f - <<NFT || fail "nft on the client"
table inet reply {
  counter natted {}
  counter routed {}
  chain in {
    type filter hook prerouting priority -300;
    tcp dport 47003 $ipf saddr $vip counter name natted
    tcp dport 47003 $ipf saddr $rip counter name routed
  }
}
NFT
  ip netns exec "$rs" python3 "$RVS_ROOT/tests/py/tcp_frame.py" r0 "$(mac_of "$LB" br0)" "$rip" "$cip" 80 47003 SA ||
    fail "$label: tcp_frame.py from the real server"
  sleep 1
  local natted routed
  natted=$(nft_counter "$CL" inet reply natted) routed=$(nft_counter "$CL" inet reply routed)
  ip netns exec "$CL" nft delete table inet reply
  log "$label: a real server's SYN-ACK to no connection: $(entries 47003) entries; at the client $natted from the VIP, $routed from the real server"
  assert_eq "$(entries 47003)" 0 "$label: entries for a real server's reply to no connection"
  assert_eq "$natted" 0 "$label: a real server's reply to no connection translated to come from the VIP"
  assert_eq "$routed" 1 "$label: a real server's reply to no connection routed untouched (as IPVS does)"
}

# --- NAT
topo_nat hn 1
serve_name_bg "${RS[1]}" tcp 80 rs1
serve_name_bg "${RS[1]}" udp 53 rs1
wait_listen "${RS[1]}" tcp 80
adm_ok "$LB" -A -t $VIP:80 -s rr
adm_ok "$LB" -a -t $VIP:80 -r ${RIP[1]}:80 -m
adm_ok "$LB" -A -u $VIP:53 -s rr
adm_ok "$LB" -a -u $VIP:53 -r ${RIP[1]}:53 -m
hostile NAT
lone NAT "${RS[1]}" $VIP $CIP ${RIP[1]}
# The same toward an IPv6 service, and toward a firewall-mark service
# (VIP:80 marked, its address service gone).
topo_nat_ipv6
adm_ok "$LB" -A -t "[$VIP6]:80" -s rr
adm_ok "$LB" -a -t "[$VIP6]:80" -r "[2001:db8:1::1]:80" -m
lone NAT6 "${RS[1]}" $VIP6 2001:db8::2 2001:db8:1::1
adm_ok "$LB" -D -t $VIP:80
ip netns exec "$LB" nft -f - <<NFT || fail "nft mark rule"
table ip hmark {
  chain pre {
    type filter hook prerouting priority mangle; policy accept;
    ip daddr $VIP tcp dport 80 meta mark set 7
  }
}
NFT
adm_ok "$LB" -A -f 7 -s rr
adm_ok "$LB" -a -f 7 -r ${RIP[1]}:80 -m
lone FWM "${RS[1]}" $VIP $CIP ${RIP[1]}
kill_ns_procs

# --- DR and TUN share the topology of 21-dr / 22-tun.
direct() {
  local tag=$1 how=$2
  topo_direct $tag
  local rs=${RS[1]}
  if [ "$how" = -i ]; then
    ip -n "$rs" link set tunl0 up 2>/dev/null || { ip -n "$rs" link add tunl0 type ipip; ip -n "$rs" link set tunl0 up; } ||
      fail "no tunl0 (CONFIG_NET_IPIP?)"
    nsysctl "$rs" net.ipv4.conf.tunl0.rp_filter=0
  fi
  nsysctl "$rs" net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2 \
    net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
    net.ipv4.conf.r0.rp_filter=0 net.ipv4.conf.f0.rp_filter=0
  ip -n "$rs" addr add $VIP/32 dev lo
  serve_name_bg "$rs" tcp 80 rs1
  serve_name_bg "$rs" udp 53 rs1
  wait_listen "$rs" tcp 80
  adm_ok "$LB" -A -t $VIP:80 -s rr
  adm_ok "$LB" -a -t $VIP:80 -r ${RIP[1]}:80 $how
  adm_ok "$LB" -A -u $VIP:53 -s rr
  adm_ok "$LB" -a -u $VIP:53 -r ${RIP[1]}:53 $how
}
direct hd -g
hostile DR
lone DR "${RS[1]}" $VIP $CIP -
kill_ns_procs
direct ht -i
hostile TUN
lone TUN "${RS[1]}" $VIP $CIP - "meta l4proto 4"
# The same real server behind GUE and GRE: nothing may be encapsulated.
adm_ok "$LB" -d -t $VIP:80 -r ${RIP[1]}:80
adm_ok "$LB" -a -t $VIP:80 -r ${RIP[1]}:80 -i --tun-type gue --tun-port 6080
lone TUN-GUE "${RS[1]}" $VIP $CIP - "udp dport 6080"
adm_ok "$LB" -d -t $VIP:80 -r ${RIP[1]}:80
adm_ok "$LB" -a -t $VIP:80 -r ${RIP[1]}:80 -i --tun-type gre
lone TUN-GRE "${RS[1]}" $VIP $CIP - "meta l4proto 47"
pass "hostile frames to NAT, DR and TUN services: module intact, services still work; lone bad segments make nothing, toward IPv4, IPv6, fwmark, DR, IPIP, GUE and GRE services"
