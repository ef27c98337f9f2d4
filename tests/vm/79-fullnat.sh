#!/bin/bash
# FullNAT (--fullnat, rvs's addition; IPVS has no such method): the
# director rewrites both ends of a connection, the client's address and
# port to one of the service's local addresses (--laddr) and a port of its
# own, so a real server answers the director whatever its routes. Here the
# real server sits behind a router that has no route to the client at all:
#
#   client "fn-cl"       director "fn-lb"                 router "fn-rt"        real server "fn-rs1"
#   c0 10.0.0.2, .3/24 - d0 10.0.0.1/24
#      2001:db8::2/64       2001:db8::1/64
#   default via the      lo: VIP 10.0.100.1, 2001:db8:100::1
#   director             d1 10.0.2.1-4/24 --------------- x0 10.0.2.254/24
#                           fd00:2::1, ::2/64                fd00:2::fe/64
#                        10.0.3.0/24, fd00:3::/64         x1 10.0.3.254/24 ----- r0 10.0.3.1/24
#                          via the router                    fd00:3::fe/64          fd00:3::1/64
#                        forwarding off                   no route to the       default via the
#                                                         client's networks     router
#
#  - the topology holds: the real server reaches the local addresses, not
#    the client (ping, IPv4 and IPv6);
#  - IPv4 and IPv6 TCP services (port mapping 80 -> 8080): curl gets a
#    page and a 100 KB file intact, a 100 KB upload arrives intact, the
#    real server's web server logs only local addresses as its clients;
#  - captures (tcpdump -w, read by fullnat.py segments) on the real
#    server and on the client of one connection from a known client port:
#    no packet at the real server carries the client's address, the source
#    is a local address, the handshake's ACK and the first data segment
#    carry the client's address option, byte for byte: kind 254, length 8
#    (IPv6 20), port, address; and the MSS of the server's SYN-ACK reaches
#    the client lowered by that length (room for the option in the
#    client's segments; the man page's FULLNAT section);
#  - the listing: "FullNat" forward, "  local addresses: ..." under the
#    service, " local LADDR:LPORT" on connection lines and laddr/lport in
#    --json, matching the port the real server saw;
#  - two clients with the same source port through one local address get
#    two distinct local ports, each the one the real server sees;
#  - a range of two ports (fullnat_port_min/max) holds two connections; a
#    third is dropped, counted (--json "fullnat_no_port") and logged;
#    widening the range by one lets the next take exactly that port;
#  - UDP, IPv4 and IPv6: the answer comes back, and the real server saw
#    the local address (and the port the listing shows);
#  - --flush-conns of held FullNAT connections: exact resets at both ends
#    (the client's sockets and the real server's application see them,
#    from the local address; no challenge ACK on either side);
#  - a 1280-byte link between router and real server: the router's
#    "too big" errors about the director's segments set the director's
#    path MTU toward the real server, and a 100 KB upload still arrives
#    (IPv4 and IPv6);
#  - a persistent FullNAT service keeps a client's connections on one of
#    two real servers, each from its own local port, its template listed;
#  - an ICMP port unreachable from the real server (UDP, no listener)
#    reaches the client as an error about its own datagram: its socket
#    sees ECONNREFUSED (IPv4 and IPv6);
#  - a local address that is not the director's is accepted with a
#    warning, the director's own without one;
#  - -S shows --laddr and --fullnat, and -S | -C | -R | -S gives the
#    same text and working services.
. "$(dirname "$0")/../lib.sh"
rvs_only
adm_init rr
mk_test_tmp
T=$TEST_TMP
FN_PY=$RVS_ROOT/tests/py/fullnat.py
for tool in curl tcpdump; do
  command -v $tool >/dev/null || fail "$tool not installed (qemu/install-deps installs it)"
done

