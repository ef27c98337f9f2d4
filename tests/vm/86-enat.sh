#!/bin/bash
# shellcheck disable=SC2128,SC2178 # RS and RIP are scalars here (lib.sh's topo_* make them arrays)
# ENAT (--enat) and the real servers' companion rvs_rs.ko (rvs only: IPVS
# has neither). The real server sits behind a router that reaches the
# client's network by a way of its own, around the director:
#
#   client "en-cl"        client router "en-cr"             director "en-lb"
#   c0 10.0.0.2/24 ------ k0 10.0.0.254/24, fd00::fe/64
#      fd00::2/64         k1 10.0.1.254/24, fd00:1::fe ---- d0 10.0.1.1/24, fd00:1::1/64
#   default via cr        k2 10.0.4.1/24, fd00:4::1 ------+ lo: VIP 10.0.100.1, 2001:db8:100::1
#                         the VIP via the director,       | d1 10.0.2.1/24, fd00:2::1/64 -------+
#                         the servers' net via rt         |    (FullNAT's local addresses)      |
#                                                         | the client's LAN via cr, the        |
#                                                         | servers' net via rt; forwarding off |
#   real server "en-rs"   router "en-rt"                  |                                     |
#   r0 10.0.3.1/24 ------ x1 10.0.3.254/24, fd00:3::fe    |                                     |
#      fd00:3::1/64       x2 10.0.4.254/24, fd00:4::fe ---+                                     |
#   default via rt        x0 10.0.2.254/24, fd00:2::fe -----------------------------------------+
#   rvs_rs.ko, web        the client's LAN via cr (the
#   servers on 80 (ENAT)  bypass), not via the director
#   and 8080 (FullNAT,
#   81 -> 8080)
#
#  - the topology holds: the router's route to the client's LAN goes via
#    the client router; the real server pings the client (IPv4 and IPv6)
#    and the director sees none of it (capture on all its interfaces, which
#    do see the client's pings of the VIP);
#  - refusals: --enat on a UDP service and on a firewall-mark service
#    (the message names ENAT), --enat with another real server port; none
#    adds a server. net.rvs_rs.directors takes commas, duplicates and
#    non-canonical IPv6 and reads back canonical; a bad address
#    ("10.0.0.999", EINVAL, logged) or 17 addresses are refused and leave
#    the list unchanged; max_entries 0 is refused. /proc/net/rvs_rs has
#    the documented lines in their order;
#  - ENAT, IPv4 and IPv6: curl gets a page and a 100 KB file intact, a
#    100 KB upload arrives intact; the web server logs the client's own
#    address; at the real server the client's SYN comes from VIP:LPORT
#    with the option kind 253, length 8 (IPv6 20), client port and
#    address byte for byte (and no kind 254), and the SYN-ACK leaves from
#    VIP:80 straight to the client; -L -n -c and --json list the
#    connection with " local VIP:LPORT", LPORT the port the real server
#    saw; during the 100 KB download the director's link toward the router
#    carries only segments toward the real server and its link toward the
#    client only segments from the client; the services count packets in
#    and none out; /proc/net/rvs_rs enat grows by exactly the connections
#    made (6), enat_no_room stays 0;
#  - FullNAT with the companion trusting the local address, IPv4 and
#    IPv6: a 100 KB download intact, the web server logs the client; the
#    SYN at the real server carries the TOA option (kind 254) from the
#    local address, the SYN-ACK goes back to LADDR:LPORT, nothing to the
#    client; /proc/net/rvs_rs fullnat grows by 2;
#  - the director's packet counts for the same 100 KB download, FullNAT
#    and ENAT (IPv4 and IPv6), logged; ENAT's out is 0, FullNAT's is not;
#  - FullNAT with the companion off (directors empty): a 100 KB download
#    intact, the web server logs the local address, fullnat unchanged;
#  - SYNs with forged options (kinds 254 and 253, IPv4 and IPv6, claiming
#    192.0.2.7:1234 / [2001:db8:99::7]:1234) from the router, which is no
#    director: the real server answers the router's address and port, never
#    the claimed client; ss shows the half-open connections from the
#    router; untrusted grows by exactly 4, enat and fullnat not at all;
#  - a director's SYN without the option on the local address and port of
#    a held FullNAT connection ends that connection's entry (a new
#    connection there is not lent the old one's client);
#  - rmmod rvs_rs during an ENAT download succeeds and removes its files
#    (the runner then checks the kernel log for a splat).
. "$(dirname "$0")/../lib.sh"
rvs_only
adm_init rr
mk_test_tmp
T=$TEST_TMP
EN_PY=$RVS_ROOT/tests/py/enat.py
RS_KO=$RVS_ROOT/rvs_rs.ko
for tool in curl tcpdump socat ss nft; do
  command -v $tool >/dev/null || fail "$tool not installed (qemu/install-deps installs it)"
