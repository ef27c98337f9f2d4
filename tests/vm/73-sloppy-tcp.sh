#!/bin/bash
# sloppy_tcp (IPVS's sysctl of that name; rvsadm --set-option): whether a
# TCP segment other than a SYN may open a connection. A client's
# connection through a NAT service pauses until the director's entry for
# it times out (tcp timeout 3 s, as after a failover to a director that
# never saw it); its next segment is mid-stream, no SYN:
#  - sloppy_tcp=0 (the default): it opens nothing, reaches the director's
#    own stack, which has no such connection and resets it;
#  - sloppy_tcp=1: it opens an entry, ESTABLISHED at once, is forwarded to
#    the real server, and the connection carries on (its echo returns).
# Both on rvs and on the kernel's IPVS.
. "$(dirname "$0")/../lib.sh"
adm_init rr
topo_nat slp 1
ip netns exec "${RS[1]}" socat TCP-LISTEN:80,fork,reuseaddr PIPE </dev/null >/dev/null 2>&1 &
bg_track $!
wait_listen "${RS[1]}" tcp 80
adm_ok "$LB" -A -t $VIP:80 -s rr
adm_ok "$LB" -a -t $VIP:80 -r ${RIP[1]}:80 -m
adm_ok "$LB" --set 3 0 0

established() { adm "$LB" -L -c -n | grep -c ESTABLISHED; }
# Entries of any state (the client closes once it has its answer).
entries() { adm "$LB" -L -c -n | grep -c "$VIP:80"; }

# paused SLOPPY: the second line's fate after the entry expired.
paused() {
  local out st i
  set_opt sloppy_tcp "$1"
  coproc RESUME { ip netns exec "$CL" python3 "$RVS_ROOT/tests/py/resume.py" $VIP 80; }
  read -r -t 10 out <&"${RESUME[0]}" || fail "sloppy_tcp=$1: the connection did not open"
  assert_eq "$out" open "sloppy_tcp=$1: first exchange"
  assert_eq "$(established)" 1 "sloppy_tcp=$1: entries while the connection is fresh"
  for i in $(seq 1 15); do
    st=$(established)
    [ "$st" = 0 ] && break
    sleep 1
  done
  assert_eq "$st" 0 "sloppy_tcp=$1: ESTABLISHED entries once the 3 s timeout passed"
  echo go >&"${RESUME[1]}"
  read -r -t 10 out <&"${RESUME[0]}" || fail "sloppy_tcp=$1: no outcome for the second line"
  wait "$RESUME_PID" 2>/dev/null
  printf '%s\n' "$out"
}

got=$(paused 0); log "sloppy_tcp=0: mid-stream segment after the entry expired -> $got"
assert_eq "$got" reset "sloppy_tcp=0: a mid-stream segment without an entry"
assert_eq "$(entries)" 0 "sloppy_tcp=0: entries after the reset"

got=$(paused 1); log "sloppy_tcp=1: mid-stream segment after the entry expired -> $got"
assert_eq "$got" echoed "sloppy_tcp=1: a mid-stream segment without an entry"
assert_eq "$(entries)" 1 "sloppy_tcp=1: entries after the segment"
pass "sloppy_tcp=0 resets a connection the director forgot, sloppy_tcp=1 carries it on"