# --- topology ---------------------------------------------------------------------
newns CL fn-cl; newns LB fn-lb; newns RT fn-rt; newns RS fn-rs1
VIP=10.0.100.1 VIP6=2001:db8:100::1
CIP=10.0.0.2 CIP2=10.0.0.3 CIP6=2001:db8::2
RIP=10.0.3.1 RIP6=fd00:3::1
nsip "$LB" <<IP
link add d0 type veth peer name c0 netns $CL
link set d0 up
addr add 10.0.0.1/24 dev d0
addr add 2001:db8::1/64 dev d0 nodad
addr add $VIP/32 dev lo
addr add $VIP6/128 dev lo
link add d1 type veth peer name x0 netns $RT
link set d1 up
addr add 10.0.2.1/24 dev d1
addr add 10.0.2.2/24 dev d1
addr add 10.0.2.3/24 dev d1
addr add 10.0.2.4/24 dev d1
addr add fd00:2::1/64 dev d1 nodad
addr add fd00:2::2/64 dev d1 nodad
IP
nsip "$RT" <<IP
link set x0 up
addr add 10.0.2.254/24 dev x0
addr add fd00:2::fe/64 dev x0 nodad
link add x1 type veth peer name r0 netns $RS
link set x1 up
addr add 10.0.3.254/24 dev x1
addr add fd00:3::fe/64 dev x1 nodad
IP
nsip "$RS" <<IP
link set r0 up
addr add $RIP/24 dev r0
addr add $RIP6/64 dev r0 nodad
route add default via 10.0.3.254
route add default via fd00:3::fe
IP
nsip "$CL" <<IP
link set c0 up
addr add $CIP/24 dev c0
addr add $CIP2/24 dev c0
addr add $CIP6/64 dev c0 nodad
route add default via 10.0.0.1
route add default via 2001:db8::1
IP
nsip "$LB" <<IP
route add 10.0.3.0/24 via 10.0.2.254
route add fd00:3::/64 via fd00:2::fe
IP
# The director forwards nothing itself: FullNAT's packets are its own.
nsysctl "$LB" net.ipv4.ip_forward=0 net.ipv6.conf.all.forwarding=0
nsysctl "$RT" net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1

# The real server reaches the local addresses, never the client.
for a in 10.0.2.1 fd00:2::1; do
  ip netns exec "$RS" ping -c 1 -W 3 $a >/dev/null || fail "the real server cannot reach the local address $a"
done
for a in $CIP $CIP6; do
  ip netns exec "$RS" ping -c 1 -W 2 "$a" >/dev/null 2>&1 && fail "the real server reaches the client $a: the topology proves nothing"
done
log "the real server reaches 10.0.2.1 and fd00:2::1, not the client ($CIP, $CIP6)"

# --- servers --------------------------------------------------------------------------
# A web server (both families) with a page and a 100 KB file, logging its
# clients; fullnat.py serve answers each client with the address and port
# it sees (TCP and UDP); a held-connection server for the flush.
mkdir -p "$T/www"
echo "fullnat page" >"$T/www/index.txt"
head -c 102400 /dev/urandom >"$T/www/big.bin"
ip netns exec "$RS" python3 -m http.server 8080 --bind :: --directory "$T/www" \
  </dev/null >/dev/null 2>"$T/http.log" &
bg_track $!
ip netns exec "$RS" python3 "$FN_PY" serve 7000 </dev/null >/dev/null 2>&1 &
bg_track $!
probe_serve "$RS" 8085 fnrs
wait_listen "$RS" tcp 8080; wait_listen "$RS" tcp 7000; wait_listen "$RS" udp 7000

