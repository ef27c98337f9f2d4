#!/bin/bash
# ENAT (--enat) and the real servers' companion, rvs_rs.ko (rvs only: IPVS
# has neither). The real server sits behind a router that reaches the
# client's network by its own link, not through the director:
#
#   client "en-cl"                     director "en-lb"               router "en-rt"              real server "en-rs"
#   c0 10.0.0.2/24, fd00::2/64 ------- d0 10.0.0.1, fd00::1
#   default via the director           lo: VIP 10.0.100.1, 2001:db8:100::1
#   (the VIP's way)                    d1 10.0.2.1/24, fd00:2::1 ---- x0 10.0.2.254, fd00:2::fe
#                                      the servers' nets via the      x1 10.0.3.254, fd00:3::fe -- r0 10.0.3.1, fd00:3::1
#                                      router; forwarding off         the client's nets via        default via the router;
#   c1 10.0.9.2/24, fd00:9::2 ------------------------------------- x2 10.0.9.254, fd00:9::fe     rvs_rs.ko
#
#  - the topology holds: the router's way to the client is its own link
#    x2, and the director forwards nothing;
#  - ENAT, IPv4 and IPv6: curl gets a page and a 100 KB file intact, a
#    100 KB upload arrives intact; the real server's web server logs the
#    client's own address; the client's SYN reaches the real server from
#    the VIP and the port the listing shows (" local VIP:LPORT"), with the
#    option kind 253, length 8 (IPv6 20), client port and address, byte
#    for byte; on the director's link toward the router only packets toward
#    the real server pass (none from it), and the service counts packets
#    in and none out;
#  - the same 100 KB download through FullNAT and through ENAT: the
#    director's packet counts of each, logged;
#  - FullNAT with the companion trusting its local address: the web server
#    logs the client; with the companion off (directors empty) FullNAT
#    still works and the web server logs the local address;
#  - /proc/net/rvs_rs counts exactly the connections of each kind, and as
#    untrusted the options of FullNAT SYNs while the list is empty;
#  - SYNs with forged options (kinds 254 and 253, IPv4 and IPv6) from the
#    router, which is no director: the real server answers the router, not
#    the claimed client, and each is counted as untrusted;
#  - refusals: --enat on a UDP and on a firewall-mark service (the
#    module's message names ENAT), with a different server port (rvsadm's);
#    a bad address in net.rvs_rs.directors (EINVAL, the list unchanged),
#    max_entries out of range;
#  - rmmod rvs_rs during an ENAT download succeeds (the suite's kernel log
#    check then finds no splat).
. "$(dirname "$0")/../lib.sh"
rvs_only
adm_init rr
mk_test_tmp
T=$TEST_TMP
FN_PY=$RVS_ROOT/tests/py/fullnat.py
EN_PY=$RVS_ROOT/tests/py/enat.py
RS_KO=$RVS_ROOT/rvs_rs.ko
for tool in curl tcpdump socat; do
  command -v $tool >/dev/null || fail "$tool not installed (qemu/install-deps installs it)"
done

# --- the companion --------------------------------------------------------------------
if ! grep -q '^rvs_rs ' /proc/modules; then
  [ -f "$RS_KO" ] || fail "$RS_KO is missing: make module builds it beside rvs.ko"
  insmod "$RS_KO" || fail "insmod $RS_KO failed"
  at_exit 'grep -q "^rvs_rs " /proc/modules && rmmod rvs_rs'
fi

