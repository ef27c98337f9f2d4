#!/bin/bash
# SCTP services (--sctp-service, IP protocol 132) with associations of the
# kernel's SCTP stack: NAT (-m) carries the client's bytes intact (32 B and
# ~100 KB), with the same port and with port mapping VIP:80 -> RIP:8080,
# and the answers back from the VIP; rr spreads associations over two real
# servers; DR (-g) carries them unchanged, the replies direct; IPv6 NAT
# with port mapping. A held association is listed SCTP ESTABLISHED
# (ActiveConn 1), once shut down CLOSED (ActiveConn 0, InActConn 1).
# CRC32c: SCTP CRC and segmentation offload are off on every veth end, so
# each packet leaves with its CRC computed; the receivers check it (shown
# with a good and a bad one; SctpChecksumErrors must stay put), except on
# packets the director marked CHECKSUM_UNNECESSARY (IPVS does, after a
# port rewrite; a veth passes the mark on): so every SCTP packet captured
# on the receivers' links must carry the right CRC too.
#   client 10.0.0.2 -- director (VIP 10.0.100.1 on lo) -- real servers 10.0.1.1, 10.0.1.2
#   DR: topo_direct, the real server with the VIP on lo
. "$(dirname "$0")/../lib.sh"

command -v ethtool >/dev/null || fail "ethtool not installed (qemu/install-deps installs it)"
command -v tcpdump >/dev/null || fail "tcpdump not installed (qemu/install-deps installs it)"
[ -d /proc/net/sctp ] || modprobe sctp 2>/dev/null
[ -d /proc/net/sctp ] || fail "no SCTP in this kernel (CONFIG_IP_SCTP)"
adm_init rr
mk_test_tmp
SCTP_PY=$RVS_ROOT/tests/py/sctp.py

# no_offload NS DEV...: SCTP CRC32c and segmentation offload off, so the
# stack computes each packet's CRC itself (a veth carries a "partial" CRC
# unchecked, and an SCTP GSO packet's CRC is never checked either).
no_offload() {
  local ns=$1 d; shift
  for d in "$@"; do
    ip netns exec "$ns" ethtool -K "$d" tx-checksum-sctp off tx-sctp-segmentation off >/dev/null 2>&1
    ip netns exec "$ns" ethtool -k "$d" | grep -q "^[[:space:]]*tx-checksum-sctp: off" ||
      fail "tx-checksum-sctp still on on $d in ${ns#$NS_PREFIX-}"
    ip netns exec "$ns" ethtool -k "$d" | grep -q "^[[:space:]]*tx-sctp-segmentation: off" ||
      fail "tx-sctp-segmentation still on on $d in ${ns#$NS_PREFIX-}"
  done
}

# sctp_errs NS: the SctpChecksumErrors counter of NS's SCTP stack.
sctp_errs() { ip netns exec "$1" awk '$1 == "SctpChecksumErrors" {print $2}' /proc/net/sctp/snmp; }

# crcs_right FILE MIN LABEL: every SCTP packet in the capture FILE (at
# least MIN) carries the right CRC32c.
crcs_right() {
  local out
  if ! out=$(python3 "$SCTP_PY" crccheck "$1" "$2" 2>&1); then
    printf '%s\n' "$out" | sed 's/^/#   /' >&2
    fail "$3: want at least $2 SCTP packets, all with the right CRC"
  fi
  log "$3: $out"
}

# wait_sctp NS PORT: waits (up to 10 s) until an SCTP socket in NS listens
# on PORT (/proc/net/sctp/eps lists listening endpoints, LPORT in decimal).
wait_sctp() {
  local i
  for i in $(seq 1 100); do
    ip netns exec "$1" awk -v p="$2" '$6 == p {f = 1} END {exit !f}' /proc/net/sctp/eps && return 0
    sleep 0.1
  done
  fail "nothing listens on sctp port $2 in ${1#$NS_PREFIX-}"
}

# sctp_sink NS ADDR PORT OUTFILE: accepts one association on ADDR:PORT and
# writes what it receives to OUTFILE (pid in SINK_PID, for sink_wait).
# Bound to one address, so that its INIT-ACK lists no other one.
sctp_sink() {
  local listen="SCTP4-LISTEN:$3,bind=$2,reuseaddr"
  case $2 in *:*) listen="SCTP6-LISTEN:$3,bind=[$2],reuseaddr" ;; esac
  ip netns exec "$1" timeout 30 socat -u "$listen" "OPEN:$4,creat,trunc" </dev/null 2>/dev/null &
  SINK_PID=$!
  bg_track $SINK_PID
  wait_sctp "$1" "$3"
}

