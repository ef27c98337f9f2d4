#!/bin/bash
# rvsadm --flush-conns ends a real server's (-r) or a whole service's
# connections now (rvs's addition; IPVS cannot):
#  - NAT, IPv4: of four held connections over two real servers, flushing
#    one server ends exactly its two, at both ends (the client's sockets
#    see a reset, the server's log one), the other server's two stay alive;
#    flushing the service then ends those;
#  - the resets carry the exact sequence numbers (RFC 5961): neither the
#    client nor the servers answer them with a challenge ACK, which an
#    nftables counter on each would see;
#  - NAT, IPv6, and direct routing (the server's reset goes to its MAC with
#    the VIP as destination), the same;
#  - a UDP service's entries are removed; the counts printed and the
#    namespace's total (--json info) agree; unknown services and servers
#    are refused with a clear message.
. "$(dirname "$0")/../lib.sh"
rvs_only
adm_init rr
mk_test_tmp
# flush ARGS...: rvsadm --flush-conns ARGS; prints the number it reports.
flush() {
  local out
  out=$(adm "$LB" --flush-conns "$@" 2>&1) || fail "--flush-conns $*: $out"
  log "--flush-conns $*: $out"
  echo "$out" | sed -n 's/^flushed \([0-9]*\) connection.*/\1/p'
}
# --- NAT, IPv4 and IPv6 ----------------------------------------------------------
topo_nat flush 2
topo_nat_ipv6
probe_serve "${RS[1]}" 80 rs1
probe_serve "${RS[2]}" 80 rs2
for ns in "$CL" "${RS[1]}" "${RS[2]}"; do count_tcp "$ns"; done
adm_ok "$LB" -A -t $VIP:80 -s rr
adm_ok "$LB" -a -t $VIP:80 -r ${RIP[1]}:80 -m
adm_ok "$LB" -a -t $VIP:80 -r ${RIP[2]}:80 -m

probe_hold "$CL" $VIP 80 4 nat4
assert_eq "$(grep -c -x -e rs1 -e rs2 "$TEST_TMP/nat4.out")" 4 "four connections held"
assert_eq "$(grep -c -x rs1 "$TEST_TMP/nat4.out")" 2 "rr: two on rs1"
for ns in "$CL" "${RS[1]}" "${RS[2]}"; do reset_counts "$ns"; done
n=$(flush -t $VIP:80 -r ${RIP[1]}:80)
assert_eq "$n" 2 "flushed count of rs1"
sleep 1
log "client: $(counts "$CL"); rs1: $(counts "${RS[1]}"); rs2: $(counts "${RS[2]}")"
assert_eq "$(counts "$CL")" "rst_in=2 ack_out=0" "client: one exact reset per connection, no challenge ACK"
assert_eq "$(counts "${RS[1]}")" "rst_in=2 ack_out=0" "rs1: one exact reset per connection, no challenge ACK"
assert_eq "$(counts "${RS[2]}")" "rst_in=0 ack_out=0" "rs2: untouched"
assert_eq "$(log_resets rs1)" 2 "rs1's application saw its two connections reset"
assert_eq "$(probe_results nat4 | summary)" "rs1:reset=2 rs2:alive=2" "client's view after flushing rs1"
assert_eq "$(log_resets rs2)" 0 "rs2's connections were not reset"
# The entries went at once: -L -c lists none of rs1's.
assert_eq "$(adm "$LB" -L -n -c | grep -c "${RIP[1]}:80")" 0 "rs1's entries left after the flush"

# The whole service: rs2's two (held by a new client run).
probe_hold "$CL" $VIP 80 2 nat4b
for ns in "$CL" "${RS[1]}" "${RS[2]}"; do reset_counts "$ns"; done
n=$(flush -t $VIP:80)
# The count is of entries: the first holder's two rs2 connections, closed
# when it exited (TIME_WAIT, no reset for them), and the two new ones.
assert_eq "$n" 4 "flushed count of the service"
sleep 1
assert_eq "$(counts "$CL")" "rst_in=2 ack_out=0" "client after the service flush"
assert_eq "$(probe_results nat4b | sed 's/^rs[12] //' | sort -u)" reset "the new connections ended"