# --- topology ---------------------------------------------------------------------------
newns CL en-cl; newns LB en-lb; newns RT en-rt; newns RS en-rs
VIP=10.0.100.1 VIP6=2001:db8:100::1
CIP=10.0.0.2 CIP6=fd00::2
RIP=10.0.3.1 RIP6=fd00:3::1
LADDR=10.0.2.1 LADDR6=fd00:2::1
nsip "$LB" <<IP
link add d0 type veth peer name c0 netns $CL
link set d0 up
addr add 10.0.0.1/24 dev d0
addr add fd00::1/64 dev d0 nodad
addr add $VIP/32 dev lo
addr add $VIP6/128 dev lo
link add d1 type veth peer name x0 netns $RT
link set d1 up
addr add $LADDR/24 dev d1
addr add $LADDR6/64 dev d1 nodad
route add 10.0.3.0/24 via 10.0.2.254
route add fd00:3::/64 via fd00:2::fe
IP
nsip "$RT" <<IP
link set x0 up
addr add 10.0.2.254/24 dev x0
addr add fd00:2::fe/64 dev x0 nodad
link add x1 type veth peer name r0 netns $RS
link set x1 up
addr add 10.0.3.254/24 dev x1
addr add fd00:3::fe/64 dev x1 nodad
link add x2 type veth peer name c1 netns $CL
link set x2 up
addr add 10.0.9.254/24 dev x2
addr add fd00:9::fe/64 dev x2 nodad
route add 10.0.0.0/24 via 10.0.9.2
route add fd00::/64 via fd00:9::2
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
link set c1 up
addr add 10.0.9.2/24 dev c1
addr add fd00:9::2/64 dev c1 nodad
route add default via 10.0.0.1
route add default via fd00::1
IP
nsysctl "$LB" net.ipv4.ip_forward=0 net.ipv6.conf.all.forwarding=0
nsysctl "$RT" net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
# The VIP's answers come in by c1 while the VIP's route is c0: strict
# reverse-path filtering would drop them (IPv6 has none).
nsysctl "$CL" net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.c1.rp_filter=0 net.ipv4.conf.default.rp_filter=0

# The router reaches the client by its own link, not through the director.
for a in $CIP $CIP6; do
  dev=$(ip -n "$RT" route get "$a" | sed -n 's/.* dev \([^ ]*\).*/\1/p' | head -1)
  assert_eq "$dev" x2 "the router's way to the client $a"
done
log "the real server reaches the client by the router's link x2; the director forwards nothing"

# --- servers ------------------------------------------------------------------------------
mkdir -p "$T/www"
echo "enat page" >"$T/www/index.txt"
head -c 102400 /dev/urandom >"$T/www/big.bin"
ip netns exec "$RS" python3 -m http.server 80 --bind :: --directory "$T/www" \
  </dev/null >/dev/null 2>"$T/http.log" &
bg_track $!
wait_listen "$RS" tcp 80

# --- refusals -------------------------------------------------------------------------------
adm_ok "$LB" -A -u $VIP:53 -s rr
out=$(adm "$LB" -a -u $VIP:53 -r $RIP:53 --enat 2>&1) && fail "--enat on a UDP service was accepted"
case $out in *ENAT*) ;; *) fail "--enat on a UDP service: the message does not name ENAT: $out" ;; esac
adm_ok "$LB" -A -f 7 -s rr
out=$(adm "$LB" -a -f 7 -r $RIP --enat 2>&1) && fail "--enat on a firewall-mark service was accepted"
case $out in *ENAT*) ;; *) fail "--enat on a mark service: the message does not name ENAT: $out" ;; esac
adm_ok "$LB" -A -t $VIP:80 -s rr
out=$(adm "$LB" -a -t $VIP:80 -r $RIP:8080 --enat 2>&1) && fail "--enat with port mapping was accepted"
case $out in *"port mapping"*) ;; *) fail "--enat with port mapping: unexpected message: $out" ;; esac
adm_ok "$LB" -D -u $VIP:53
adm_ok "$LB" -D -f 7
log "refused: --enat on UDP and mark services, and with another port"

rs_get() { ip netns exec "$RS" sysctl -n "net.rvs_rs.$1"; }
DIRECTORS="$VIP $VIP6 $LADDR $LADDR6"
nsysctl "$RS" "net.rvs_rs.directors=$DIRECTORS"
assert_eq "$(rs_get directors)" "$DIRECTORS" "net.rvs_rs.directors"
ip netns exec "$RS" sysctl -qw net.rvs_rs.directors="10.0.0.999 $VIP" 2>/dev/null &&
  fail "net.rvs_rs.directors took a bad address"