done

# --- the companion ---------------------------------------------------------------------
# Loaded here unless it is already; unloaded at exit only if loaded here.
if grep -q '^rvs_rs ' /proc/modules; then
  rs_preloaded=1
else
  rs_preloaded=0
  [ -f "$RS_KO" ] || fail "$RS_KO is missing (make module builds it beside rvs.ko)"
  insmod "$RS_KO" || fail "insmod $RS_KO failed"
  at_exit 'if grep -q "^rvs_rs " /proc/modules; then rmmod rvs_rs; fi'
  log "loaded $RS_KO"
fi

# --- topology --------------------------------------------------------------------------
newns CL en-cl; newns CR en-cr; newns LB en-lb; newns RT en-rt; newns RS en-rs
VIP=10.0.100.1 VIP6=2001:db8:100::1
CIP=10.0.0.2 CIP6=fd00::2
RIP=10.0.3.1 RIP6=fd00:3::1
LADDR=10.0.2.1 LADDR6=fd00:2::1
nsip "$CR" <<IP
link add k0 type veth peer name c0 netns $CL
link set k0 up
addr add 10.0.0.254/24 dev k0
addr add fd00::fe/64 dev k0 nodad
link add k1 type veth peer name d0 netns $LB
link set k1 up
addr add 10.0.1.254/24 dev k1
addr add fd00:1::fe/64 dev k1 nodad
link add k2 type veth peer name x2 netns $RT
link set k2 up
addr add 10.0.4.1/24 dev k2
addr add fd00:4::1/64 dev k2 nodad
route add $VIP/32 via 10.0.1.1
route add $VIP6/128 via fd00:1::1
route add 10.0.3.0/24 via 10.0.4.254
route add fd00:3::/64 via fd00:4::fe
IP
nsip "$LB" <<IP
link set d0 up
addr add 10.0.1.1/24 dev d0
addr add fd00:1::1/64 dev d0 nodad
addr add $VIP/32 dev lo
addr add $VIP6/128 dev lo
link add d1 type veth peer name x0 netns $RT
link set d1 up
addr add $LADDR/24 dev d1
addr add $LADDR6/64 dev d1 nodad
route add 10.0.0.0/24 via 10.0.1.254
route add fd00::/64 via fd00:1::fe
route add 10.0.3.0/24 via 10.0.2.254
route add fd00:3::/64 via fd00:2::fe
IP
nsip "$RT" <<IP
link set x0 up
addr add 10.0.2.254/24 dev x0
addr add fd00:2::fe/64 dev x0 nodad
link set x2 up
addr add 10.0.4.254/24 dev x2
addr add fd00:4::fe/64 dev x2 nodad
link add x1 type veth peer name r0 netns $RS
link set x1 up
addr add 10.0.3.254/24 dev x1
addr add fd00:3::fe/64 dev x1 nodad
route add 10.0.0.0/24 via 10.0.4.1
route add fd00::/64 via fd00:4::1
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
addr add $CIP6/64 dev c0 nodad
route add default via 10.0.0.254
route add default via fd00::fe
IP
# The director forwards nothing itself: ENAT's and FullNAT's packets are its own.
nsysctl "$LB" net.ipv4.ip_forward=0 net.ipv6.conf.all.forwarding=0
nsysctl "$CR" net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
nsysctl "$RT" net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
# No reverse-path filter on the two routers (IPv4 only: IPv6 has none).
# Packets from the VIP pass where no route leads back to it: ENAT's
# requests reach the router on x0 and the real server's answers (from the
# VIP) on x1, and it has no route to the VIP at all; those answers reach
# the client router on k2, while its route to the VIP is k1. A strict
# filter would drop all of them.
nsysctl "$CR" net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
  net.ipv4.conf.k0.rp_filter=0 net.ipv4.conf.k1.rp_filter=0 net.ipv4.conf.k2.rp_filter=0
nsysctl "$RT" net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
  net.ipv4.conf.x0.rp_filter=0 net.ipv4.conf.x1.rp_filter=0 net.ipv4.conf.x2.rp_filter=0

# The router reaches the client's LAN by the client router, not the director.
for a in $CIP $CIP6; do
  route=$(ip -n "$RT" route get "$a" 2>&1)
  via=$(printf '%s\n' "$route" | sed -n 's/.* via \([^ ]*\) dev \([^ ]*\).*/\1 \2/p' | head -1)
  case $a in *:*) want="fd00:4::1 x2" ;; *) want="10.0.4.1 x2" ;; esac
  assert_eq "$via" "$want" "the router's route to the client $a ($route)"
