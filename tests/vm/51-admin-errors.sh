#!/bin/bash
# rvsadm rejects every bad request with a non-zero exit status and a
# message on stderr, and leaves the table unchanged; an unprivileged
# caller gets EPERM. ipvsadm on IPVS must do the same (the messages'
# keywords are chosen to fit both).
. "$(dirname "$0")/../lib.sh"

adm_init
mk_test_tmp
newns LB lb
adm_ok "$LB" -A -t 10.0.0.1:80 -s rr
adm_ok "$LB" -a -t 10.0.0.1:80 -r 10.0.1.1:80 -m -w 1
before=$(adm "$LB" -L -n) || fail "listing failed"

# expect_error "WHAT" KEYWORD_REGEX CMD...: CMD must fail with a message on
# stderr matching KEYWORD_REGEX (case-insensitive).
expect_error() {
  local what=$1 re=$2 rc err; shift 2
  "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err"; rc=$?
  err=$(cat "$TEST_TMP/err")
  log "$what: exit $rc: ${err:-<no message>}"
  [ "$rc" != 0 ] || fail "$what: accepted ($*)"
  [ -n "$err" ] || fail "$what: exit $rc but no message on stderr"
  grep -Eiq "$re" <<<"$err" || fail "$what: message does not mention /$re/: $err"
}
r() { ip netns exec "$LB" "$ADM" "$@"; }

expect_error "unknown scheduler" 'sched|not found|no such' r -A -t 10.0.0.2:80 -s nosuch
expect_error "service port 0" 'port' r -A -t 10.0.0.2:0 -s rr
expect_error "duplicate service" 'exist' r -A -t 10.0.0.1:80 -s rr
expect_error "deleting a missing service" 'no such|not defined|not found|not exist' r -D -t 10.0.0.9:80
expect_error "real server for a missing service" 'no such|not defined|not found|not exist' r -a -t 10.0.0.9:80 -r 10.0.1.1:80 -m
expect_error "duplicate real server" 'exist' r -a -t 10.0.0.1:80 -r 10.0.1.1:80 -m -w 1
if [ "$ADM" = rvsadm ]; then
  expect_error "weight 70000" 'weight' r -a -t 10.0.0.1:80 -r 10.0.1.2:80 -m -w 70000
  expect_error "-g with port mapping" 'port|map|masq' r -a -t 10.0.0.1:80 -r 10.0.1.3:8080 -g
else
  # Where rvs is stricter (rvsadm.8): IPVS has no upper bound on weights,
  # and ipvsadm drops a direct-routing server's port for the service's.
  r -a -t 10.0.0.1:80 -r 10.0.1.2:80 -m -w 70000 || fail "IPVS refused weight 70000"
  r -d -t 10.0.0.1:80 -r 10.0.1.2:80 || fail "cannot delete 10.0.1.2:80"
  r -a -t 10.0.0.1:80 -r 10.0.1.3:8080 -g || fail "ipvsadm refused -g with a port"
  r -d -t 10.0.0.1:80 -r 10.0.1.3:80 || fail "ipvsadm did not add -g's server on the service's port"
  log "IPVS takes weight 70000 and -g with port 8080 (as port 80); rvs refuses both"
fi
expect_error "deleting a missing real server" 'no such|not found|not exist' r -d -t 10.0.0.1:80 -r 10.0.1.7:80
expect_error "bad address" 'addr|invalid' r -A -t 10.0.0.300:80 -s rr

# Unprivileged: another user, and root without CAP_NET_ADMIN.
adm_bin=$(command -v "$ADM")
if ! setpriv --reuid 65534 --regid 65534 --clear-groups test -x "$adm_bin" 2>/dev/null; then
  chmod 755 "$TEST_TMP" && cp "$adm_bin" "$TEST_TMP/$ADM" && chmod 755 "$TEST_TMP/$ADM"
  adm_bin=$TEST_TMP/$ADM
fi
expect_error "list as uid 65534" 'permi|not allowed|cap_net_admin' \
  ip netns exec "$LB" setpriv --reuid 65534 --regid 65534 --clear-groups "$adm_bin" -L -n
expect_error "add as uid 65534" 'permi|not allowed|cap_net_admin' \
  ip netns exec "$LB" setpriv --reuid 65534 --regid 65534 --clear-groups "$adm_bin" -A -t 10.0.0.5:80 -s rr
command -v capsh >/dev/null || fail "capsh missing (libcap2-bin; qemu/install-deps installs it)"
expect_error "add as root without CAP_NET_ADMIN" 'permi|not allowed|cap_net_admin' \
  ip netns exec "$LB" capsh --drop=cap_net_admin -- -c "exec $adm_bin -A -t 10.0.0.5:80 -s rr"

after=$(adm "$LB" -L -n) || fail "listing failed"
[ "$after" = "$before" ] || fail "the table changed after rejected commands:
$after"
pass "every bad request rejected with a message; table unchanged"