assert_eq "$(rs_get directors)" "$DIRECTORS" "net.rvs_rs.directors after a refused write"
ip netns exec "$RS" sysctl -qw net.rvs_rs.max_entries=0 2>/dev/null && fail "max_entries=0 was taken"
assert_eq "$(rs_get max_entries)" 65536 "net.rvs_rs.max_entries"
# counter NAME: the companion's counter NAME in the real server's namespace.
counter() { ip netns exec "$RS" awk -v n="$1" '$1 == n {print $2}' /proc/net/rvs_rs; }

# --- services -------------------------------------------------------------------------------
adm_ok "$LB" -a -t $VIP:80 -r $RIP:80 --enat
adm_ok "$LB" -A -t $VIP:90 -s rr
adm_ok "$LB" -a -t $VIP:90 -r $RIP:90 --enat
adm_ok "$LB" -A -t "[$VIP6]:80" -s rr
adm_ok "$LB" -a -t "[$VIP6]:80" -r "[$RIP6]:80" --enat
adm_ok "$LB" -A -t "[$VIP6]:90" -s rr
adm_ok "$LB" -a -t "[$VIP6]:90" -r "[$RIP6]:90" --enat
adm_ok "$LB" -A -t $VIP:81 -s rr --laddr $LADDR
adm_ok "$LB" -a -t $VIP:81 -r $RIP:80 --fullnat
adm_ok "$LB" -A -t "[$VIP6]:81" -s rr --laddr $LADDR6
adm_ok "$LB" -a -t "[$VIP6]:81" -r "[$RIP6]:80" --fullnat
adm "$LB" -L -n | grep -E -q '^  -> 10\.0\.3\.1:80 +Enat +1 ' || fail "-L: no Enat line for 10.0.3.1:80"

# --- helpers ----------------------------------------------------------------------------------
hostport() { case $1 in *:*) echo "[$1]:$2" ;; *) echo "$1:$2" ;; esac; }
# get URL OUT [CURL ARGS...]: curl from the client, body to OUT.
get() {
  local url=$1 out=$2 err; shift 2
  err=$(ip netns exec "$CL" timeout 30 curl -sS -g --max-time 25 -o "$out" "$@" "$url" 2>&1) ||
    fail "curl $url: $err"
}
# last_client: the client address of the web server's last log line.
last_client() { awk '{a = $1} END {sub(/^::ffff:/, "", a); print a}' "$T/http.log"; }
# stats VIP PORT: "INPKTS OUTPKTS" of that service.
stats() {
  adm "$LB" -L -n --stats --json | python3 -c '
import json, sys
for s in json.load(sys.stdin)["services"]:
    if s["address"] == sys.argv[1] and s["port"] == int(sys.argv[2]):
        print(s["stats"]["inpkts"], s["stats"]["outpkts"])' "$1" "$2"
}
# segments FILE: fullnat.py's line per TCP segment (SRC SPORT DST DPORT FLAGS LEN OPTIONS).
segments() { python3 "$FN_PY" segments "$1" || fail "cannot read the capture $1"; }
has_opt() { printf '%s\n' "$1" | awk -v o="$2" '{n = split($7, a, ","); for (i = 1; i <= n; i++) if (a[i] == o) f = 1} END {exit !f}'; }