# --- services ---------------------------------------------------------------------------
adm_ok "$LB" -A -t $VIP:80 -s rr --laddr 10.0.2.1 --laddr 10.0.2.2
adm_ok "$LB" -a -t $VIP:80 -r $RIP:8080 --fullnat -w 1
adm_ok "$LB" -A -t $VIP:90 -s rr --laddr 10.0.2.1
adm_ok "$LB" -a -t $VIP:90 -r $RIP:9000 --fullnat -w 1
adm_ok "$LB" -A -t $VIP:81 -s rr --laddr 10.0.2.3
adm_ok "$LB" -a -t $VIP:81 -r $RIP:7000 --fullnat -w 1
adm_ok "$LB" -A -t $VIP:82 -s rr --laddr 10.0.2.4
adm_ok "$LB" -a -t $VIP:82 -r $RIP:7000 --fullnat -w 1
adm_ok "$LB" -A -t $VIP:85 -s rr --laddr 10.0.2.1
adm_ok "$LB" -a -t $VIP:85 -r $RIP:8085 --fullnat -w 1
adm_ok "$LB" -A -u $VIP:53 -s rr --laddr 10.0.2.1
adm_ok "$LB" -a -u $VIP:53 -r $RIP:7000 --fullnat -w 1
adm_ok "$LB" -A -t "[$VIP6]:80" -s rr --laddr fd00:2::1
adm_ok "$LB" -a -t "[$VIP6]:80" -r "[$RIP6]:8080" --fullnat -w 1
adm_ok "$LB" -A -t "[$VIP6]:90" -s rr --laddr fd00:2::1
adm_ok "$LB" -a -t "[$VIP6]:90" -r "[$RIP6]:9000" --fullnat -w 1
adm_ok "$LB" -A -u "[$VIP6]:53" -s rr --laddr fd00:2::1
adm_ok "$LB" -a -u "[$VIP6]:53" -r "[$RIP6]:7000" --fullnat -w 1

# The listing: the local addresses under their service, FullNat servers.
list=$(adm "$LB" -L -n) || fail "-L -n failed"
printf '%s\n' "$list" | sed 's/^/#   /' >&2
# after RE: the line after the first line matching RE in $list.
after() { printf '%s\n' "$list" | awk -v re="$1" 'f {print; exit} $0 ~ re {f = 1}'; }
assert_eq "$(after '^TCP +10\.0\.100\.1:80 ')" "  local addresses: 10.0.2.1, 10.0.2.2" "-L line after the service VIP:80"
assert_eq "$(after '^UDP +10\.0\.100\.1:53 ')" "  local addresses: 10.0.2.1" "-L line after the service UDP VIP:53"
assert_eq "$(after '^TCP +\[2001:db8:100::1\]:80 ')" "  local addresses: fd00:2::1" "-L line after the service [VIP6]:80"
printf '%s\n' "$list" | grep -E -q '^  -> 10\.0\.3\.1:8080 +FullNat +1 ' || fail "-L: no FullNat line for 10.0.3.1:8080"
printf '%s\n' "$list" | grep -E -q '^  -> \[fd00:3::1\]:8080 +FullNat +1 ' || fail "-L: no FullNat line for [fd00:3::1]:8080"

# --- helpers -------------------------------------------------------------------------------
# (hostport, get, conn_local, conn_json, check_listed, segments, toa_hex
# and has_opt: tests/lib.sh)
# ask PROTO ADDR PORT [SRC SRCPORT]: fullnat.py ask from the client.
ask() { ip netns exec "$CL" timeout 20 python3 "$FN_PY" ask "$@"; }
# hold TAG ADDR PORT SRC:PORT...: holds one connection per source in the
# background; the answers (what the real server saw) in $T/TAG.out.
hold() {
  local tag=$1 addr=$2 port=$3 _; shift 3
  rm -f "$T/$tag.go"
  ip netns exec "$CL" timeout 150 python3 "$FN_PY" hold "$addr" "$port" "$T/$tag.go" "$@" \
    >"$T/$tag.out" 2>"$T/$tag.err" </dev/null &
  bg_track $!
  for _ in $(seq 1 200); do
    grep -qx held "$T/$tag.out" 2>/dev/null && return 0
    sleep 0.1
  done
  fail "$tag: connections not held: $(cat "$T/$tag.out" "$T/$tag.err" 2>/dev/null | tr '\n' ' ')"
}
answers() { grep -v -x held "$T/$1.out"; }
release() { touch "$T/$1.go"; }
# no_port: the namespace's count of connections dropped for want of a port.
no_port() { adm "$LB" -L -n --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["fullnat_no_port"])'; }