done
# The real server reaches the client, and not through the director: a
# capture on all the director's interfaces sees none of those pings, but
# does see the client's pings of the VIP (so it captures at all).
capture "$LB" any "$T/topo.pcap" icmp or icmp6
for a in $CIP $CIP6; do
  ip netns exec "$RS" ping -c 1 -W 5 "$a" >/dev/null || fail "the real server cannot ping the client $a"
done
for a in $VIP $VIP6; do
  ip netns exec "$CL" ping -c 1 -W 5 "$a" >/dev/null || fail "the client cannot ping the VIP $a"
done
capture_end
pkts=$(python3 "$EN_PY" packets "$T/topo.pcap") || fail "cannot read the capture $T/topo.pcap"
n_rs=$(printf '%s\n' "$pkts" | awk -v a=$RIP -v b=$RIP6 '$1 == a || $1 == b || $2 == a || $2 == b' | grep -c .)
n_vip4=$(printf '%s\n' "$pkts" | awk -v v=$VIP '$1 == v || $2 == v' | grep -c .)
n_vip6=$(printf '%s\n' "$pkts" | awk -v v=$VIP6 '$1 == v || $2 == v' | grep -c .)
log "the director captured $n_vip4 + $n_vip6 ICMP packets of the VIPs, $n_rs of the real server"
[ "$n_vip4" -gt 0 ] && [ "$n_vip6" -gt 0 ] || fail "the director's capture missed the client's pings of the VIP"
assert_eq "$n_rs" 0 "ICMP packets of the real server seen by the director while it pinged the client"
log "the real server reaches the client by the routers alone, around the director"

# --- servers -----------------------------------------------------------------------------
# Web servers (both families; IPv4 clients show as ::ffff:A.B.C.D in
# their logs) with a page and a 100 KB file: on 80 for ENAT (no port
# mapping), on 8080 for FullNAT; a server for the forged SYNs (a backlog of
# 128: they stay half-open).
mkdir -p "$T/www"
echo "enat page" >"$T/www/index.txt"
head -c 102400 /dev/urandom >"$T/www/big.bin"
# For the slow downloads: curl's rate limit is an average, and it may take
# a first burst of a small file whole.
head -c 1048576 /dev/urandom >"$T/www/huge.bin"
for port in 80 8080; do
  ip netns exec "$RS" python3 -m http.server $port --bind :: --directory "$T/www" \
    </dev/null >/dev/null 2>"$T/http$port.log" &
  bg_track $!
done
serve_name_bg "$RS" tcp 7000 rs
wait_listen "$RS" tcp 80; wait_listen "$RS" tcp 8080; wait_listen "$RS" tcp 7000
# last_client LOG: the client address of the web server's last request line.
last_client() { awk '$2 == "-" && $3 == "-" {a = $1} END {sub(/^::ffff:/, "", a); print a}' "$1"; }

# --- refusals ------------------------------------------------------------------------------
# refused WHAT WANT ARGS...: rvsadm ARGS on the director fails, its message containing WANT.
refused() {
  local what=$1 want=$2 out; shift 2
  out=$(adm "$LB" "$@" 2>&1) && fail "$what was accepted"
  case $out in *"$want"*) log "$what refused: $out" ;; *) fail "$what: the message does not say '$want': $out" ;; esac
}
adm_ok "$LB" -A -u $VIP:53 -s rr
refused "--enat on a UDP service" ENAT -a -u $VIP:53 -r $RIP:53 --enat
adm_ok "$LB" -A -f 7 -s rr
refused "--enat on a firewall-mark service" ENAT -a -f 7 -r $RIP --enat
adm_ok "$LB" -A -t $VIP:80 -s rr
refused "--enat with port mapping (80 -> 8080)" ENAT -a -t $VIP:80 -r $RIP:8080 --enat
assert_eq "$(adm "$LB" -L -n | grep -E -c '^  -> ([0-9]|\[)')" 0 "real servers listed after the refusals"
adm_ok "$LB" -D -u $VIP:53
adm_ok "$LB" -D -f 7

# counter NAME: the companion's counter NAME in the real server's namespace.
counter() { ip netns exec "$RS" awk -v n="$1" '$1 == n {print $2}' /proc/net/rvs_rs; }
# directors: the companion's trusted addresses in the real server's namespace.
directors() { ip netns exec "$RS" sysctl -n net.rvs_rs.directors; }
assert_eq "$(ip netns exec "$RS" awk '{print $1}' /proc/net/rvs_rs | tr '\n' ' ')" \
  "entries max_entries fullnat enat untrusted full " "/proc/net/rvs_rs lines"
