#!/bin/bash
# The expire_nodest_conn, expire_quiescent_template and conn_reuse_mode
# settings (IPVS's sysctls of the same names; rvsadm --set-option), each value observed
# with real traffic:
#  - expire_nodest_conn=0: the datagrams of a UDP flow whose real server
#    was deleted are dropped until the flow times out;
#    =1: its next datagram ends it and is scheduled to a remaining server,
#    and the deleted server's connections leave the table by themselves.
#  - expire_quiescent_template=0: a persistent client keeps its quiesced
#    (weight 0) server; =1: its template expires and it moves on.
#  - whatever expire_nodest_conn says, a TCP client that reuses the port
#    of a finished connection (TIME_WAIT on the director) whose server was
#    deleted since gets a new connection to a remaining server (IPVS's
#    conn_reuse_mode 1), instead of its SYNs being dropped.
#  - conn_reuse_mode=0: such a SYN follows the old entry (to a quiesced
#    server); =1: it is scheduled afresh.
. "$(dirname "$0")/../lib.sh"
adm_init rr
topo_nat exp 2
for i in 1 2; do
  serve_name_bg "${RS[$i]}" udp 53 rs$i; serve_name_bg "${RS[$i]}" udp 54 rs$i
  serve_name_bg "${RS[$i]}" tcp 80 rs$i
done
for i in 1 2; do
  wait_listen "${RS[$i]}" udp 53; wait_listen "${RS[$i]}" udp 54; wait_listen "${RS[$i]}" tcp 80
done

# ask PORT SRCPORT: one datagram to VIP:PORT from SRCPORT; prints the answer.
ask() { lb_names "$CL" udp $VIP "$1" 1 "$2" 0; }
# ask_tcp SRCPORT: one TCP connection to VIP:80 from SRCPORT; prints the
# answer. The server closes first, so the client port is free at once.
ask_tcp() { tcp_from "$CL" $VIP "$1"; }
# conns_to ADDR: connection entries toward ADDR in the listing.
conns_to() { adm "$LB" -L -n -c | grep -c " $1:"; }

set_opt expire_nodest_conn 0
set_opt expire_quiescent_template 0

# --- expire_nodest_conn -----------------------------------------------
adm_ok "$LB" -A -u $VIP:53 -s rr
adm_ok "$LB" -a -u $VIP:53 -r ${RIP[1]}:53 -m
adm_ok "$LB" -a -u $VIP:53 -r ${RIP[2]}:53 -m
first=$(ask 53 33000); log "flow 33000 -> $first"
case "$first" in rs1) gone=1 other=2 ;; rs2) gone=2 other=1 ;; *) fail "no answer: $first" ;; esac
adm_ok "$LB" -d -u $VIP:53 -r ${RIP[$gone]}:53
got=$(ask 53 33000); log "expire_nodest_conn=0, server deleted, same flow -> $got"
assert_eq "$got" "ERR:timeout" "a deleted server's flow is dropped"
set_opt expire_nodest_conn 1
got=$(ask 53 33000); log "expire_nodest_conn=1, same flow -> $got"
assert_eq "$got" "rs$other" "the flow of a deleted server is rescheduled"
# A second flow on the remaining server, then delete that one too: its
# entries leave the table without any further packet.
ask 53 33001 >/dev/null
n=$(conns_to ${RIP[$other]}); log "entries toward ${RIP[$other]}: $n"
[ "$n" -ge 1 ] || fail "no connection entries toward ${RIP[$other]}"
adm_ok "$LB" -a -u $VIP:53 -r ${RIP[$gone]}:53 -m
adm_ok "$LB" -d -u $VIP:53 -r ${RIP[$other]}:53
sleep 3
n=$(conns_to ${RIP[$other]}); log "entries toward the deleted ${RIP[$other]} after 3 s: $n"
assert_eq "$n" 0 "a deleted server's connections are flushed"

# --- expire_quiescent_template -----------------------------------------
adm_ok "$LB" -A -u $VIP:54 -s rr -p 120
adm_ok "$LB" -a -u $VIP:54 -r ${RIP[1]}:54 -m
adm_ok "$LB" -a -u $VIP:54 -r ${RIP[2]}:54 -m
first=$(ask 54 34000); log "persistent client, first flow -> $first"
case "$first" in rs1) q=1 other=2 ;; rs2) q=2 other=1 ;; *) fail "no answer: $first" ;; esac
adm_ok "$LB" -e -u $VIP:54 -r ${RIP[$q]}:54 -m -w 0
got=$(ask 54 34001); log "expire_quiescent_template=0, server quiesced, new flow -> $got"
assert_eq "$got" "rs$q" "a persistent client keeps its quiesced server"
set_opt expire_quiescent_template 1
got=$(ask 54 34002); log "expire_quiescent_template=1, new flow -> $got"
assert_eq "$got" "rs$other" "the template of a quiesced server expires"
got=$(ask 54 34003); log "and the next new flow -> $got"
assert_eq "$got" "rs$other" "the client sticks to its new server"

# --- a reused client port after its server was deleted -------------------
set_opt expire_nodest_conn 0
adm_ok "$LB" -A -t $VIP:80 -s rr
adm_ok "$LB" -a -t $VIP:80 -r ${RIP[1]}:80 -m
adm_ok "$LB" -a -t $VIP:80 -r ${RIP[2]}:80 -m
first=$(ask_tcp 35000); log "tcp from port 35000 -> $first"
case "$first" in rs1) gone=1 other=2 ;; rs2) gone=2 other=1 ;; *) fail "no answer: $first" ;; esac
state=$(adm "$LB" -L -n -c | awk '/:35000 / {print $3}')
log "its entry on the director: $state"
adm_ok "$LB" -d -t $VIP:80 -r ${RIP[$gone]}:80
got=$(ask_tcp 35000); log "same client port after deleting its server -> $got"
assert_eq "$got" "rs$other" "a reused client port after its server was deleted"

# --- conn_reuse_mode ------------------------------------------------------
# A client port reused after its connection ended, its server quiesced
# (weight 0) since: with conn_reuse_mode 0 the SYN follows the old entry
# to the quiesced server; with 1 (the default) it is scheduled afresh.
adm_ok "$LB" -a -t $VIP:80 -r ${RIP[$gone]}:80 -m
first=$(ask_tcp 36000); log "tcp from port 36000 -> $first"
case "$first" in rs1) q=1 other=2 ;; rs2) q=2 other=1 ;; *) fail "no answer: $first" ;; esac
adm_ok "$LB" -e -t $VIP:80 -r ${RIP[$q]}:80 -m -w 0
set_opt conn_reuse_mode 0
got=$(ask_tcp 36000); log "conn_reuse_mode=0, server quiesced, same client port -> $got"
assert_eq "$got" "rs$q" "with conn_reuse_mode 0 a reused port follows its old entry"
set_opt conn_reuse_mode 1
got=$(ask_tcp 36000); log "conn_reuse_mode=1, same client port again -> $got"
assert_eq "$got" "rs$other" "with conn_reuse_mode 1 a reused port is scheduled afresh"
pass "expire_nodest_conn, expire_quiescent_template and conn_reuse_mode take effect; a reused port is rescheduled"