# mss_of SEGMENT: the value of the segment line's MSS option (none: "none").
mss_of() {
  local o
  o=$(printf '%s\n' "$1" | awk '{n = split($7, a, ","); for (i = 1; i <= n; i++) if (a[i] ~ /^0204....$/) print substr(a[i], 5)}')
  if [ -n "$o" ]; then echo $((16#$o)); else echo none; fi
}

# check_capture RSCAP CLCAP CLIENT CPORT VIP LABEL LADDR...: one
# connection of the client CLIENT:CPORT to VIP:80, captured on the real
# server (RSCAP, port 8080) and on the client (CLCAP): no packet at the real
# server carries the client's address; the connection comes from one of
# the LADDRs; its handshake's ACK and first data segment carry the
# client's address option; the MSS of the server's SYN-ACK reaches the
# client lowered by the option's length. Sets CAP_LADDR and CAP_LPORT (the
# local address and port the real server saw).
check_capture() {
  local rscap=$1 clcap=$2 caddr=$3 cport=$4 vip=$5 label=$6 segs clsegs toward syn rest ack data toa l ok
  local sa clsa rs_mss cl_mss
  shift 6
  segs=$(segments "$rscap" "$label, at the real server")
  clsegs=$(segments "$clcap" "$label, at the client")
  [ "$(printf '%s\n' "$segs" | awk -v c="$caddr" '$1 == c || $3 == c' | grep -c .)" = 0 ] ||
    fail "$label: the client's address $caddr reached the real server"
  toward=$(printf '%s\n' "$segs" | awk '$4 == 8080')
  syn=$(printf '%s\n' "$toward" | awk '$5 == "S"' | head -1)
  [ -n "$syn" ] || fail "$label: no SYN reached the real server"
  read -r CAP_LADDR CAP_LPORT _ <<<"$syn"
  ok=0
  for l in "$@"; do [ "$CAP_LADDR" = "$l" ] && ok=1; done
  [ $ok = 1 ] || fail "$label: the SYN came from $CAP_LADDR, not from a local address ($*)"
  [ "$(printf '%s\n' "$toward" | awk '{print $1}' | sort -u)" = "$CAP_LADDR" ] ||
    fail "$label: segments to the server from other sources: $(printf '%s\n' "$toward" | awk '{print $1}' | sort -u | tr '\n' ' ')"
  # The option, byte for byte, on the client's first segments after its SYN.
  rest=$(printf '%s\n' "$toward" | awk -v a="$CAP_LADDR" -v p="$CAP_LPORT" '$1 == a && $2 == p && $5 !~ /S/')
  ack=$(printf '%s\n' "$rest" | head -1)
  data=$(printf '%s\n' "$rest" | awk '$6 > 0' | head -1)
  toa=$(toa_hex "$caddr" "$cport")
  [ "$(printf '%s\n' "$ack" | awk '{print $5, $6}')" = "A 0" ] ||
    fail "$label: the segment after the SYN is not the handshake's ACK: $ack"
  has_opt "$ack" "$toa" || fail "$label: the handshake's ACK lacks the option $toa: $ack"
  [ -n "$data" ] || fail "$label: no data segment reached the real server"
  has_opt "$data" "$toa" || fail "$label: the first data segment lacks the option $toa: $data"
  # Room for it: the client learns an MSS smaller by the option's length.
  sa=$(printf '%s\n' "$segs" | awk -v a="$CAP_LADDR" -v p="$CAP_LPORT" '$2 == 8080 && $3 == a && $4 == p && $5 == "SA"' | head -1)
  clsa=$(printf '%s\n' "$clsegs" | awk -v v="$vip" -v c="$caddr" -v p="$cport" '$1 == v && $2 == 80 && $3 == c && $4 == p && $5 == "SA"' | head -1)
  rs_mss=$(mss_of "$sa") cl_mss=$(mss_of "$clsa")
  log "$label: SYN's MSS $(mss_of "$(printf '%s\n' "$clsegs" | awk '$5 == "S"' | head -1)") at the client, $(mss_of "$syn") at the server; SYN-ACK's $rs_mss at the server, $cl_mss at the client"
  [ "$rs_mss" != none ] || fail "$label: no SYN-ACK with an MSS at the real server: $sa"
  assert_eq "$cl_mss" $((rs_mss - ${#toa} / 2)) "$label: the SYN-ACK's MSS the client sees (the server's $rs_mss less the option's length)"
  log "$label: from $CAP_LADDR:$CAP_LPORT, option $toa on the handshake's ACK and the first data segment"
}

# --- TCP, IPv4 and IPv6 ------------------------------------------------------------------------
for fam in 4 6; do
  if [ $fam = 4 ]; then
    vip=$VIP caddr=$CIP cport=41000 laddrs="10.0.2.1 10.0.2.2" udp_laddr=10.0.2.1
  else
    vip=$VIP6 caddr=$CIP6 cport=41001 laddrs="fd00:2::1" udp_laddr=fd00:2::1
  fi
  url="http://$(hostport $vip 80)"
  get "$url/index.txt" "$T/page"
  assert_eq "$(cat "$T/page")" "fullnat page" "IPv$fam: curl $url/index.txt"
  rm -f "$T/big.got"
  get "$url/big.bin" "$T/big.got"
  cmp -s "$T/www/big.bin" "$T/big.got" ||
    fail "IPv$fam: the 100 KB file arrived corrupted ($(stat -c %s "$T/big.got" 2>/dev/null) bytes)"
  log "IPv$fam: curl got the page and the 100 KB file intact"
  check_transfer "$CL" "$RS" $vip 90 9000 102400 "IPv$fam FullNAT upload"

  # One connection from a known port, captured at both ends.
  capture "$RS" r0 "$T/rs$fam.pcap" tcp port 8080
  capture "$CL" c0 "$T/cl$fam.pcap" tcp port 80
  get "$url/index.txt" "$T/page" --local-port $cport
  capture_end
  assert_eq "$(cat "$T/page")" "fullnat page" "IPv$fam: curl from port $cport"
  # shellcheck disable=SC2086 # laddrs: a list
  check_capture "$T/rs$fam.pcap" "$T/cl$fam.pcap" $caddr $cport $vip "IPv$fam capture" $laddrs
  check_listed "$(hostport $caddr $cport)" "$CAP_LADDR" "$CAP_LPORT" "IPv$fam"
  log "IPv$fam: the listing shows the connection of $(hostport $caddr $cport) from $(hostport "$CAP_LADDR" "$CAP_LPORT")"

  # UDP: the answer comes back; the real server saw the local address.
  got=$(ask udp $vip 53 $caddr 5300$fam)
  log "IPv$fam UDP from port 5300$fam: the real server saw '$got'"
  read -r a p <<<"$got"
  case $p in [0-9]*) ;; *) fail "IPv$fam UDP through FullNAT: no answer ($got)" ;; esac
  assert_eq "$a" $udp_laddr "IPv$fam UDP: source the real server saw"
  check_listed "$(hostport $caddr 5300$fam)" "$a" "$p" "IPv$fam UDP"
done
# The web server's clients were local addresses only.
seen=$(awk '$2 == "-" && $3 == "-" {sub(/^::ffff:/, "", $1); print $1}' "$T/http.log" | sort -u | tr '\n' ' ')
log "the web server's clients: $seen"
case " $seen" in *" 10.0.2."[12]" "*) ;; *) fail "the web server saw no IPv4 local address: $seen" ;; esac
case " $seen" in *" fd00:2::1 "*) ;; *) fail "the web server saw no IPv6 local address: $seen" ;; esac
for a in $seen; do
  case $a in 10.0.2.[12] | fd00:2::1) ;; *) fail "the web server saw the client $a" ;; esac