# sctp_to BIND ADDR PORT: socat's address of an association from BIND to ADDR:PORT.
sctp_to() {
  case $2 in
    *:*) echo "SCTP6:[$2]:$3,bind=[$1],connect-timeout=5" ;;
    *) echo "SCTP4:$2:$3,bind=$1,connect-timeout=5" ;;
  esac
}

# sctp_transfer CL CADDR RS RADDR VIP VPORT RPORT BYTES LABEL: check_transfer
# over SCTP: BYTES random bytes from CADDR in CL to VIP:VPORT must reach the
# sink on RADDR:RPORT in RS intact.
sctp_transfer() {
  local cl=$1 caddr=$2 rs=$3 raddr=$4 vip=$5 vport=$6 rport=$7 bytes=$8 label=$9 out
  head -c "$bytes" /dev/urandom >"$TEST_TMP/in" || fail "cannot write $TEST_TMP/in"
  rm -f "$TEST_TMP/out"
  sctp_sink "$rs" "$raddr" "$rport" "$TEST_TMP/out"
  out=$(timeout 10 ip netns exec "$cl" socat -u "OPEN:$TEST_TMP/in" "$(sctp_to "$caddr" "$vip" "$vport")" 2>&1) ||
    fail "$label: client could not send $bytes bytes to $vip:$vport: $out"
  sink_wait
  [ -f "$TEST_TMP/out" ] || fail "$label: nothing reached the real server"
  cmp -s "$TEST_TMP/in" "$TEST_TMP/out" ||
    fail "$label: data corrupted: sent $bytes bytes, received $(stat -c %s "$TEST_TMP/out")"
  log "$label: $bytes bytes over SCTP to $vip:$vport arrived intact on port $rport"
}

# sctp_serve NS ADDR PORT NAME: answers NAME to every association on ADDR:PORT.
sctp_serve() {
  ip netns exec "$1" python3 "$SCTP_PY" serve "$2" "$3" "$4" </dev/null >/dev/null 2>&1 &
  bg_track $!
  wait_sctp "$1" "$3"
}

# expect_sctp_balance NS BIND ADDR PORT N "EXPECTED" LABEL: N associations
# from BIND to ADDR:PORT must be answered exactly as EXPECTED ("rs1:3 ...").
expect_sctp_balance() {
  local got
  got=$(timeout $(($5 * 6 + 20)) ip netns exec "$1" python3 "$SCTP_PY" names "$2" "$3" "$4" "$5" | count_names)
  log "$7: $5 SCTP associations to $3:$4 -> $got"
  assert_eq "$got" "$6" "$7"
}

# sctp_conns VPORT: "STATE SOURCE DESTINATION" of each SCTP entry to
# VIP:VPORT in -L -n -c (pro expire state source virtual destination).
sctp_conns() { adm "$LB" -L -n -c | awk -v v="$VIP:$1" '$1 == "SCTP" && $5 == v {print $3, $4, $6}'; }
# dest_counts RIP:PORT: "ACTIVE:INACTIVE" of that real server in -L -n.
dest_counts() { adm "$LB" -L -n | awk -v d="$1" '$1 == "->" && $2 == d {print $5 ":" $6; exit}'; }
# conns_of ID: the Conns column of SCTP service ID in -L -n --stats.
conns_of() { adm "$LB" -L -n --stats | awk -v id="$1" '$1 == "SCTP" && $2 == id {print $3; exit}'; }

# --- NAT ---------------------------------------------------------------------
topo_nat sctp 2
no_offload "$CL" c0
no_offload "$LB" d0 lbr1 lbr2
for i in 1 2; do no_offload "${RS[$i]}" r0; done

# The receivers check each CRC: from the director, which sends them every
# packet they get, an INIT with a good CRC to a port nobody listens on is
# answered with an ABORT, the same INIT with one CRC bit flipped is dropped
# and counted.
crc_checked() {
  local ns=$1 addr=$2 got
  assert_eq "$(sctp_errs "$ns")" 0 "SctpChecksumErrors of ${ns#$NS_PREFIX-} at the start"
  got=$(timeout 20 ip netns exec "$LB" python3 "$SCTP_PY" probe "$addr" 9 good)
  assert_eq "$got" ABORT "${ns#$NS_PREFIX-}'s answer to an INIT with a good CRC"
  got=$(timeout 20 ip netns exec "$LB" python3 "$SCTP_PY" probe "$addr" 9 bad)
  assert_eq "$got" none "${ns#$NS_PREFIX-}'s answer to an INIT with a bad CRC"
  assert_eq "$(sctp_errs "$ns")" 1 "SctpChecksumErrors of ${ns#$NS_PREFIX-} after one bad CRC"
  log "${ns#$NS_PREFIX-} ($addr) checks SCTP CRCs: good CRC answered (ABORT), bad CRC dropped and counted"
}
crc_checked "${RS[1]}" ${RIP[1]}
crc_checked "$CL" $CIP
# crc_errs: SctpChecksumErrors of the client, rs1 and rs2.
crc_errs() { echo "$(sctp_errs "$CL") $(sctp_errs "${RS[1]}") $(sctp_errs "${RS[2]}")"; }
# Everything the client and the real servers receive (and send) from now
# to the end of the IPv6 part.
capture "$CL" c0 "$TEST_TMP/cl.pcap" sctp
for i in 1 2; do capture "${RS[$i]}" r0 "$TEST_TMP/rs$i.pcap" sctp; done