assert_eq "$(directors)" "" "net.rvs_rs.directors at first"
# The ENAT VIPs and FullNAT's local addresses; commas, a duplicate and a
# long IPv6 form are taken, read back canonical, space-separated.
nsysctl "$RS" "net.rvs_rs.directors=$VIP,2001:db8:100:0:0:0:0:1 $LADDR,$LADDR6 $VIP"
DIRECTORS="$VIP $VIP6 $LADDR $LADDR6"
assert_eq "$(directors)" "$DIRECTORS" "net.rvs_rs.directors"
mark=$(kmsg_mark)
out=$(ip netns exec "$RS" sysctl -w net.rvs_rs.directors="10.0.0.999" 2>&1) &&
  fail "net.rvs_rs.directors took 10.0.0.999: $out"
log "directors=10.0.0.999 refused: $out"
assert_eq "$(directors)" "$DIRECTORS" "net.rvs_rs.directors after a refused write"
dmesg_since "$mark" | grep -F -q "net.rvs_rs.directors: not an IPv4 or IPv6 address" ||
  fail "no kernel log line about the refused directors: $(dmesg_since "$mark" | tail -3)"
many=$(seq -f '10.0.9.%g' 1 17 | tr '\n' ' ')
ip netns exec "$RS" sysctl -qw net.rvs_rs.directors="$many" 2>/dev/null && fail "net.rvs_rs.directors took 17 addresses"
assert_eq "$(directors)" "$DIRECTORS" "net.rvs_rs.directors after 17 addresses"
ip netns exec "$RS" sysctl -qw net.rvs_rs.max_entries=0 2>/dev/null && fail "net.rvs_rs.max_entries took 0"
assert_eq "$(ip netns exec "$RS" sysctl -n net.rvs_rs.max_entries)" 65536 "net.rvs_rs.max_entries"
log "net.rvs_rs.directors: $(directors)"

# --- services ---------------------------------------------------------------------------------
# ENAT: the page and the file on 80, the upload sink on 90 (no port
# mapping); FullNAT from the director's address toward the router, 81 -> 8080.
adm_ok "$LB" -a -t $VIP:80 -r $RIP:80 --enat
adm_ok "$LB" -A -t $VIP:90 -s rr
adm_ok "$LB" -a -t $VIP:90 -r $RIP:90 --enat
adm_ok "$LB" -A -t "[$VIP6]:80" -s rr
adm_ok "$LB" -a -t "[$VIP6]:80" -r "[$RIP6]:80" --enat
adm_ok "$LB" -A -t "[$VIP6]:90" -s rr
adm_ok "$LB" -a -t "[$VIP6]:90" -r "[$RIP6]:90" --enat
adm_ok "$LB" -A -t $VIP:81 -s rr --laddr $LADDR
adm_ok "$LB" -a -t $VIP:81 -r $RIP:8080 --fullnat
adm_ok "$LB" -A -t "[$VIP6]:81" -s rr --laddr $LADDR6
adm_ok "$LB" -a -t "[$VIP6]:81" -r "[$RIP6]:8080" --fullnat
list=$(adm "$LB" -L -n) || fail "-L -n failed"
printf '%s\n' "$list" | sed 's/^/#   /' >&2
printf '%s\n' "$list" | grep -E -q '^  -> 10\.0\.3\.1:80 +Enat +1 ' || fail "-L: no Enat line for 10.0.3.1:80"
printf '%s\n' "$list" | grep -E -q '^  -> \[fd00:3::1\]:80 +Enat +1 ' || fail "-L: no Enat line for [fd00:3::1]:80"
adm "$LB" -S -n | grep -E -q -- '^-a -t 10\.0\.100\.1:80 -r 10\.0\.3\.1:80 --enat( |$)' ||
  fail "-S: no --enat real server 10.0.3.1:80: $(adm "$LB" -S -n | tr '\n' ' ')"

# svc_stats ADDR PORT: "INPKTS OUTPKTS" of the TCP service ADDR:PORT (IPv6 without brackets).
svc_stats() {
  adm "$LB" -L -n --stats --json | python3 -c '
import json, sys
for s in json.load(sys.stdin)["services"]:
    if s["protocol"] == "tcp" and s["address"] == sys.argv[1] and s["port"] == int(sys.argv[2]):
        print(s["stats"]["inpkts"], s["stats"]["outpkts"])' "$1" "$2"
}
# others SRC DST: how many segment lines on stdin are not from SRC to DST.
others() { awk -v s="$1" -v d="$2" '!($1 == s && $3 == d)' | grep -c .; }
# kind254 SEGMENT: whether the segment carries a kind 254 option (FullNAT's TOA).
kind254() { printf '%s\n' "$1" | awk '{n = split($7, a, ","); for (i = 1; i <= n; i++) if (a[i] ~ /^fe/) f = 1} END {exit !f}'; }

