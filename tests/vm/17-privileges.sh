#!/bin/bash
# Privileges and namespaces: who may configure and read which table.
#
# Test 31 covers uid 65534 and root without CAP_NET_ADMIN; this one covers
# user namespaces and what reads show across network namespaces:
#  - a director namespace owned by a user namespace ("a container"): root
#    of that user namespace configures it, and clients balance through it;
#    root of the initial user namespace sees and manages it too;
#  - root of a user namespace cannot configure or read the initial
#    namespace, nor a namespace owned by the initial user namespace (placed
#    there by nsenter, or after `ip netns exec X unshare -Ur`);
#  - an unprivileged user (uid 65534) with `unshare -Urn` manages its own
#    fresh namespace and sees only that;
#  - a non-owner without capabilities in the container's namespace gets
#    EPERM, also for reads;
#  - every read (GET_SERVICE dump and doit, GET_DEST, GET_CONN, GET_CONFIG)
#    shows only the caller's namespace, with identical addresses in two
#    namespaces.
# With RVS_ADM=ipvsadm the same script documents IPVS: its netlink family
# needs CAP_NET_ADMIN in the initial user namespace (GENL_ADMIN_PERM), so
# every user-namespace case is refused there and root configures the
# container's namespace instead (see Documentation/privileges.md).
. "$(dirname "$0")/../lib.sh"

adm_init rr wrr
mk_test_tmp
command -v unshare >/dev/null && command -v nsenter >/dev/null || fail "unshare/nsenter missing (util-linux)"
[ "$(cat /proc/sys/user/max_user_namespaces 2>/dev/null || echo 0)" -gt 0 ] || fail "user namespaces disabled (user.max_user_namespaces is 0)"

# The admin tool must be reachable by uid 65534 (the 9p root may hide it).
adm_bin=$(command -v "$ADM")
if ! setpriv --reuid 65534 --regid 65534 --clear-groups test -x "$adm_bin" 2>/dev/null; then
  chmod 755 "$TEST_TMP" && cp "$adm_bin" "$TEST_TMP/$ADM" && chmod 755 "$TEST_TMP/$ADM"
  adm_bin=$TEST_TMP/$ADM
fi
[ "$ADM" = rvsadm ] && uns_ok=1 || uns_ok=0

# The director's namespace is owned by a new user namespace, kept (like a
# container's) in $UNS; the other namespaces are plain `ip netns add` ones.
UNS=$TEST_TMP/userns
UNS_TAG=priv-lb
mkns() {
  local ns="$NS_PREFIX-$1"
  if [ "$1" = "$UNS_TAG" ]; then
    # (unshare --user=FILE --net=FILE cannot bind them here: EPERM.)
    mkdir -p /run/netns && touch "/run/netns/$ns" "$UNS" || fail "cannot create mount points"
    unshare -Urn sleep 60 </dev/null >/dev/null 2>&1 &
    local p=$! i
    for i in $(seq 1 100); do
      [ "$(readlink /proc/$p/ns/net)" != "$(readlink /proc/self/ns/net)" ] && break
      sleep 0.1
    done
    mount --bind "/proc/$p/ns/user" "$UNS" && mount --bind "/proc/$p/ns/net" "/run/netns/$ns" ||
      fail "cannot keep the user and network namespaces of unshare -Urn"
    kill "$p"; wait "$p" 2>/dev/null
  else
    ip netns add "$ns" || fail "ip netns add $ns"
  fi
  _created_ns+=("$ns")
  ip -n "$ns" link set lo up
  echo "$ns"
}
at_exit 'umount "$UNS" 2>/dev/null'

topo_nat priv 2
for i in 1 2; do serve_name_bg "${RS[$i]}" tcp 80 rs$i; done
for i in 1 2; do wait_listen "${RS[$i]}" tcp 80; done
newns X x

# uns CMD...: CMD as root of the container's user namespace, in its netns.
# uns_init CMD...: the same user, left in the initial network namespace.
uns() { nsenter --user="$UNS" --net="/run/netns/$LB" "$@"; }
uns_init() { nsenter --user="$UNS" "$@"; }
# Sanity: the container's root really lacks CAP_NET_ADMIN over init_net.
uns_init ip link add rvsprivdummy type dummy 2>/dev/null &&
  { ip link del rvsprivdummy; fail "the user namespace's root can change the initial namespace"; }

# expect_eperm WHAT CMD...: CMD must fail with a permission message.
expect_eperm() {
  local what=$1 rc err; shift
  "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err"; rc=$?
  err=$(tr '\n' ' ' <"$TEST_TMP/err")
  log "$what: exit $rc: ${err:-<no message>}"
  [ "$rc" != 0 ] || fail "$what: allowed: $(cat "$TEST_TMP/out")"
  grep -Eiq 'permi|not allowed|cap_net_admin' "$TEST_TMP/err" || fail "$what: not a permission error: $err"
}
# quiet_ok WHAT CMD...: CMD must succeed; its output is in $TEST_TMP/out.
quiet_ok() {
  local what=$1; shift
  "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err" || fail "$what failed: $(cat "$TEST_TMP/err")"
}
norm() { sed -e 's/[[:space:]]\+/ /g' -e 's/ $//'; }
# Listing body (services and servers, without the connection counters,
# which change as connections close) of "-L -n" output on stdin.
body() { tail -n +4 | norm | sed -E 's/^( -> [^ ]+ [^ ]+ [0-9]+) [0-9]+ [0-9]+$/\1/'; }
tab() { "$@" -L -n | body; }

