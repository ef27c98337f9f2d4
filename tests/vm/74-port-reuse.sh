#!/bin/bash
# A client that reuses the port of a finished connection (TIME_WAIT on the
# director) whose real server has since been quiesced (weight 0) or
# deleted gets a new connection to another server at once, with the
# conntrack setting off and on (conn_reuse_mode 1, the default):
#  - the answer comes from the other server, and the client sent one SYN
#    for it (no SYN dropped, no retransmission a second later);
#  - with conntrack=1 and an nftables masquerade toward the real servers,
#    the reused connection's conntrack entry expects its replies from the
#    new server (an nft `ct reply ip saddr` match counts them) and the
#    masquerade applies to it (the server sees the director's address).
# On the kernel's IPVS the same steps run; the answer must come from the
# other server too, and the SYNs the client needed are logged.
. "$(dirname "$0")/../lib.sh"
adm_init rr
topo_nat reuse 2
LBADDR=10.0.1.254
# Answers "NAME@PEER" and closes first, so the client's port is free at
# once while the director's entry is in TIME_WAIT.
for i in 1 2; do
  ip netns exec "${RS[$i]}" python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 80)); s.listen(64)
while True:
    c, peer = s.accept()
    try:
        c.sendall(("%s@%s\n" % (sys.argv[1], peer[0])).encode())
    except OSError:
        pass
    c.close()
' rs$i </dev/null >/dev/null 2>&1 &
  bg_track $!
done
for i in 1 2; do wait_listen "${RS[$i]}" tcp 80; done

ip netns exec "$LB" nft -f - <<NFT || fail "nft setup (director)"
table ip reuse {
  counter reply1 {}
  counter reply2 {}
  chain post {
    type nat hook postrouting priority srcnat; policy accept;
    oifname "br0" masquerade
  }
  chain seen {
    type filter hook postrouting priority 300; policy accept;
    ct original ip daddr $VIP ct reply ip saddr ${RIP[1]} counter name reply1
    ct original ip daddr $VIP ct reply ip saddr ${RIP[2]} counter name reply2
  }
}
NFT
ip netns exec "$CL" nft -f - <<NFT || fail "nft setup (client)"
table ip reuse {
  counter syns {}
  chain out {
    type filter hook output priority 0; policy accept;
    tcp dport 80 tcp flags & (syn | ack) == syn counter name syns
  }
}
NFT
syns() { nft_counter "$CL" ip reuse syns; }
replies_from() { nft_counter "$LB" ip reuse "reply$1"; }

# ask SRCPORT: one connection to VIP:80 from SRCPORT; its answer.
ask() { tcp_from "$CL" $VIP "$1"; }

adm_ok "$LB" -A -t $VIP:80 -s rr
for i in 1 2; do adm_ok "$LB" -a -t $VIP:80 -r ${RIP[$i]}:80 -m; done

port=41000
for ct in 0 1; do
  set_opt conntrack $ct
  for how in quiesce delete; do
    port=$((port + 1))
    first=$(ask $port); log "conntrack=$ct $how: port $port -> $first"
    case $first in rs1@*) old=1 new=2 ;; rs2@*) old=2 new=1 ;; *) fail "conntrack=$ct: no answer: $first" ;; esac
    state=$(adm "$LB" -L -n -c | awk -v p=":$port " 'index($0, p) {print $3}')
    log "  its entry on the director: $state"
    case $how in
      quiesce) adm_ok "$LB" -e -t $VIP:80 -r ${RIP[$old]}:80 -m -w 0 ;;
      delete) adm_ok "$LB" -d -t $VIP:80 -r ${RIP[$old]}:80 ;;
    esac
    s0=$(syns) r0=$(replies_from $new)
    got=$(ask $port); n=$(( $(syns) - s0 ))
    log "  same port after its server's $how -> $got, $n SYN(s) sent"
    # The real server's peer: the director with conntrack (masquerade),
    # the client without.
    peer=$([ $ct = 1 ] && echo $LBADDR || echo $CIP)
    assert_eq "$got" "rs$new@$peer" "conntrack=$ct, old server ${how}d: the reused port's answer"
    if [ "$ADM" = rvsadm ]; then
      assert_eq "$n" 1 "conntrack=$ct, old server ${how}d: SYNs the client sent for the reused port"
    fi
    if [ $ct = 1 ]; then
      [ "$(replies_from $new)" -gt "$r0" ] ||
        fail "conntrack=1, old server ${how}d: no conntrack entry expecting replies from rs$new"
    fi
    case $how in
      quiesce) adm_ok "$LB" -e -t $VIP:80 -r ${RIP[$old]}:80 -m -w 1 ;;
      delete) adm_ok "$LB" -a -t $VIP:80 -r ${RIP[$old]}:80 -m ;;
    esac
  done
done
pass "a reused client port goes to another server at once, conntrack off and on, its server quiesced or deleted"