# --- ENAT, IPv4 and IPv6 ------------------------------------------------------------------------
enat0=$(counter enat)
for fam in 4 6; do
  if [ $fam = 4 ]; then vip=$VIP caddr=$CIP raddr=$RIP cport=41004; else vip=$VIP6 caddr=$CIP6 raddr=$RIP6 cport=41006; fi
  url="http://$(hostport $vip 80)"
  # One connection from a known port, captured at the real server.
  capture "$RS" r0 "$T/rs$fam.pcap" tcp port 80
  get "$url/index.txt" "$T/page" --local-port $cport
  capture_end
  assert_eq "$(cat "$T/page")" "enat page" "IPv$fam ENAT: curl $url/index.txt"
  assert_eq "$(last_client "$T/http80.log")" "$caddr" "IPv$fam ENAT: the client the web server logged"
  segs=$(segments "$T/rs$fam.pcap" "IPv$fam ENAT, at the real server")
  syn=$(printf '%s\n' "$segs" | awk -v r="$raddr" '$3 == r && $4 == 80 && $5 == "S"' | head -1)
  [ -n "$syn" ] || fail "IPv$fam ENAT: no SYN reached the real server"
  read -r s_addr s_port _ <<<"$syn"
  assert_eq "$s_addr" "$vip" "IPv$fam ENAT: the source of the client's SYN at the real server"
  opt=$(toa_hex "$caddr" $cport 253)
  has_opt "$syn" "$opt" || fail "IPv$fam ENAT: the SYN lacks the option $opt (kind 253, client $caddr port $cport): $syn"
  kind254 "$syn" && fail "IPv$fam ENAT: the SYN carries a kind 254 (FullNAT) option too: $syn"
  # The answer leaves from the VIP straight to the client, none to the director.
  sa=$(printf '%s\n' "$segs" | awk -v v="$vip" -v c="$caddr" -v p=$cport '$1 == v && $2 == 80 && $3 == c && $4 == p && $5 == "SA"' | head -1)
  [ -n "$sa" ] || fail "IPv$fam ENAT: no SYN-ACK from $(hostport "$vip" 80) to $(hostport "$caddr" $cport) at the real server"
  back=$(printf '%s\n' "$segs" | awk -v v="$vip" -v p="$s_port" '$3 == v && $4 == p' | grep -c .)
  assert_eq "$back" 0 "IPv$fam ENAT: segments from the real server to the director's $(hostport "$vip" "$s_port")"
  check_listed "$(hostport "$caddr" $cport)" "$vip" "$s_port" "IPv$fam ENAT"
  log "IPv$fam ENAT: SYN from $(hostport "$vip" "$s_port") with option $opt; answered from $(hostport "$vip" 80) to the client; the web server saw $caddr"

  # The 100 KB download, captured on both of the director's links.
  capture "$LB" d1 "$T/lbrt$fam.pcap" tcp
  capture "$LB" d0 "$T/lbcr$fam.pcap" tcp
  rm -f "$T/big.got"
  get "$url/big.bin" "$T/big.got"
  capture_end
  cmp -s "$T/www/big.bin" "$T/big.got" ||
    fail "IPv$fam ENAT: the 100 KB file arrived corrupted ($(stat -c %s "$T/big.got" 2>/dev/null) bytes)"
  assert_eq "$(last_client "$T/http80.log")" "$caddr" "IPv$fam ENAT: the client the web server logged for the 100 KB file"
  rt_segs=$(segments "$T/lbrt$fam.pcap" "IPv$fam ENAT download, the director's link toward the router")
  cr_segs=$(segments "$T/lbcr$fam.pcap" "IPv$fam ENAT download, the director's link toward the client")
  to_rs=$(printf '%s\n' "$rt_segs" | grep -c .)
  to_vip=$(printf '%s\n' "$cr_segs" | grep -c .)
  [ "$to_rs" -gt 0 ] && [ "$to_vip" -gt 0 ] || fail "IPv$fam ENAT: the director's captures are empty ($to_rs, $to_vip)"
  assert_eq "$(printf '%s\n' "$rt_segs" | others "$vip" "$raddr")" 0 \
    "IPv$fam ENAT: segments on the director's link toward the router other than $vip -> $raddr"
  assert_eq "$(printf '%s\n' "$cr_segs" | others "$caddr" "$vip")" 0 \
    "IPv$fam ENAT: segments on the director's link toward the client other than $caddr -> $vip"
  log "IPv$fam ENAT: 100 KB intact; the director passed $to_vip client segments as $to_rs toward the real server, and saw no answer"

  check_transfer "$CL" "$RS" $vip 90 90 102400 "IPv$fam ENAT upload"
  for port in 80 90; do
    read -r p_in p_out <<<"$(svc_stats $vip $port)"
    [ "${p_in:-0}" -gt 0 ] && [ "${p_out:-x}" = 0 ] ||
      fail "IPv$fam ENAT: the service $(hostport $vip $port) counted in=$p_in out=$p_out (want in > 0, out 0)"
  done
