#!/bin/bash
# Scheduler flags (-b): sh-port spreads one client's connections (different
# source ports) over the servers where plain sh keeps them on one;
# sh-fallback and mh-fallback send a client whose server is quiesced
# (weight 0) to another server, where without the flag it gets none.
# -L shows the flags as ipvsadm does: "sh (sh-fallback,sh-port)".
. "$(dirname "$0")/../lib.sh"
adm_init sh mh
topo_nat sfl 2
for i in 1 2; do serve_name "${RS[$i]}" tcp 80 rs$i; done

# service SCHED [FLAGS]: a fresh NAT service over both servers, weight 1.
service() {
  adm "$LB" -D -t $VIP:80 2>/dev/null
  if [ -n "${2:-}" ]; then
    adm_ok "$LB" -A -t $VIP:80 -s "$1" -b "$2"
  else
    adm_ok "$LB" -A -t $VIP:80 -s "$1"
  fi
  for i in 1 2; do adm_ok "$LB" -a -t $VIP:80 -r ${RIP[$i]}:80 -m -w 1; done
}

# Plain sh: one client, one server, whatever its source port.
service sh
got=$(lb_names "$CL" tcp $VIP 80 12 | count_names); log "sh: 12 connections -> $got"
case "$got" in rs[12]:12) ;; *) fail "sh without flags spread one client: $got" ;; esac

# sh-port: the source port is hashed too, so 12 connections use both.
service sh sh-port
line=$(adm "$LB" -L -n | grep "^TCP  $VIP:80 ")
assert_eq "$line" "TCP  $VIP:80 sh (sh-port)" "listing of sh with -b sh-port"
got=$(lb_names "$CL" tcp $VIP 80 12 | count_names); log "sh-port: 12 connections -> $got"
case "$got" in "rs1:"*" rs2:"*) ;; *) fail "sh-port did not spread one client's ports: $got" ;; esac

# fallback SCHED FLAG: the client's server quiesced; without FLAG no
# server answers, with it the other one does.
fallback() {
  local sched=$1 flag=$2 first idx other got
  service "$sched"
  got=$(lb_names "$CL" tcp $VIP 80 2 | count_names)
  case "$got" in rs[12]:2) ;; *) fail "$sched: client not on one server: $got" ;; esac
  first=${got%%:*} idx=${first#rs} other=rs$((3 - idx))
  adm_ok "$LB" -e -t $VIP:80 -r ${RIP[$idx]}:80 -m -w 0
  got=$(lb_names "$CL" tcp $VIP 80 2 | count_names); log "$sched, $first quiesced, no flag -> $got"
  case "$got" in *rs[12]*) fail "$sched without $flag still scheduled the client: $got" ;; esac
  adm_ok "$LB" -E -t $VIP:80 -s "$sched" -b "$flag"
  adm_ok "$LB" -e -t $VIP:80 -r ${RIP[$idx]}:80 -m -w 0
  line=$(adm "$LB" -L -n | grep "^TCP  $VIP:80 ")
  assert_eq "$line" "TCP  $VIP:80 $sched ($flag)" "listing of $sched with -b $flag"
  got=$(lb_names "$CL" tcp $VIP 80 4 | count_names); log "$sched, $first quiesced, $flag -> $got"
  assert_eq "$got" "$other:4" "$flag sends the client to the other server"
}
fallback sh sh-fallback
fallback mh mh-fallback

# Flags that do not fit the scheduler are refused by the tool.
if [ "$ADM" = rvsadm ]; then
  out=$(adm "$LB" -E -t $VIP:80 -s rr -b sh-port 2>&1) && fail "-s rr -b sh-port accepted"
  case "$out" in *"incompatible scheduler flag 'sh-port'"*) ;; *) fail "unexpected message: $out" ;; esac
  out=$(adm "$LB" -E -t $VIP:80 -s sh -b sh-bogus 2>&1) && fail "-b sh-bogus accepted"
  case "$out" in *"invalid scheduler flag 'sh-bogus'"*) ;; *) fail "unexpected message: $out" ;; esac
fi
pass "sh-port spreads ports, sh-fallback and mh-fallback skip a quiesced server, -L shows flags"
