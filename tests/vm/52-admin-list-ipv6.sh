#!/bin/bash
# IPv6 services and real servers are listed in ipvsadm's layout
# ([ADDR]:PORT), after the IPv4 ones; JSON (rvsadm) has them too.
# Skips while the engine answers "Address family not supported".
. "$(dirname "$0")/../lib.sh"

adm_init rr
newns LB lb
norm() { sed -e 's/[[:space:]]\+/ /g' -e 's/ $//'; }

adm_ok "$LB" -A -t [2001:db8::1]:80 -s rr
adm_ok "$LB" -a -t [2001:db8::1]:80 -r [2001:db8::10]:8080 -m -w 2
adm_ok "$LB" -a -t [2001:db8::1]:80 -r [2001:db8::9]:80 -g -w 1
adm_ok "$LB" -A -u [2001:db8::1]:53 -s wrr
adm_ok "$LB" -a -u [2001:db8::1]:53 -r [2001:db8::10]:53 -m
adm_ok "$LB" -A -t 10.0.0.1:80 -s rr

out=$(adm "$LB" -L -n) || fail "$ADM -L -n failed"
log "$ADM -L -n:"
printf '%s\n' "$out" | sed 's/^/#   /' >&2
printf '%s\n' "$out" | grep -qx 'TCP  \[2001:db8::1\]:80 rr' || fail "no line 'TCP  [2001:db8::1]:80 rr'"
assert_eq "$(printf '%s\n' "$out" | tail -n +4 | norm)" "TCP 10.0.0.1:80 rr
TCP [2001:db8::1]:80 rr
 -> [2001:db8::9]:80 Route 1 0 0
 -> [2001:db8::10]:8080 Masq 2 0 0
UDP [2001:db8::1]:53 wrr
 -> [2001:db8::10]:53 Masq 1 0 0" "IPv6 listing"

if [ "$ADM" = rvsadm ]; then
  json=$(adm "$LB" -L -n --json) || fail "rvsadm -L -n --json failed"
  printf '%s' "$json" | python3 -c '
import json, sys
t = json.load(sys.stdin)
got = {(s["protocol"], s["address"], s["port"]): sorted((d["address"], d["port"], d["forward"], d["weight"]) for d in s["dests"]) for s in t["services"]}
want = {("tcp", "10.0.0.1", 80): [],
        ("tcp", "2001:db8::1", 80): sorted([("2001:db8::10", 8080, "masq", 2), ("2001:db8::9", 80, "route", 1)]),
        ("udp", "2001:db8::1", 53): [("2001:db8::10", 53, "masq", 1)]}
sys.exit(0 if got == want else "JSON differs:\n got  %r\n want %r" % (got, want))
' || fail "JSON listing does not match the IPv6 configuration"
fi
pass "IPv6 services listed like ipvsadm"