done

# --- two clients with the same port, one local address ---------------------------------------------
hold two $VIP 81 $CIP:45000 $CIP2:45000
log "two clients from port 45000 through 10.0.2.3: the real server saw $(answers two | tr '\n' ' ')"
read -r a1 p1 <<<"$(answers two | sed -n 1p)"
read -r a2 p2 <<<"$(answers two | sed -n 2p)"
assert_eq "$a1 $a2" "10.0.2.3 10.0.2.3" "local addresses of the two clients"
[ "$p1" != "$p2" ] || fail "two clients through 10.0.2.3 got the same local port $p1"
for p in $p1 $p2; do
  if [ "$p" -lt 1024 ] || [ "$p" -gt 65535 ]; then fail "local port $p outside the default range 1024..65535"; fi
done
check_listed "$CIP:45000" 10.0.2.3 "$p1" "first client"
check_listed "$CIP2:45000" 10.0.2.3 "$p2" "second client"
release two

# --- a port range of two ---------------------------------------------------------------------------
assert_eq "$(no_port)" 0 "fullnat_no_port before any exhaustion"
adm_ok "$LB" --set-option fullnat_port_min=50000
adm_ok "$LB" --set-option fullnat_port_max=50001
hold range $VIP 82 $CIP:0 $CIP:0
assert_eq "$(answers range | sort | tr '\n' ' ')" "10.0.2.4 50000 10.0.2.4 50001 " "two connections in the range 50000..50001"
mark=$(kmsg_mark)
got=$(ask tcp $VIP 82)
assert_eq "$got" "ERR:timeout" "a third connection with no port free"
n=$(no_port)
log "no port free: the third connection got $got; fullnat_no_port $n"
[ "$n" -ge 1 ] || fail "fullnat_no_port: expected at least 1 after a dropped connection, got $n"
msg=$(dmesg_since "$mark" | grep -E "FullNAT: no free local port in 50000\.\.50001" | head -3)
log "kernel log: $msg"
[ -n "$msg" ] || fail "no kernel log line about the exhausted ports"
adm_ok "$LB" --set-option fullnat_port_max=50002
assert_eq "$(ask tcp $VIP 82)" "10.0.2.4 50002" "the port the range gained"
release range
adm_ok "$LB" --set-option fullnat_port_max=65535
adm_ok "$LB" --set-option fullnat_port_min=1024
sleep 1

