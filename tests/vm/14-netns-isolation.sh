#!/bin/bash
# Two directors in two namespaces, with identical addressing and the same
# VIP:port, each with its own service and servers: each namespace lists
# only its own services and balances only to its own servers; deleting
# one namespace's service, or the namespace, leaves the other working.
. "$(dirname "$0")/../lib.sh"

adm_init rr wrr
norm() { sed -e 's/[[:space:]]\+/ /g' -e 's/ $//'; }
body() { adm "$1" -L -n | tail -n +4 | norm; }

topo_nat a 2
A_CL=$CL A_LB=$LB
for i in 1 2; do serve_name_bg "${RS[$i]}" tcp 80 a$i; done
for i in 1 2; do wait_listen "${RS[$i]}" tcp 80; done
topo_nat b 2
B_CL=$CL B_LB=$LB
for i in 1 2; do serve_name_bg "${RS[$i]}" tcp 80 b$i; done
for i in 1 2; do wait_listen "${RS[$i]}" tcp 80; done

adm_ok "$A_LB" -A -t $VIP:80 -s rr
adm_ok "$A_LB" -a -t $VIP:80 -r 10.0.1.1:80 -m -w 1
adm_ok "$A_LB" -a -t $VIP:80 -r 10.0.1.2:80 -m -w 1
adm_ok "$B_LB" -A -t $VIP:80 -s wrr
adm_ok "$B_LB" -a -t $VIP:80 -r 10.0.1.1:80 -m -w 2
adm_ok "$B_LB" -a -t $VIP:80 -r 10.0.1.2:80 -m -w 1
adm_ok "$B_LB" -A -u 10.0.100.2:81 -s rr

assert_eq "$(body "$A_LB")" "TCP $VIP:80 rr
 -> 10.0.1.1:80 Masq 1 0 0
 -> 10.0.1.2:80 Masq 1 0 0" "listing in namespace a"
assert_eq "$(body "$B_LB")" "TCP $VIP:80 wrr
 -> 10.0.1.1:80 Masq 2 0 0
 -> 10.0.1.2:80 Masq 1 0 0
UDP 10.0.100.2:81 rr" "listing in namespace b"
root=$("$ADM" -L -n 2>&1) || fail "$ADM -L -n in the initial namespace failed: $root"
case "$root" in *10.0.100.*) fail "the initial namespace lists a test namespace's service:
$root" ;; esac
log "listings are per namespace"

expect_balance "$A_CL" tcp $VIP 80 10 "a1:5 a2:5" "namespace a, rr"
expect_balance "$B_CL" tcp $VIP 80 9 "b1:6 b2:3" "namespace b, wrr 2:1"

adm_ok "$B_LB" -D -t $VIP:80
assert_eq "$(body "$A_LB" | head -1)" "TCP $VIP:80 rr" "a's service after b's -D"
expect_balance "$A_CL" tcp $VIP 80 4 "a1:2 a2:2" "namespace a after b's service was deleted"
got=$(lb_names "$B_CL" tcp $VIP 80 2 | count_names)
case "$got" in *[ab][12]*) fail "namespace b still balanced after -D: $got" ;; esac

# Deleting b's director namespace (with a service left in it) does not
# disturb a.
ip netns del "$B_LB" || fail "ip netns del b's director"
sleep 1
expect_balance "$A_CL" tcp $VIP 80 4 "a1:2 a2:2" "namespace a after b's director namespace was deleted"
pass "services, listings and balancing are per namespace"