# Same port on both sides.
adm_ok "$LB" -A --sctp-service $VIP:8080 -s rr
adm_ok "$LB" -a --sctp-service $VIP:8080 -r ${RIP[1]}:8080 -m -w 1
sctp_transfer "$CL" $CIP "${RS[1]}" ${RIP[1]} $VIP 8080 8080 32 "SCTP NAT 8080->8080"
sctp_transfer "$CL" $CIP "${RS[1]}" ${RIP[1]} $VIP 8080 8080 102400 "SCTP NAT 8080->8080"

# Port mapping: the service listens on 80, the real server on 8080 (the
# director rewrites the port, and so must rewrite the CRC).
adm_ok "$LB" -A --sctp-service $VIP:80 -s rr
adm_ok "$LB" -a --sctp-service $VIP:80 -r ${RIP[1]}:8080 -m -w 1
sctp_transfer "$CL" $CIP "${RS[1]}" ${RIP[1]} $VIP 80 8080 32 "SCTP NAT 80->8080"
sctp_transfer "$CL" $CIP "${RS[1]}" ${RIP[1]} $VIP 80 8080 102400 "SCTP NAT 80->8080"

# Request and answer: the real server's answers reach the client from VIP:80.
sctp_serve "${RS[1]}" ${RIP[1]} 8080 rs1
expect_sctp_balance "$CL" $CIP $VIP 80 3 "rs1:3" "SCTP NAT replies through the director"
conns=$(adm "$LB" -L -n -c) || fail "$ADM -L -n -c failed"
printf '%s\n' "$conns" | sed 's/^/#   /' >&2
n=$(sctp_conns 80 | grep -c "^[A-Z-]* $CIP:[0-9]* ${RIP[1]}:8080\$")
[ "$n" -ge 1 ] || fail "no SCTP entry $CIP -> $VIP:80 -> ${RIP[1]}:8080 in the listing"
assert_eq "$(sctp_conns 80 | wc -l)" "$n" "SCTP entries to $VIP:80 of that form"
n=$(settled 5 conns_of $VIP:80)
assert_eq "$n" 5 "associations the SCTP service $VIP:80 counted"

# --- rr over two real servers --------------------------------------------------
for i in 1 2; do sctp_serve "${RS[$i]}" ${RIP[$i]} 8081 rs$i; done
adm_ok "$LB" -A --sctp-service $VIP:81 -s rr
for i in 1 2; do adm_ok "$LB" -a --sctp-service $VIP:81 -r ${RIP[$i]}:8081 -m -w 1; done
expect_sctp_balance "$CL" $CIP $VIP 81 6 "rs1:3 rs2:3" "SCTP rr"
assert_eq "$(crc_errs)" "1 1 0" "SctpChecksumErrors of the client, rs1, rs2 after the NAT traffic"

# --- An association held open, then shut down --------------------------------
adm_ok "$LB" -A --sctp-service $VIP:82 -s rr
adm_ok "$LB" -a --sctp-service $VIP:82 -r ${RIP[1]}:8082 -m -w 1
assert_eq "$(dest_counts ${RIP[1]}:8082)" "0:0" "ActiveConn:InActConn of ${RIP[1]}:8082 before"
sctp_sink "${RS[1]}" ${RIP[1]} 8082 "$TEST_TMP/held"
# The client sends what it reads from a FIFO the test holds open (fd 7,
# not inherited by the client) and shuts the association down when the
# test closes it.
# held_state STATE: the entries to VIP:82 ("STATE CIP:PORT RIP:PORT"),
# once the first is in STATE or after 10 s.
held_state() {
  local got
  for _ in $(seq 1 50); do
    got=$(sctp_conns 82)
    [ "${got%% *}" = "$1" ] && break
    sleep 0.2
  done
  printf '%s\n' "$got"
}
mkfifo "$TEST_TMP/hold" || fail "mkfifo"
exec 7<>"$TEST_TMP/hold"
ip netns exec "$CL" timeout 60 socat -u "OPEN:$TEST_TMP/hold" "$(sctp_to $CIP $VIP 82)" 2>"$TEST_TMP/hold.err" 7>&- &
hold_pid=$!
bg_track $hold_pid
echo held >&7
got=$(held_state ESTABLISHED)
log "held: $(adm "$LB" -L -n -c | grep " $VIP:82 "); ActiveConn:InActConn $(dest_counts ${RIP[1]}:8082)"
assert_eq "$(printf '%s\n' "$got" | wc -l)" 1 "SCTP entries to $VIP:82 while held"
case "$got" in
  "ESTABLISHED $CIP:"[0-9]*" ${RIP[1]}:8082") ;;
  *) fail "held association listed as '$got', not 'ESTABLISHED $CIP:PORT ${RIP[1]}:8082'" ;;
