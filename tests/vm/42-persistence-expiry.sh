#!/bin/bash
# Persistence templates expire: once a client's last connection is gone
# and its template's -p timeout has passed, the client is scheduled
# afresh (rr: the other server); before that it sticks. UDP, so entries
# end on a short timeout (--set 0 0 1) instead of TCP's 2-minute TIME_WAIT
# (a template lives as long as it controls a connection, as in IPVS; the
# template's 15 s outlast the entries' 1 s, so it is not kept for them).
. "$(dirname "$0")/../lib.sh"
adm_init rr
topo_nat pexp 2
for i in 1 2; do serve_name_bg "${RS[$i]}" udp 53 rs$i; done
for i in 1 2; do wait_listen "${RS[$i]}" udp 53; done
adm_ok "$LB" --set 0 0 1
adm_ok "$LB" -A -u $VIP:53 -s rr -p 15
for i in 1 2; do adm_ok "$LB" -a -u $VIP:53 -r ${RIP[$i]}:53 -m -w 1; done

# one: the server answering one datagram from a new client port.
port=40000
one() { port=$((port + 1)); lb_names "$CL" udp $VIP 53 1 $port | count_names; }
first=$(one); log "first datagram -> $first"
case "$first" in rs[12]:1) ;; *) fail "no answer: $first" ;; esac
other=rs1; [ "$first" = rs1:1 ] && other=rs2
# Within the timeout, new flows (three source ports, one process: well
# inside 15 s even on a slow debug kernel) stick.
port=$((port + 10))
assert_eq "$(lb_names "$CL" udp $VIP 53 3 $port | count_names)" "${first%:1}:3" "new flows within the persistence timeout"
port=$((port + 10))
tpl=$(adm "$LB" -L -n -c | awk -v v="$VIP:53" '$5 == v && $4 ~ /:0$/' | wc -l)
assert_eq "$tpl" 1 "one template for the client"
# Idle past the UDP timeout (1 s) and the template's (15 s), plus the
# collector's second: the template is gone and rr moves on. (IPVS gives
# a template whose timer fires while it still controls an entry 60 s
# more: up to 75 s are allowed.)
for _ in $(seq 1 75); do
  left=$(adm "$LB" -L -n -c | grep -c '^UDP' || true)
  [ "$left" = 0 ] && break
  sleep 1
done
[ "${left:-?}" = 0 ] || fail "entries left once the timeouts passed: $(adm "$LB" -L -n -c)"
assert_eq "$(one)" "$other:1" "after the template expired, the client is scheduled afresh"
pass "persistence templates expire after -p seconds without connections"