done
assert_eq "$(( $(counter enat) - enat0 ))" 6 "/proc/net/rvs_rs enat: ENAT connections taken (3 per family)"
assert_eq "$(adm "$LB" -L -n --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["enat_no_room"])')" 0 \
  "enat_no_room (a Linux client's SYN has room for the option)"

# --- FullNAT with the companion -------------------------------------------------------------------
fullnat0=$(counter fullnat)
for fam in 4 6; do
  if [ $fam = 4 ]; then vip=$VIP caddr=$CIP raddr=$RIP laddr=$LADDR cport=42004; else vip=$VIP6 caddr=$CIP6 raddr=$RIP6 laddr=$LADDR6 cport=42006; fi
  capture "$RS" r0 "$T/fn$fam.pcap" tcp port 8080
  rm -f "$T/big.got"
  get "http://$(hostport $vip 81)/big.bin" "$T/big.got" --local-port $cport
  capture_end
  cmp -s "$T/www/big.bin" "$T/big.got" || fail "IPv$fam FullNAT with the companion: the 100 KB file arrived corrupted"
  assert_eq "$(last_client "$T/http8080.log")" "$caddr" "IPv$fam FullNAT with the companion: the client the web server logged"
  segs=$(segments "$T/fn$fam.pcap" "IPv$fam FullNAT with the companion, at the real server")
  syn=$(printf '%s\n' "$segs" | awk -v r="$raddr" '$3 == r && $4 == 8080 && $5 == "S"' | head -1)
  [ -n "$syn" ] || fail "IPv$fam FullNAT: no SYN reached the real server"
  read -r s_addr s_port _ <<<"$syn"
  assert_eq "$s_addr" "$laddr" "IPv$fam FullNAT: the source of the SYN at the real server"
  opt=$(toa_hex "$caddr" $cport)
  has_opt "$syn" "$opt" || fail "IPv$fam FullNAT: the SYN lacks the TOA option $opt: $syn"
  # The companion sends the answers back to the local address and port.
  sa=$(printf '%s\n' "$segs" | awk -v l="$laddr" -v p="$s_port" '$2 == 8080 && $3 == l && $4 == p && $5 == "SA"' | head -1)
  [ -n "$sa" ] || fail "IPv$fam FullNAT: no SYN-ACK to $(hostport "$laddr" "$s_port") at the real server"
  assert_eq "$(printf '%s\n' "$segs" | awk -v c="$caddr" '$1 == c || $3 == c' | grep -c .)" 0 \
    "IPv$fam FullNAT: segments with the client's address at the real server"
  check_listed "$(hostport "$caddr" $cport)" "$laddr" "$s_port" "IPv$fam FullNAT"
  log "IPv$fam FullNAT with the companion: 100 KB intact, the web server saw $caddr; answers went back to $(hostport "$laddr" "$s_port")"
done
assert_eq "$(( $(counter fullnat) - fullnat0 ))" 2 "/proc/net/rvs_rs fullnat: FullNAT connections taken"

# --- the director's packets for one 100 KB download ------------------------------------------------
for fam in 4 6; do
  if [ $fam = 4 ]; then vip=$VIP; else vip=$VIP6; fi
  adm_ok "$LB" -Z
  for port in 81 80; do
    rm -f "$T/big.got"
    get "http://$(hostport $vip $port)/big.bin" "$T/big.got"
    cmp -s "$T/www/big.bin" "$T/big.got" || fail "IPv$fam: the 100 KB file from port $port arrived corrupted"
  done
  # The connections' last segments (the client's final ACK) are counted too.
  sleep 1
  read -r f_in f_out <<<"$(svc_stats $vip 81)"
  read -r e_in e_out <<<"$(svc_stats $vip 80)"
  log "IPv$fam: director packets for a 100 KB download: FullNAT in=$f_in out=$f_out; ENAT in=$e_in out=$e_out"
  [ "${f_in:-0}" -gt 0 ] && [ "${f_out:-0}" -gt 0 ] && [ "${e_in:-0}" -gt 0 ] && [ "${e_out:-x}" = 0 ] ||
    fail "IPv$fam: director packets: FullNAT in=$f_in out=$f_out, ENAT in=$e_in out=$e_out (want ENAT out 0, the others > 0)"