esac
held=${got#ESTABLISHED }
assert_eq "$(dest_counts ${RIP[1]}:8082)" "1:0" "ActiveConn:InActConn of ${RIP[1]}:8082 with the association held"

exec 7>&-
wait $hold_pid || fail "the held client failed: $(cat "$TEST_TMP/hold.err")"
sink_wait
assert_eq "$(cat "$TEST_TMP/held")" held "what the held association carried"
got=$(held_state CLOSED)
log "shut down: $(adm "$LB" -L -n -c | grep " $VIP:82 "); ActiveConn:InActConn $(dest_counts ${RIP[1]}:8082)"
assert_eq "$got" "CLOSED $held" "the association's entry once shut down"
assert_eq "$(dest_counts ${RIP[1]}:8082)" "0:1" "ActiveConn:InActConn of ${RIP[1]}:8082 once shut down"

# --- IPv6 NAT with port mapping ------------------------------------------------
# (wait_sctp knows ports, not addresses: rs1's server still listens on 8080.)
topo_nat_ipv6
adm_ok "$LB" -A --sctp-service "[$VIP6]:80" -s rr
adm_ok "$LB" -a --sctp-service "[$VIP6]:80" -r "[2001:db8:1::1]:8086" -m -w 1
sctp_transfer "$CL" 2001:db8::2 "${RS[1]}" 2001:db8:1::1 $VIP6 80 8086 102400 "SCTP IPv6 NAT 80->8086"
n=$(adm "$LB" -L -n -c | grep -c "^SCTP .* \[2001:db8::2\]:[0-9]* *\[$VIP6\]:80 *\[2001:db8:1::1\]:8086\$")
assert_eq "$n" 1 "IPv6 SCTP entries in the listing"
assert_eq "$(crc_errs)" "1 1 0" "SctpChecksumErrors of the client, rs1, rs2 after the IPv6 traffic"
capture_end
# (Three 100 KB transfers in ~1400-byte chunks to rs1 and its answers; three
# associations to rs2.)
crcs_right "$TEST_TMP/cl.pcap" 200 "CRCs on the client's link"
crcs_right "$TEST_TMP/rs1.pcap" 200 "CRCs on rs1's link"
crcs_right "$TEST_TMP/rs2.pcap" 12 "CRCs on rs2's link"

# --- DR ----------------------------------------------------------------------
topo_direct sdr
direct_rs
rs=${RS[1]}
no_offload "$SW" swc swl sws
no_offload "$CL" c0
no_offload "$LB" d0 d1
no_offload "$rs" f0 r0
adm_ok "$LB" -A --sctp-service $VIP:8080 -s rr
adm_ok "$LB" -a --sctp-service $VIP:8080 -r ${RIP[1]}:8080 -g -w 1
capture "$rs" r0 "$TEST_TMP/dr.pcap" sctp
# The real server's sink is bound to the VIP: it answers from it.
sctp_transfer "$CL" $CIP "$rs" $VIP $VIP 8080 8080 32 "SCTP DR"
# Replies bypass the director: during a transfer the real server sends its
# SACKs on f0 (towards the client), the director nothing on d0.
txp() { ip netns exec "$1" cat "/sys/class/net/$2/statistics/tx_packets"; }
lb0=$(txp "$LB" d0) rs0=$(txp "$rs" f0)
sctp_transfer "$CL" $CIP "$rs" $VIP $VIP 8080 8080 102400 "SCTP DR"
lb_tx=$(( $(txp "$LB" d0) - lb0 )) rs_tx=$(( $(txp "$rs" f0) - rs0 ))
log "packets sent towards the client: director d0 $lb_tx, real server f0 $rs_tx"
[ "$rs_tx" -ge 10 ] || fail "the real server sent only $rs_tx packets on its direct link"
[ "$lb_tx" -le 3 ] || fail "the director sent $lb_tx packets towards the client: replies not direct"
assert_eq "$(sctp_errs "$CL") $(sctp_errs "$rs")" "0 0" "SctpChecksumErrors of the DR client and real server"
capture_end
crcs_right "$TEST_TMP/dr.pcap" 50 "CRCs of what the DR director forwarded"
pass "SCTP NAT (same port, port mapping, IPv6), rr and DR carry real associations intact with checked CRCs; held association listed ESTABLISHED then CLOSED"
