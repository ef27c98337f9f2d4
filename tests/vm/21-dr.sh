#!/bin/bash
# DR (gatewaying, -g): the director forwards the unchanged packet to the
# real server's MAC; the real server holds the VIP on lo (arp_ignore=1,
# arp_announce=2) and answers the client directly, not via the director.
# Topology as in the kernel's selftest ipvs.sh (see topo_direct in lib.sh).
. "$(dirname "$0")/../lib.sh"

adm_init rr
mk_test_tmp
topo_direct dr
rs=${RS[1]}

# Real server: VIP on lo, never answer ARP for it, no reverse-path check
# (requests arrive on r0, replies leave via f0).
nsysctl "$rs" net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2 \
  net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
  net.ipv4.conf.r0.rp_filter=0 net.ipv4.conf.f0.rp_filter=0
ip -n "$rs" addr add $VIP/32 dev lo

adm_ok "$LB" -A -t $VIP:8080 -s rr
adm_ok "$LB" -a -t $VIP:8080 -r ${RIP[1]}:8080 -g -w 1
check_transfer "$CL" "$rs" $VIP 8080 8080 32 "DR"
check_transfer "$CL" "$rs" $VIP 8080 8080 102400 "DR"

# Replies bypass the director: during a transfer the real server transmits
# its ACKs on f0 (towards the client), the director sends nothing on d0.
txp() { ip netns exec "$1" cat "/sys/class/net/$2/statistics/tx_packets"; }
lb0=$(txp "$LB" d0) rs0=$(txp "$rs" f0)
check_transfer "$CL" "$rs" $VIP 8080 8080 102400 "DR (direct return)"
lb_tx=$(( $(txp "$LB" d0) - lb0 )) rs_tx=$(( $(txp "$rs" f0) - rs0 ))
log "packets sent towards the client: director d0 $lb_tx, real server f0 $rs_tx"
[ "$rs_tx" -ge 10 ] || fail "the real server sent only $rs_tx packets on its direct link"
[ "$lb_tx" -le 3 ] || fail "the director sent $lb_tx packets towards the client: replies not direct"

# UDP through DR: the real server answers from the VIP (its socket bound to
# it: one bound to the wildcard address would answer from its own address,
# which the client drops).
serve_udp_on "$rs" $VIP 53 rs1
adm_ok "$LB" -A -u $VIP:53 -s rr
adm_ok "$LB" -a -u $VIP:53 -r ${RIP[1]}:53 -g -w 1
expect_balance "$CL" udp $VIP 53 3 "rs1:3" "UDP through DR"
lb0=$(txp "$LB" d0)
expect_balance "$CL" udp $VIP 53 3 "rs1:3" "UDP through DR (direct return)"
[ $(( $(txp "$LB" d0) - lb0 )) -le 1 ] || fail "the director sent UDP answers towards the client"
pass "DR forwarding intact (TCP and UDP), replies direct"
