#!/bin/bash
# All-ports services (port 0, "-t VIP:0 -p"): one persistent service takes
# every port of its address that has no service of its own; a client's
# connections to any port reach one server, each on the port it asked for;
# one template (virtual port 0) per client. A service of an exact port
# wins over it. Without -p port 0 is refused. A persistent firewall-mark
# service keeps the packet's port too, even where its real server names one
# (as IPVS's ip_vs_sched_persist).
. "$(dirname "$0")/../lib.sh"
adm_init rr
topo_nat allp 2
ip -n "$CL" addr add 10.0.0.3/24 dev c0
for i in 1 2; do
  for p in 80 443 8080; do serve_name_bg "${RS[$i]}" tcp $p "rs$i-$p"; done
  serve_name_bg "${RS[$i]}" udp 53 "rs$i-53"
done
for i in 1 2; do for p in 80 443 8080; do wait_listen "${RS[$i]}" tcp $p; done; done

# names FROM PROTO PORT N: N connections (or datagrams from new ports) from
# source address FROM to VIP:PORT, answers counted.
names() {
  timeout 60 ip netns exec "$CL" python3 -c '
import socket, sys
src, proto, port, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
for _ in range(n):
    try:
        if proto == "tcp":
            s = socket.create_connection((sys.argv[5], port), timeout=3, source_address=(src, 0))
            data = s.recv(64)
        else:
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.settimeout(3)
            s.bind((src, 0))
            s.sendto(b"who", (sys.argv[5], port))
            data = s.recv(64)
        s.close()
        print(data.decode().strip() or "ERR:empty")
    except OSError as e:
        print("ERR:%s" % type(e).__name__)
' "$1" "$2" "$3" "$4" "$VIP" | count_names
}

out=$(adm "$LB" -A -t $VIP:0 -s rr 2>&1) && fail "port 0 without -p was accepted"
log "port 0 without -p refused: $out"
adm_ok "$LB" -A -t $VIP:0 -s rr -p 60
adm_ok "$LB" -A -u $VIP:0 -s rr -p 60
for i in 1 2; do
  adm_ok "$LB" -a -t $VIP:0 -r ${RIP[$i]} -m -w 1
  adm_ok "$LB" -a -u $VIP:0 -r ${RIP[$i]} -m -w 1
done
list=$(adm "$LB" -L -n)
printf '%s\n' "$list" | sed 's/^/#   /' >&2
printf '%s\n' "$list" | grep -qx "TCP  $VIP:0 rr persistent 60" || fail "-L -n lacks 'TCP  $VIP:0 rr persistent 60'"
n=$(printf '%s\n' "$list" | grep -c -- "-> 10.0.1.[12]:0 *Masq")
assert_eq "$n" 4 "real servers of the all-ports services listed with port 0"

# Client 10.0.0.2: every port to one server, each on its own port.
a=$(names 10.0.0.2 tcp 80 2); log "10.0.0.2 -> VIP:80: $a"
case "$a" in rs[12]-80:2) ;; *) fail "all-ports service: VIP:80 from 10.0.0.2 -> $a" ;; esac
first=${a%%-*}
assert_eq "$(names 10.0.0.2 tcp 443 2)" "$first-443:2" "10.0.0.2 -> VIP:443 sticks to $first on port 443"
assert_eq "$(names 10.0.0.2 tcp 8080 2)" "$first-8080:2" "10.0.0.2 -> VIP:8080 sticks to $first on port 8080"
# Client 10.0.0.3: its own template, the other server (rr).
b=$(names 10.0.0.3 tcp 443 2); log "10.0.0.3 -> VIP:443: $b"
case "$b" in rs[12]-443:2) ;; *) fail "all-ports service: VIP:443 from 10.0.0.3 -> $b" ;; esac
[ "${b%%-*}" != "$first" ] || fail "rr gave both clients $first"
assert_eq "$(names 10.0.0.3 tcp 80 2)" "${b%%-*}-80:2" "10.0.0.3 -> VIP:80 sticks to ${b%%-*}"
# UDP: the same, per protocol.
u=$(names 10.0.0.2 udp 53 3); log "10.0.0.2 -> udp VIP:53: $u"
case "$u" in rs[12]-53:3) ;; *) fail "all-ports UDP service: $u" ;; esac
# One template per client and protocol, with virtual port 0.
conns=$(adm "$LB" -L -n -c)
printf '%s\n' "$conns" | sed 's/^/#   /' >&2
tpl=$(printf '%s\n' "$conns" | awk -v v="$VIP:0" '$5 == v && $4 ~ /:0$/' | wc -l)
assert_eq "$tpl" 3 "templates (client port 0, VIP:0): two TCP clients and one UDP client"

# A service of its own port wins over the all-ports one.
other=rs1; [ "$first" = rs1 ] && other=rs2
adm_ok "$LB" -A -t $VIP:8080 -s rr
adm_ok "$LB" -a -t $VIP:8080 -r ${RIP[${other#rs}]}:8080 -m
assert_eq "$(names 10.0.0.2 tcp 8080 2)" "$other-8080:2" "VIP:8080's own service before the all-ports one"
assert_eq "$(names 10.0.0.2 tcp 443 1)" "$first-443:1" "other ports still through the all-ports service"
adm_ok "$LB" -D -t $VIP:8080
adm_ok "$LB" -D -t $VIP:0
adm_ok "$LB" -D -u $VIP:0
got=$(lb_names "$CL" tcp $VIP 443 1 | count_names); log "after deleting it, VIP:443 -> $got"
case "$got" in *rs*) fail "VIP:443 still balanced after the all-ports service went: $got" ;; esac

# A persistent mark service whose real servers name port 8080: each
# connection keeps the packet's port (80, 443), as in IPVS.
ip netns exec "$LB" nft -f - <<NFT || fail "nft rules"
table ip allpfwm {
  chain pre {
    type filter hook prerouting priority mangle; policy accept;
    ip daddr $VIP tcp dport { 80, 443 } meta mark set 7
  }
}
NFT
adm_ok "$LB" -A -f 7 -s rr -p 60
for i in 1 2; do adm_ok "$LB" -a -f 7 -r ${RIP[$i]}:8080 -m -w 1; done
a=$(names 10.0.0.2 tcp 80 2); log "persistent -f 7 (servers on :8080), VIP:80 -> $a"
case "$a" in rs[12]-80:2) ;; *) fail "persistent mark service did not keep port 80: $a" ;; esac
assert_eq "$(names 10.0.0.2 tcp 443 2)" "${a%%-*}-443:2" "persistent mark service keeps port 443, same server"
# Without -p the server's port is used.
adm_ok "$LB" -E -f 7 -s rr
got=$(names 10.0.0.3 tcp 80 2); log "non-persistent -f 7, VIP:80 -> $got"
case "$got" in rs[12]-8080:2 | "rs1-8080:1 rs2-8080:1") ;; *) fail "non-persistent mark service did not use the servers' port 8080: $got" ;; esac
pass "all-ports services: every port, one server per client, ports kept, exact services first"