# --- flush: resets at both ends ------------------------------------------------------------------------
flush() {
  local out
  out=$(adm "$LB" --flush-conns "$@" 2>&1) || fail "--flush-conns $*: $out"
  log "--flush-conns $*: $out"
  echo "$out" | sed -n 's/^flushed \([0-9]*\) connection.*/\1/p'
}
for ns in "$CL" "$RS"; do count_tcp "$ns"; done
probe_hold "$CL" $VIP 85 2 fl
assert_eq "$(grep -c -x fnrs "$T/fl.out")" 2 "two connections held"
for ns in "$CL" "$RS"; do reset_counts "$ns"; done
assert_eq "$(flush -t $VIP:85)" 2 "flushed count"
sleep 1
log "client: $(counts "$CL"); real server: $(counts "$RS")"
assert_eq "$(counts "$CL")" "rst_in=2 ack_out=0" "client: one exact reset per connection, no challenge ACK"
assert_eq "$(counts "$RS")" "rst_in=2 ack_out=0" "real server: one exact reset per connection, no challenge ACK"
assert_eq "$(log_resets fnrs)" 2 "the real server's application saw its two connections reset"
assert_eq "$(awk '$1 == "reset" {print $2}' "$T/fnrs.log" | sort -u)" 10.0.2.1 "peer of the reset connections at the real server"
assert_eq "$(probe_results fl | summary)" "fnrs:reset=2" "client's view after the flush"
assert_eq "$(adm "$LB" -L -n -c | grep -c " $VIP:85 ")" 0 "entries of VIP:85 left after the flush"