# --- 1. The container's root configures its own namespace. ---------------
cfg=(-A -t $VIP:80 -s rr
  -a -t $VIP:80 -r ${RIP[1]}:80 -m -w 1
  -a -t $VIP:80 -r ${RIP[2]}:80 -m -w 1
  -E -t $VIP:80 -s wrr
  -e -t $VIP:80 -r ${RIP[2]}:80 -m -w 2
  -A -u $VIP:53 -s rr)
apply() { # apply RUNNER...: the configuration above, one command at a time.
  local -a c=("${cfg[@]}") one=(); local a
  for a in "${c[@]}" END; do
    if { [[ $a == -[AaEe] ]] || [ "$a" = END ]; } && [ ${#one[@]} -gt 0 ]; then
      "$@" "$adm_bin" "${one[@]}" || return 1
      one=()
    fi
    one+=("$a")
  done
}
if [ $uns_ok = 1 ]; then
  apply uns || fail "the user namespace's root could not configure its own namespace"
  quiet_ok "--set by the user namespace's root" uns "$adm_bin" --set 444 1555 66
  log "the user namespace's root configured its namespace"
else
  expect_eperm "$ADM -A by the user namespace's root in its namespace (IPVS: GENL_ADMIN_PERM)" \
    uns "$adm_bin" -A -t $VIP:80 -s rr
  expect_eperm "$ADM -L by the user namespace's root in its namespace" uns "$adm_bin" -L -n
  apply ip netns exec "$LB" || fail "root could not configure the container's namespace"
  adm_ok "$LB" --set 444 1555 66
fi
want="TCP $VIP:80 wrr
 -> ${RIP[1]}:80 Masq 1
 -> ${RIP[2]}:80 Masq 2
UDP $VIP:53 rr"
assert_eq "$(tab adm "$LB")" "$want" "root's view of the container's namespace"
if [ $uns_ok = 1 ]; then
  assert_eq "$(tab uns "$adm_bin")" "$want" "the user namespace's root's view of its namespace"
  quiet_ok "-Z by the user namespace's root" uns "$adm_bin" -Z
fi
expect_balance "$CL" tcp $VIP 80 6 "rs1:2 rs2:4" "through the container's director (wrr 1:2)"

# --- 2. ... and nothing else. ----------------------------------------------
init_before=$("$ADM" -L -n 2>&1) || fail "$ADM -L -n in the initial namespace: $init_before"
expect_eperm "add in init_net by the user namespace's root" uns_init "$adm_bin" -A -t 10.0.200.1:80 -s rr
expect_eperm "flush of init_net by the user namespace's root" uns_init "$adm_bin" -C
expect_eperm "list of init_net by the user namespace's root" uns_init "$adm_bin" -L -n
expect_eperm "connections of init_net by the user namespace's root" uns_init "$adm_bin" -L -n -c
adm_ok "$X" -A -t $VIP:80 -s rr
adm_ok "$X" -a -t $VIP:80 -r 10.0.9.9:80 -m -w 3
adm_ok "$X" -A -t $VIP:81 -s rr
adm_ok "$X" --set 111 1222 33
x_want="TCP $VIP:80 rr
 -> 10.0.9.9:80 Masq 3
TCP $VIP:81 rr"
# Root of the container's user namespace placed in X (nsenter enters X
# with root's rights first, then the user namespace).
expect_eperm "add in $X by the user namespace's root placed in it" \
  nsenter --user="$UNS" --net="/run/netns/$X" "$adm_bin" -A -t 10.0.200.1:80 -s rr
expect_eperm "list of $X by the user namespace's root placed in it" \
  nsenter --user="$UNS" --net="/run/netns/$X" "$adm_bin" -L -n
expect_eperm "add in $X by root of a user namespace made inside it" \
  ip netns exec "$X" unshare -Ur "$adm_bin" -A -t 10.0.200.1:80 -s rr
expect_eperm "delete in $X by root of a user namespace made inside it" \
  ip netns exec "$X" unshare -Ur "$adm_bin" -D -t $VIP:81
expect_eperm "list of $X by root of a user namespace made inside it" \
  ip netns exec "$X" unshare -Ur "$adm_bin" -L -n
expect_eperm "list of the container's namespace by uid 65534" \
  ip netns exec "$LB" setpriv --reuid 65534 --regid 65534 --clear-groups "$adm_bin" -L -n
expect_eperm "add in the container's namespace by uid 65534" \
  ip netns exec "$LB" setpriv --reuid 65534 --regid 65534 --clear-groups "$adm_bin" -A -t 10.0.200.1:80 -s rr
assert_eq "$(tab adm "$X")" "$x_want" "$X after the refused requests"
assert_eq "$(tab adm "$LB")" "$want" "the container's namespace after the refused requests"
init_after=$("$ADM" -L -n 2>&1)
assert_eq "$init_after" "$init_before" "init_net after the refused requests"

# An unprivileged user's own fresh namespace: allowed for rvs, with a
# table of its own (empty, then only its service).
own=$(setpriv --reuid 65534 --regid 65534 --clear-groups unshare -Urn bash -c '
  set -e
  "$1" -L -n | tail -n +4
  echo ---
  "$1" -A -t "$2":80 -s rr
  "$1" -a -t "$2":80 -r 10.0.1.1:80 -m
  "$1" -L -n | tail -n +4
  "$1" -L -n -c | tail -n +3
  echo ---
  "$1" -C
  "$1" -L -n | tail -n +4' _ "$adm_bin" "$VIP" 2>&1)
rc=$?
own=$(norm <<<"$own")
if [ $uns_ok = 1 ]; then
  [ $rc = 0 ] || fail "uid 65534 could not configure its own namespace: $own"
  assert_eq "$own" "---
TCP $VIP:80 rr
 -> 10.0.1.1:80 Masq 1 0 0
---" "uid 65534's own namespace: empty, its service (no connections), empty after -C"
  log "uid 65534 manages its own namespace and sees only it"
else
  [ $rc != 0 ] || fail "IPVS let uid 65534 configure its own namespace: $own"
  log "IPVS refuses uid 65534 in its own namespace: $own"
fi

# --- 3. Reads show only the caller's namespace. ----------------------------
# GET_SERVICE dump (+ GET_DEST per service): identical VIPs, different tables.
assert_eq "$(tab adm "$X")" "$x_want" "$X lists only its own services"
case "$init_after" in *"$VIP"*) fail "init_net lists a test namespace's service: $init_after" ;; esac
# GET_SERVICE for one service that exists only in the other namespace.
adm "$LB" -L -n -t $VIP:81 >/dev/null 2>&1 && fail "$VIP:81 (only in $X) is visible from the container's namespace"
adm "$X" -L -n -u $VIP:53 >/dev/null 2>&1 && fail "UDP $VIP:53 (only in the container's) is visible from $X"
# GET_CONFIG: per-namespace timeouts.
assert_eq "$(adm "$LB" -L --timeout | norm)" "Timeout (tcp tcpfin udp): 444 1555 66" "the container's timeouts"
assert_eq "$(adm "$X" -L --timeout | norm)" "Timeout (tcp tcpfin udp): 111 1222 33" "$X's timeouts"
assert_eq "$("$ADM" -L --timeout | norm)" "Timeout (tcp tcpfin udp): 900 120 300" "init_net's timeouts"
# GET_CONN: connections made through the container's director just now
# (those of the balance check above may have left in TIME_WAIT's 120 s,
# which --set does not change, on a slow kernel).
lb_names "$CL" tcp $VIP 80 6 >/dev/null
conns() { "$@" -L -n -c | grep -c "$CIP" ; }
n_lb=$(conns adm "$LB") n_x=$(conns adm "$X") n_init=$(conns "$ADM")
log "connections from $CIP listed: container $n_lb, $X $n_x, init_net $n_init"
[ "$n_lb" -ge 6 ] || fail "the container's namespace lists $n_lb connections, expected >= 6"
assert_eq "$n_x" 0 "connections listed in $X"
assert_eq "$n_init" 0 "connections listed in init_net"
if [ $uns_ok = 1 ]; then
  n_uns=$(conns uns "$adm_bin")
  [ "$n_uns" -ge 6 ] || fail "the user namespace's root sees $n_uns connections, expected >= 6"
fi
if [ "$ADM" = rvsadm ]; then
  # GET_DEST dump (raw netlink) for a service that exists only in X.
  out=$(ip netns exec "$LB" python3 -c '
import sys
sys.path.insert(0, sys.argv[1])
import rvsnl
g = rvsnl.Genl()
err, msg, replies = g.rvs("RVS_CMD_GET_DEST", rvsnl.svc(addr=sys.argv[2], port=81, sched=None, flags=False), flags=1 | 0x300)
print(err, len(replies), msg)
' "$RVS_ROOT/tests/py" "$VIP" 2>&1) || fail "GET_DEST probe: $out"
  log "GET_DEST dump of $X's $VIP:81 from the container's namespace: errno, entries, message: $out"
  case "$out" in "3 0 "*) ;; *) fail "GET_DEST across namespaces: expected ESRCH (3) and no entries, got: $out" ;; esac
fi

# Root of the initial user namespace manages the container's namespace.
adm_ok "$LB" -d -t $VIP:80 -r ${RIP[1]}:80
expect_balance "$CL" tcp $VIP 80 3 "rs2:3" "after root removed rs1 from the container's service"
pass "user-namespace roots manage only their own namespaces; reads are per namespace"