# IPv6: one server.
adm_ok "$LB" -A -t [$VIP6]:80 -s rr
adm_ok "$LB" -a -t [$VIP6]:80 -r [2001:db8:1::1]:80 -m
probe_hold "$CL" $VIP6 80 2 nat6
for ns in "$CL" "${RS[1]}"; do reset_counts "$ns"; done
: >"$TEST_TMP/rs1.log"
n=$(flush -t [$VIP6]:80 -r [2001:db8:1::1]:80)
assert_eq "$n" 2 "flushed count, IPv6"
sleep 1
assert_eq "$(counts "$CL")" "rst_in=2 ack_out=0" "IPv6 client: exact resets"
assert_eq "$(counts "${RS[1]}")" "rst_in=2 ack_out=0" "IPv6 rs1: exact resets"
assert_eq "$(probe_results nat6 | summary)" "rs1:reset=2" "IPv6 client's view"
assert_eq "$(log_resets rs1)" 2 "IPv6: rs1's application saw the resets"

# UDP: entries removed, counted.
serve_udp_on "${RS[1]}" 0.0.0.0 53 rs1
adm_ok "$LB" -A -u $VIP:53 -s rr
adm_ok "$LB" -a -u $VIP:53 -r ${RIP[1]}:53 -m
for p in 5301 5302; do
  got=$(ip netns exec "$CL" timeout 5 socat -T2 - "UDP4:$VIP:53,sourceport=$p" <<<q 2>/dev/null)
  assert_eq "$got" rs1 "UDP answer from port $p"
done
assert_eq "$(adm "$LB" -L -n -c | grep -c '^UDP')" 2 "UDP entries before the flush"
assert_eq "$(flush -u $VIP:53)" 2 "flushed count, UDP"
assert_eq "$(adm "$LB" -L -n -c | grep -c '^UDP')" 0 "UDP entries after the flush"

# Refusals.
out=$(adm "$LB" --flush-conns -t $VIP:81 2>&1) && fail "flush of a missing service succeeded: $out"
log "missing service: $out"
echo "$out" | grep -qi 'no such service' || fail "missing service: unclear error: $out"
out=$(adm "$LB" --flush-conns -t $VIP:80 -r 10.0.1.9:80 2>&1) && fail "flush of a missing server succeeded: $out"
log "missing server: $out"
echo "$out" | grep -qi 'no such real server' || fail "missing server: unclear error: $out"
total=$(adm "$LB" -L -n --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["conn_flushed"])')
assert_eq "$total" 10 "namespace total of flushed connections (2 + 4 + 2 + 2)"
cleanup_ns

# --- direct routing --------------------------------------------------------------
topo_direct flushdr
direct_rs
probe_serve "${RS[1]}" 80 dr
for ns in "$CL" "${RS[1]}"; do count_tcp "$ns"; done
adm_ok "$LB" -A -t $VIP:80 -s rr
adm_ok "$LB" -a -t $VIP:80 -r ${RIP[1]}:80 -g
probe_hold "$CL" $VIP 80 2 dr
for ns in "$CL" "${RS[1]}"; do reset_counts "$ns"; done
n=$(flush -t $VIP:80 -r ${RIP[1]}:80)
assert_eq "$n" 2 "flushed count, DR"
sleep 1
log "DR client: $(counts "$CL"); rs: $(counts "${RS[1]}")"
assert_eq "$(counts "$CL")" "rst_in=2 ack_out=0" "DR client: exact resets"
assert_eq "$(counts "${RS[1]}")" "rst_in=2 ack_out=0" "DR server: exact resets"
assert_eq "$(log_resets dr)" 2 "DR: the server's application saw the resets"
assert_eq "$(probe_results dr | summary)" "dr:reset=2" "DR client's view"
pass "flush: NAT v4/v6, DR and UDP; exact resets at both ends"