# --- a narrower link behind the router ---------------------------------------------------------------
# The router's link to the real server carries 1280 bytes. The router
# answers the director's larger segments (sent from a local address) with
# "fragmentation needed" / "packet too big"; the director records that
# path MTU toward the real server, as it would for a socket of its own,
# and answers the client's next too big segment itself (from the VIP,
# quoting the client's packet), so the client's path MTU follows. Without
# that the error reaches no socket and the upload stalls (a black hole).
ip -n "$RT" link set x1 mtu 1280 || fail "cannot set the router's link MTU"
for fam in 4 6; do
  if [ $fam = 4 ]; then vip=$VIP rs_addr=10.0.3.1; else vip=$VIP6 rs_addr=fd00:3::1; fi
  check_transfer "$CL" "$RS" $vip 90 9000 102400 "IPv$fam FullNAT upload through a 1280-byte link"
  route=$(ip -n "$LB" -$fam route get $rs_addr 2>&1)
  log "IPv$fam: the director's route to $rs_addr: $(printf '%s' "$route" | tr '\n' ' ')"
  case $route in *"mtu 1280"*) ;; *) fail "IPv$fam: the director's route to $rs_addr has no path MTU 1280: $route" ;; esac
done
ip -n "$RT" link set x1 mtu 1500 || fail "cannot restore the router's link MTU"

# --- persistence -----------------------------------------------------------------------------------------
# A persistent FullNAT service over two real servers (a second address of
# the real server's host): every connection of one client goes to the
# server its template names, each from a port of its own (rr alone would
# split them 2/2). The template is held by the connections' port entries;
# it is listed, and -C at the end of the test frees the lot.
ip -n "$RS" addr add 10.0.3.2/24 dev r0 || fail "cannot add 10.0.3.2 to the real server"
adm_ok "$LB" -A -t $VIP:86 -s rr -p 60 --laddr 10.0.2.1
adm_ok "$LB" -a -t $VIP:86 -r 10.0.3.1:8080 --fullnat -w 1
adm_ok "$LB" -a -t $VIP:86 -r 10.0.3.2:8080 --fullnat -w 1
for i in 1 2 3 4; do
  get "http://$VIP:86/index.txt" "$T/page"
  assert_eq "$(cat "$T/page")" "fullnat page" "persistent VIP:86, connection $i"
done
split=$(adm "$LB" -L -n --stats | awk '/^TCP +10\.0\.100\.1:86 /{f = 1; next} /^[A-Z]/{f = 0} f && $1 == "->" {print $2 "=" $3}' | sort | tr '\n' ' ')
log "persistent VIP:86: connections per real server: $split"
case $split in
  "10.0.3.1:8080=4 10.0.3.2:8080=0 " | "10.0.3.1:8080=0 10.0.3.2:8080=4 ") ;;
  *) fail "persistent VIP:86: the client's 4 connections were not kept on one real server: $split" ;;
esac
ports=$(adm "$LB" -L -n -c | grep -F " $VIP:86 " | sed -n 's/.* local 10\.0\.2\.1:\([0-9]*\)$/\1/p' | sort -u | wc -l)
assert_eq "$ports" 4 "persistent VIP:86: distinct local ports of the 4 connections"
adm "$LB" -L -n -c | grep -E -q "^TCP +[0-9:]+ +[A-Z_]+ +$CIP:0 +$VIP:86 " ||
  fail "persistent VIP:86: no template of $CIP listed: $(adm "$LB" -L -n -c | grep -F ":86 ")"