done

# --- FullNAT with the companion off ------------------------------------------------------------------
nsysctl "$RS" net.rvs_rs.directors=
assert_eq "$(directors)" "" "net.rvs_rs.directors emptied"
fullnat0=$(counter fullnat)
for fam in 4 6; do
  if [ $fam = 4 ]; then vip=$VIP laddr=$LADDR; else vip=$VIP6 laddr=$LADDR6; fi
  rm -f "$T/big.got"
  get "http://$(hostport $vip 81)/big.bin" "$T/big.got"
  cmp -s "$T/www/big.bin" "$T/big.got" || fail "IPv$fam FullNAT without the companion: the 100 KB file arrived corrupted"
  assert_eq "$(last_client "$T/http8080.log")" "$laddr" "IPv$fam FullNAT without the companion: the client the web server logged"
done
assert_eq "$(( $(counter fullnat) - fullnat0 ))" 0 "/proc/net/rvs_rs fullnat with the companion off"
log "FullNAT: the web server logged the client with the companion, the local address without"
nsysctl "$RS" "net.rvs_rs.directors=$DIRECTORS"
assert_eq "$(directors)" "$DIRECTORS" "net.rvs_rs.directors set again"

# --- forged options from a host that is no director ------------------------------------------------------
# The router sends SYNs from a raw socket: it has no socket of its own for
# them and would reset the real server's answers; it drops them instead,
# so they stay half-open at the real server, where ss shows whom the
# stack believes it talks to.
ip netns exec "$RT" nft -f - <<NFT || fail "nft in the router"
table inet enat {
  chain in {
    type filter hook input priority 0; policy accept;
    tcp sport 7000 tcp flags & (syn | ack) == syn | ack drop
  }
}
NFT
# Half-open connections live through tcp_synack_retries retransmissions
# (5: about 60 s); the debug kernel under TCG can take longer than that
# to get from the first forged SYN to the ss check.
nsysctl "$RS" net.ipv4.tcp_synack_retries=10
untrusted0=$(counter untrusted) enat0=$(counter enat) fullnat0=$(counter fullnat)
capture "$RS" r0 "$T/forged.pcap" tcp port 7000
sport=4440 forged=() want=()
for kind in 254 253; do
  for fam in 4 6; do
    if [ $fam = 4 ]; then src=10.0.3.254 dst=$RIP claim=192.0.2.7; else src=fd00:3::fe dst=$RIP6 claim=2001:db8:99::7; fi
    sport=$((sport + 1))
    ip netns exec "$RT" python3 "$EN_PY" forge $src $dst 7000 $sport $kind $claim 1234 ||
      fail "the router could not send a forged SYN (kind $kind, IPv$fam)"
    forged+=("$src $sport $(toa_hex $claim 1234 $kind)")
    want+=("$(hostport $src $sport)")
  done
done
sleep 1
capture_end
segs=$(segments "$T/forged.pcap" "forged SYNs, at the real server")
# Each forged SYN reached the real server with its option...
for f in "${forged[@]}"; do
  read -r src sport opt <<<"$f"
  syn=$(printf '%s\n' "$segs" | awk -v s="$src" -v p="$sport" '$1 == s && $2 == p && $4 == 7000 && $5 == "S"' | head -1)
  [ -n "$syn" ] || fail "the forged SYN from $(hostport "$src" "$sport") did not reach the real server"
  has_opt "$syn" "$opt" || fail "the forged SYN from $(hostport "$src" "$sport") lacks its option $opt: $syn"
done
# ...and was answered to the router's address and port, never to the claimed client.
want=$(printf '%s\n' "${want[@]}" | sort | tr '\n' ' ')
answered=$(printf '%s\n' "$segs" | awk '$2 == 7000 && $5 == "SA" {print $3, $4}' | sort -u |
  while read -r a p; do hostport "$a" "$p"; done | sort | tr '\n' ' ')
assert_eq "$answered" "$want" "where the real server answered the forged SYNs"
assert_eq "$(printf '%s\n' "$segs" | awk '$1 == "192.0.2.7" || $3 == "192.0.2.7" || $1 == "2001:db8:99::7" || $3 == "2001:db8:99::7"' | grep -c .)" 0 \
  "segments with a claimed client's address at the real server"