# --- ENAT, IPv4 and IPv6 ----------------------------------------------------------------------
enat_conns=0
for fam in 4 6; do
  if [ $fam = 4 ]; then vip=$VIP caddr=$CIP raddr=$RIP cport=41004; else vip=$VIP6 caddr=$CIP6 raddr=$RIP6 cport=41006; fi
  url="http://$(hostport $vip 80)"
  capture "$RS" r0 "$T/rs$fam.pcap" tcp port 80
  capture "$LB" d1 "$T/lb$fam.pcap" tcp
  get "$url/index.txt" "$T/page" --local-port $cport
  capture_end
  assert_eq "$(cat "$T/page")" "enat page" "IPv$fam ENAT: curl $url/index.txt"
  assert_eq "$(last_client)" "$caddr" "IPv$fam ENAT: the client the web server logged"
  segs=$(segments "$T/rs$fam.pcap")
  printf '%s\n' "$segs" | head -4 | sed 's/^/#   /' >&2
  syn=$(printf '%s\n' "$segs" | awk '$4 == 80 && $5 == "S"' | head -1)
  [ -n "$syn" ] || fail "IPv$fam ENAT: no SYN reached the real server"
  read -r s_addr s_port _ <<<"$syn"
  assert_eq "$s_addr" "$vip" "IPv$fam ENAT: the source of the SYN at the real server"
  opt=$(python3 "$EN_PY" option 253 "$caddr" $cport)
  has_opt "$syn" "$opt" || fail "IPv$fam ENAT: the SYN lacks the option $opt: $syn"
  listed=$(adm "$LB" -L -n -c | grep -F " $(hostport $caddr $cport) " | sed -n 's/.* local \([^ ]*\)$/\1/p')
  assert_eq "$listed" "$(hostport $vip "$s_port")" "IPv$fam ENAT: -L -n -c local end of $(hostport $caddr $cport)"
  # The director's link toward the router: requests only.
  lbsegs=$(segments "$T/lb$fam.pcap")
  from_rs=$(printf '%s\n' "$lbsegs" | awk -v r="$raddr" '$1 == r' | grep -c .)
  to_rs=$(printf '%s\n' "$lbsegs" | awk -v r="$raddr" '$3 == r' | grep -c .)
  [ "$to_rs" -gt 0 ] && [ "$from_rs" = 0 ] ||
    fail "IPv$fam ENAT: on the director's link $to_rs segments toward the real server, $from_rs from it"
  log "IPv$fam ENAT: SYN from $(hostport $vip "$s_port") with option $opt; the director's link carried $to_rs segments toward the real server, none back; the web server saw $caddr"
  rm -f "$T/big.got"
  get "$url/big.bin" "$T/big.got"
  cmp -s "$T/www/big.bin" "$T/big.got" ||
    fail "IPv$fam ENAT: the 100 KB file arrived corrupted ($(stat -c %s "$T/big.got" 2>/dev/null) bytes)"
  assert_eq "$(last_client)" "$caddr" "IPv$fam ENAT: the client the web server logged for the 100 KB file"
  check_transfer "$CL" "$RS" $vip 90 90 102400 "IPv$fam ENAT upload"
  enat_conns=$((enat_conns + 3))
  read -r in out <<<"$(stats $vip 80)"
  [ "${in:-0}" -gt 0 ] && [ "$out" = 0 ] || fail "IPv$fam ENAT: the service counted in=$in out=$out"
done
assert_eq "$(counter enat)" $enat_conns "/proc/net/rvs_rs enat (ENAT connections made)"
assert_eq "$(counter untrusted)" 0 "/proc/net/rvs_rs untrusted"

# --- the director's packets for one 100 KB download, FullNAT and ENAT --------------------------
adm_ok "$LB" -Z
get "http://$VIP:80/big.bin" "$T/big.got"
read -r e_in e_out <<<"$(stats $VIP 80)"
get "http://$VIP:81/big.bin" "$T/big.got"
read -r f_in f_out <<<"$(stats $VIP 81)"
cmp -s "$T/www/big.bin" "$T/big.got" || fail "FullNAT: the 100 KB file arrived corrupted"
log "director packets for one 100 KB download: FullNAT in=$f_in out=$f_out; ENAT in=$e_in out=$e_out"
[ "$e_out" = 0 ] && [ "$f_out" -gt 0 ] || fail "director packets: FullNAT out=$f_out, ENAT out=$e_out"
enat_conns=$((enat_conns + 1))

# --- FullNAT with and without the companion ---------------------------------------------------
fn_conns=1
for fam in 4 6; do
  if [ $fam = 4 ]; then vip=$VIP caddr=$CIP; else vip=$VIP6 caddr=$CIP6; fi
  get "http://$(hostport $vip 81)/index.txt" "$T/page"
  assert_eq "$(cat "$T/page")" "enat page" "IPv$fam FullNAT with the companion"
  assert_eq "$(last_client)" "$caddr" "IPv$fam FullNAT with the companion: the client the web server logged"
  fn_conns=$((fn_conns + 1))