# --- an ICMP error from the real server reaches the client -------------------------------------------
# A UDP service whose real server port has no listener: the real server
# answers "port unreachable" to the local address; the director sends it
# on to the client as an error about the client's own datagram, so its
# socket sees ECONNREFUSED (without that, the client waits in vain).
adm_ok "$LB" -A -u $VIP:54 -s rr --laddr 10.0.2.1
adm_ok "$LB" -a -u $VIP:54 -r $RIP:7009 --fullnat -w 1
adm_ok "$LB" -A -u "[$VIP6]:54" -s rr --laddr fd00:2::1
adm_ok "$LB" -a -u "[$VIP6]:54" -r "[$RIP6]:7009" --fullnat -w 1
for vip in $VIP $VIP6; do
  got=$(ip netns exec "$CL" python3 -c '
import socket, sys
a = sys.argv[1]
s = socket.socket(socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
s.connect((a, 54))
for _ in range(2):
    s.send(b"anyone?")
    try:
        s.recv(100)
        print("answered")
        break
    except ConnectionRefusedError:
        print("refused")
        break
    except socket.timeout:
        pass
else:
    print("timeout")
' "$vip")
  assert_eq "$got" refused "UDP to $vip:54 (no listener behind it): the client's socket"
done
adm_ok "$LB" -D -u $VIP:54
adm_ok "$LB" -D -u "[$VIP6]:54"

# --- a local address that is not the director's ----------------------------------------------------------
# Accepted (an address managed by another daemon may come later), with a
# warning: replies to it would never reach the director.
out=$(adm "$LB" -A -t $VIP:99 -s rr --laddr 192.0.2.9 2>&1) || fail "-A with a foreign local address: $out"
case $out in
  *"local address 192.0.2.9 is not an address of this host"*) log "foreign local address: $out" ;;
  *) fail "no warning for the foreign local address 192.0.2.9: '$out'" ;;
esac
out=$(adm "$LB" -E -t $VIP:99 -s rr --laddr 10.0.2.1 2>&1) || fail "-E with the director's own address: $out"
assert_eq "$out" "" "-E --laddr with the director's own address (no warning)"
adm_ok "$LB" -D -t $VIP:99

# --- save and restore -------------------------------------------------------------------------------------
saved=$(adm "$LB" -S -n) || fail "-S -n failed"
printf '%s\n' "$saved" | sed 's/^/#   /' >&2
line=$(printf '%s\n' "$saved" | grep -E -- '^-A -t 10\.0\.100\.1:80 ')
case $line in *--laddr*10.0.2.1*10.0.2.2*) ;; *) fail "-S: the service VIP:80 without its local addresses: $line" ;; esac
line=$(printf '%s\n' "$saved" | grep -E -- '^-A -t \[2001:db8:100::1\]:80 ')
case $line in *--laddr*fd00:2::1*) ;; *) fail "-S: the service [VIP6]:80 without its local address: $line" ;; esac
printf '%s\n' "$saved" | grep -E -q -- '^-a -t 10\.0\.100\.1:80 -r 10\.0\.3\.1:8080 .*--fullnat' ||
  fail "-S: no --fullnat real server 10.0.3.1:8080"
printf '%s\n' "$saved" | grep -E -q -- '^-a -u \[2001:db8:100::1\]:53 -r \[fd00:3::1\]:7000 .*--fullnat' ||
  fail "-S: no --fullnat real server [fd00:3::1]:7000 (UDP)"
adm_ok "$LB" -C
assert_eq "$(adm "$LB" -S -n)" "" "-S after -C"
out=$(printf '%s\n' "$saved" | adm "$LB" -R 2>&1) || fail "-R of the saved rules: $out"
assert_eq "$(adm "$LB" -S -n)" "$saved" "-S after -C and -R"
for a in $VIP $VIP6; do
  get "http://$(hostport "$a" 80)/index.txt" "$T/page"
  assert_eq "$(cat "$T/page")" "fullnat page" "curl $a after the restore"
done
got=$(ask udp $VIP6 53)
case $got in "fd00:2::1 "[0-9]*) ;; *) fail "IPv6 UDP after the restore: $got" ;; esac
pass "FullNAT: v4/v6 TCP and UDP through local addresses to a server with no route to the client; client address option, ports, range, listing, flush, save/restore"
