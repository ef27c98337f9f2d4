#!/bin/bash
# keepalived (Debian's 2.2.7, checker only) manages a NAT virtual server
# with TCP_CHECK health checks, IPv4 and IPv6, on rvs loaded with
# ipvs_compat=1 (the rvs pass) and on the kernel's IPVS (the IPVS pass):
#  - at start it adds the services and the three real servers, and the
#    traffic is balanced over them;
#  - a real server whose port stops answering leaves the pool; one with
#    inhibit_on_failure stays with weight 0 instead; neither gets traffic;
#  - a server that answers again comes back;
#  - on SIGTERM keepalived removes what it made.
# vm-timeout: 900
. "$(dirname "$0")/../lib.sh"

command -v keepalived >/dev/null || fail "keepalived not installed (qemu/install-deps installs it)"
ipvs_clients
adm_init rr
mk_test_tmp
topo_nat ka 3
topo_nat_ipv6
ipv() { adm "$LB" "$@"; }

declare -A srv
start_rs() { serve_name_bg "${RS[$1]}" tcp 80 "rs$1"; srv[$1]=$!; wait_listen "${RS[$1]}" tcp 80; }
stop_rs() { kill "${srv[$1]}" 2>/dev/null; wait "${srv[$1]}" 2>/dev/null; }
for i in 1 2 3; do start_rs "$i"; done

check() {
  cat <<CHK
        TCP_CHECK {
            connect_port 80
            connect_timeout 1
            retry 1
            delay_before_retry 1
        }
CHK
}
cat >"$TEST_TMP/keepalived.conf" <<CONF
global_defs {
    router_id rvs_test
}
virtual_server $VIP 80 {
    delay_loop 1
    lb_algo rr
    lb_kind NAT
    protocol TCP
    real_server ${RIP[1]} 80 {
        weight 1
$(check)
    }
    real_server ${RIP[2]} 80 {
        weight 1
$(check)
    }
    real_server ${RIP[3]} 80 {
        weight 1
        inhibit_on_failure
$(check)
    }
}
virtual_server $VIP6 80 {
    delay_loop 1
    lb_algo rr
    lb_kind NAT
    protocol TCP
    real_server 2001:db8:1::1 80 {
        weight 2
$(check)
    }
}
CONF
ip netns exec "$LB" keepalived -n -l -D -C -f "$TEST_TMP/keepalived.conf" \
  -p "$TEST_TMP/keepalived.pid" -c "$TEST_TMP/checkers.pid" >"$TEST_TMP/keepalived.log" 2>&1 &
ka=$!
bg_track $ka
at_exit "kill $ka 2>/dev/null; sed 's/^/#   keepalived: /' '$TEST_TMP/keepalived.log' | tail -40 >&2"

norm() { sed -e 's/[[:space:]]\+/ /g' -e 's/ $//'; }
# The table without the header and connection counts: "svc|dest weight".
table() { ipv -L -n | tail -n +4 | awk '$1 == "->" {print " -> " $2 " " $3 " " $4; next} {print}' | norm; }
# wait_table WANT WHAT: until the table is WANT (30 s at most).
wait_table() {
  local got i
  for i in $(seq 1 60); do
    got=$(table)
    [ "$got" = "$1" ] && { log "$2: after $((i / 2)) s"; return 0; }
    sleep 0.5
  done
  log "table now:"; ipv -L -n | sed 's/^/#   /' >&2
  fail "$2: expected
$1
got
$got"
}

all="TCP 10.0.100.1:80 rr
 -> 10.0.1.1:80 Masq 1
 -> 10.0.1.2:80 Masq 1
 -> 10.0.1.3:80 Masq 1
TCP [2001:db8:100::1]:80 rr
 -> [2001:db8:1::1]:80 Masq 2"
wait_table "$all" "keepalived made both services and four real servers"
expect_balance "$CL" tcp $VIP 80 30 "rs1:10 rs2:10 rs3:10" "the pool keepalived made"
got=$(ip netns exec "$CL" socat -T 5 - "TCP6:[$VIP6]:80" </dev/null 2>&1)
assert_eq "$got" "rs1" "IPv6 service through keepalived's real server"

# rs1 stops answering: removed. rs3 too: inhibit_on_failure, weight 0.
stop_rs 1
stop_rs 3
# (rs1 is also the IPv6 service's only server, which goes with it.)
wait_table "TCP 10.0.100.1:80 rr
 -> 10.0.1.2:80 Masq 1
 -> 10.0.1.3:80 Masq 0
TCP [2001:db8:100::1]:80 rr" "failed rs1 removed (IPv4 and IPv6), rs3 inhibited (weight 0)"
expect_balance "$CL" tcp $VIP 80 10 "rs2:10" "only the healthy server" 21000

# Both answer again: both back with their weights.
start_rs 1
start_rs 3
wait_table "$all" "recovered servers back in the pool"
expect_balance "$CL" tcp $VIP 80 30 "rs1:10 rs2:10 rs3:10" "the recovered pool" 22000

# Shutdown: keepalived removes its services.
kill -TERM "$ka"
wait "$ka" 2>/dev/null
wait_table "" "keepalived's shutdown removed what it made"
pass "keepalived drove $( [ "${RVS_COMPAT:-0}" = 1 ] && echo "rvs (ipvs_compat=1)" || echo IPVS ): start-up, health checks, inhibit_on_failure, recovery, shutdown, IPv4 and IPv6"