half=$(ip netns exec "$RS" ss -Htn state syn-recv '( sport = :7000 )' |
  awk '{p = $NF; sub(/^\[?::ffff:/, "", p); sub(/\]:/, ":", p); sub(/^\[/, "", p); print p}' |
  while read -r ap; do hostport "${ap%:*}" "${ap##*:}"; done | sort | tr '\n' ' ')
assert_eq "$half" "$want" "ss: the real server's half-open connections on port 7000 (peers)"
assert_eq "$(( $(counter untrusted) - untrusted0 ))" 4 "/proc/net/rvs_rs untrusted after 4 forged SYNs"
assert_eq "$(( $(counter enat) - enat0 )) $(( $(counter fullnat) - fullnat0 ))" "0 0" \
  "/proc/net/rvs_rs enat and fullnat after the forged SYNs"
log "4 forged SYNs (kinds 254 and 253, IPv4 and IPv6) from the router: answered to $want, counted untrusted"
ip netns exec "$RS" cat /proc/net/rvs_rs | sed 's/^/#   \/proc\/net\/rvs_rs: /' >&2

# --- unload under traffic ---------------------------------------------------------------------------------
# A slow ENAT download (1 MiB at 10 KB/s); once its data flows, the
# companion goes (the connection then breaks: its replies are no longer
# rewritten).
rm -f "$T/slow.got"
ip netns exec "$CL" timeout 60 curl -sS --limit-rate 10k -o "$T/slow.got" "http://$VIP/huge.bin" \
  </dev/null >/dev/null 2>&1 &
bg_track $!
for _ in $(seq 1 200); do
  [ "$(stat -c %s "$T/slow.got" 2>/dev/null || echo 0)" -gt 0 ] && break
  sleep 0.1
done
got=$(stat -c %s "$T/slow.got" 2>/dev/null || echo 0)
[ "$got" -gt 0 ] && [ "$got" -lt 1048576 ] || fail "the slow ENAT download is not under way ($got bytes)"
[ "$(counter entries)" -gt 0 ] || fail "the companion tracks no connection during the slow download"
rmmod rvs_rs || fail "rmmod rvs_rs during an ENAT download failed"
grep -q '^rvs_rs ' /proc/modules && fail "rvs_rs still loaded after rmmod"
ip netns exec "$RS" test -e /proc/net/rvs_rs && fail "/proc/net/rvs_rs left behind after rmmod"
ip netns exec "$RS" test -e /proc/sys/net/rvs_rs && fail "/proc/sys/net/rvs_rs left behind after rmmod"
log "rmmod rvs_rs during an ENAT download ($got bytes in): done"

# --- a SYN the companion does not take, on the addresses of a connection it has -----------------------------
# A director's SYN without the option, from the local address and port of
# a FullNAT connection the companion holds (as after the director gave
# that port to a new client): that entry must end, not lend the new
# connection its client. The collector (every second) then removes it. The
# companion is loaded afresh, so that its table holds that connection only
# (the test's earlier ones would expire meanwhile); it stays loaded for
# the runner if it was before the test (else at_exit unloads it).
insmod "$RS_KO" || fail "could not load $RS_KO again"
nsysctl "$RS" "net.rvs_rs.directors=$DIRECTORS"
rm -f "$T/held.got"
ip netns exec "$CL" timeout 60 curl -sS --limit-rate 10k --local-port 41500 -o "$T/held.got" \
  "http://$VIP:81/huge.bin" </dev/null >/dev/null 2>&1 &
held_pid=$!
bg_track $held_pid
for _ in $(seq 1 200); do
  [ "$(stat -c %s "$T/held.got" 2>/dev/null || echo 0)" -gt 0 ] && break
  sleep 0.1
done
lend=$(conn_local "$CIP:41500")
[ -n "$lend" ] || fail "no FullNAT connection of $CIP:41500 listed"
assert_eq "$(counter entries)" 1 "/proc/net/rvs_rs entries with one FullNAT download held"
ip netns exec "$LB" python3 "$EN_PY" forge "${lend%:*}" $RIP 8080 "${lend##*:}" 0 $CIP 0 ||
  fail "the director could not send a plain SYN from $lend"
for _ in $(seq 1 50); do
  [ "$(counter entries)" = 0 ] && break
  sleep 0.1
done
assert_eq "$(counter entries)" 0 \
  "/proc/net/rvs_rs entries 5 s after a SYN without the option from $lend (the held connection's addresses)"
kill "$held_pid" 2>/dev/null
log "a SYN without the option on the addresses of the held FullNAT connection ($lend) ended its entry"
pass "ENAT and rvs_rs: direct replies, client addresses for ENAT and FullNAT, forged options ignored, unload under traffic"