done
assert_eq "$(counter fullnat)" $fn_conns "/proc/net/rvs_rs fullnat (FullNAT connections restored)"
nsysctl "$RS" net.rvs_rs.directors=
assert_eq "$(rs_get directors)" "" "net.rvs_rs.directors emptied"
for fam in 4 6; do
  if [ $fam = 4 ]; then vip=$VIP laddr=$LADDR; else vip=$VIP6 laddr=$LADDR6; fi
  get "http://$(hostport $vip 81)/big.bin" "$T/big.got"
  cmp -s "$T/www/big.bin" "$T/big.got" || fail "IPv$fam FullNAT without the companion: the 100 KB file arrived corrupted"
  assert_eq "$(last_client)" "$laddr" "IPv$fam FullNAT without the companion: the client the web server logged"
done
assert_eq "$(counter fullnat)" $fn_conns "/proc/net/rvs_rs fullnat with the companion off"
# Their options came from an address the (empty) list does not hold.
assert_eq "$(counter untrusted)" 2 "/proc/net/rvs_rs untrusted after 2 FullNAT SYNs with the companion off"
log "FullNAT: the web server logged the client with the companion, the local address without"
nsysctl "$RS" "net.rvs_rs.directors=$DIRECTORS"

# --- forged options from a host that is no director ---------------------------------------------
capture "$RS" r0 "$T/forged.pcap" tcp port 80
sport=4440
for kind in 254 253; do
  for fam in 4 6; do
    if [ $fam = 4 ]; then src=10.0.3.254 dst=$RIP claim=192.0.2.7; else src=fd00:3::fe dst=$RIP6 claim=2001:db8:99::7; fi
    sport=$((sport + 1))
    ip netns exec "$RT" python3 "$EN_PY" forge $src $dst 80 $kind $claim 1234 $sport ||
      fail "cannot send a forged SYN from the router"
  done
done
sleep 1
capture_end
segs=$(segments "$T/forged.pcap")
printf '%s\n' "$segs" | sed 's/^/#   /' >&2
answers=$(printf '%s\n' "$segs" | awk '$2 == 80 && $5 == "SA"')
assert_eq "$(printf '%s\n' "$answers" | awk '$3 == "10.0.3.254" || $3 == "fd00:3::fe"' | grep -c .)" 4 \
  "SYN-ACKs from the real server to the router for its 4 forged SYNs"
assert_eq "$(printf '%s\n' "$answers" | awk '$3 == "192.0.2.7" || $3 == "2001:db8:99::7"' | grep -c .)" 0 \
  "SYN-ACKs to the addresses the forged options claimed"
assert_eq "$(counter untrusted)" 6 "/proc/net/rvs_rs untrusted after 4 forged SYNs (2 before)"
assert_eq "$(counter enat)" $enat_conns "/proc/net/rvs_rs enat after the forged SYNs"
log "4 forged SYNs (kinds 254 and 253, IPv4 and IPv6) from the router: answered to the router, counted untrusted"
ip netns exec "$RS" cat /proc/net/rvs_rs | sed 's/^/#   \/proc\/net\/rvs_rs: /' >&2

# --- unload under traffic ------------------------------------------------------------------------
ip netns exec "$CL" timeout 30 curl -sS --limit-rate 20k -o /dev/null "http://$VIP/big.bin" \
  </dev/null >/dev/null 2>&1 &
bg_track $!
sleep 2
[ "$(counter entries)" -gt 0 ] || fail "no connection tracked during the slow download"
rmmod rvs_rs || fail "rmmod rvs_rs during an ENAT download failed"
grep -q '^rvs_rs ' /proc/modules && fail "rvs_rs still loaded after rmmod"
log "rmmod rvs_rs during an ENAT download: done"
pass "ENAT and the companion: client addresses restored, replies direct, forged options ignored"
