#!/bin/bash
# Firewall-mark services (-f): nftables marks TCP to VIP1:80 and VIP2:8080
# with 1; one service "-f 1" balances both, its real servers (port 0) keep
# each packet's destination port, and it is found before an address
# service for the same VIP:port (as IPVS's ip_vs_service_find). Unmarked
# traffic is not balanced. With -p the template is keyed by client and
# mark, so one client sticks to one server across both VIPs and ports.
. "$(dirname "$0")/../lib.sh"
adm_init rr
command -v nft >/dev/null || fail "nft (nftables) not installed (qemu/install-deps installs it)"
topo_nat fwm 2
VIP2=10.0.100.2
ip -n "$LB" addr add $VIP2/32 dev lo
ip -n "$CL" route add $VIP2/32 via 10.0.0.1 2>/dev/null
for i in 1 2; do
  serve_name_bg "${RS[$i]}" tcp 80 rs$i
  serve_name_bg "${RS[$i]}" tcp 8080 rs$i-8080
  serve_name_bg "${RS[$i]}" tcp 81 rs$i-81
done
for i in 1 2; do for p in 80 8080 81; do wait_listen "${RS[$i]}" tcp $p; done; done
ip netns exec "$LB" nft -f - <<NFT || fail "nft rules"
table ip rvsfwm {
  chain pre {
    type filter hook prerouting priority mangle; policy accept;
    ip daddr $VIP tcp dport 80 meta mark set 1
    ip daddr $VIP2 tcp dport 8080 meta mark set 1
  }
}
NFT

# An address service for VIP:80 with only rs1: marked packets must not
# use it, the mark's service comes first.
adm_ok "$LB" -A -t $VIP:80 -s rr
adm_ok "$LB" -a -t $VIP:80 -r ${RIP[1]}:80 -m -w 1
adm_ok "$LB" -A -f 1 -s rr
for i in 1 2; do adm_ok "$LB" -a -f 1 -r ${RIP[$i]} -m -w 1; done
list=$(adm "$LB" -L -n)
printf '%s\n' "$list" | sed 's/^/#   /' >&2
printf '%s\n' "$list" | grep -qx "FWM  1 rr" || fail "-L -n lacks 'FWM  1 rr'"
n=$(printf '%s\n' "$list" | grep -c -- "-> 10.0.1.[12]:0 *Masq")
assert_eq "$n" 2 "real servers of the mark listed with port 0"

expect_balance "$CL" tcp $VIP 80 6 "rs1:3 rs2:3" "marked VIP:80 (fwmark service before VIP:80's)"
expect_balance "$CL" tcp $VIP2 8080 6 "rs1-8080:3 rs2-8080:3" "marked VIP2:8080, port kept"
# VIP:81 is not marked and has no service: not balanced.
got=$(lb_names "$CL" tcp $VIP 81 2 | count_names); log "unmarked VIP:81 -> $got"
case "$got" in *rs*) fail "unmarked traffic was balanced: $got" ;; esac
# Without the mark, VIP:80 falls back to its address service (rs1 only).
ip netns exec "$LB" nft flush chain ip rvsfwm pre
expect_balance "$CL" tcp $VIP 80 4 "rs1:4" "VIP:80 unmarked uses its address service"

# Persistence: one client, both VIPs and ports, one server.
ip netns exec "$LB" nft -f - <<NFT || fail "nft rules"
add rule ip rvsfwm pre ip daddr $VIP tcp dport 80 meta mark set 1
add rule ip rvsfwm pre ip daddr $VIP2 tcp dport 8080 meta mark set 1
NFT
adm_ok "$LB" -E -f 1 -s rr -p 60
a=$(lb_names "$CL" tcp $VIP 80 4 | count_names)
b=$(lb_names "$CL" tcp $VIP2 8080 4 | count_names)
log "persistent -f 1: VIP:80 -> $a, VIP2:8080 -> $b"
case "$a" in rs[12]:4) ;; *) fail "persistence by mark broken on VIP:80: $a" ;; esac
assert_eq "$b" "${a%%:*}-8080:4" "one client sticks to one server across the mark's VIPs"
line=$(adm "$LB" -L -n | grep "^FWM")
assert_eq "$line" "FWM  1 rr persistent 60" "listing of the persistent mark service"
tpl=$(adm "$LB" -L -n -c | awk '$1 == "IP" && $3 == "ASSURED"' | wc -l)
assert_eq "$tpl" 1 "one persistence template (IP, ASSURED) for the client and mark"

adm_ok "$LB" -D -f 1
adm "$LB" -L -n | grep -q "^FWM" && fail "-D -f 1 left the service"
if [ "$ADM" = rvsadm ]; then
  out=$(adm "$LB" -A -f 0 -s rr 2>&1) && fail "-f 0 accepted"
  case "$out" in *"invalid fwmark value '0'"*) ;; *) fail "unexpected message for -f 0: $out" ;; esac
  out=$(adm "$LB" -a -f 7 -r ${RIP[1]} -m 2>&1) && fail "server added to a missing mark service"
  log "missing mark service: $out"
fi
pass "one fwmark service balances two marked VIPs/ports, keeps ports, comes first, persists by mark"
