#!/bin/bash
# `-L -n` lists exactly what was configured, in ipvsadm's layout and order
# (services by family, protocol, address, port; real servers by address,
# port); `-L -n -t` lists one service; `-C` empties the table; the
# --thresholds and --persistent-conn listings, --sort/--nosort, -X and -v
# as ipvsadm has them. For rvsadm, `-L -n --json` holds exactly the same
# services and real servers.
. "$(dirname "$0")/../lib.sh"

adm_init rr wrr wlc lc
newns LB lb

# The configuration, in the order it is added (not the listing order).
adm_ok "$LB" -A -u 10.0.0.2:53 -s wrr
adm_ok "$LB" -a -u 10.0.0.2:53 -r 10.0.1.10:53 -m -w 65535
adm_ok "$LB" -a -u 10.0.0.2:53 -r 10.0.1.9:53 -m -w 2
adm_ok "$LB" -A -t 10.0.0.1:443 -s wlc
adm_ok "$LB" -a -t 10.0.0.1:443 -r 10.0.1.3:443 -i -w 0
adm_ok "$LB" -a -t 10.0.0.1:443 -r 10.0.1.1:443 -g -w 1
adm_ok "$LB" -A -t 10.0.0.1:80 -s rr
adm_ok "$LB" -a -t 10.0.0.1:80 -r 10.0.1.2:8080 -m -w 3
adm_ok "$LB" -a -t 10.0.0.1:80 -r 10.0.1.1:80 -m
adm_ok "$LB" -A -t 10.0.0.3:22 -s lc -p 600
adm_ok "$LB" -a -t 10.0.0.3:22 -r 10.0.1.4:22 -g -w 1

# Whitespace-normalised, as ipvsadm pads columns.
norm() { sed -e 's/[[:space:]]\+/ /g' -e 's/ $//'; }

expected_body="TCP 10.0.0.1:80 rr
 -> 10.0.1.1:80 Masq 1 0 0
 -> 10.0.1.2:8080 Masq 3 0 0
TCP 10.0.0.1:443 wlc
 -> 10.0.1.1:443 Route 1 0 0
 -> 10.0.1.3:443 Tunnel 0 0 0
TCP 10.0.0.3:22 lc persistent 600
 -> 10.0.1.4:22 Route 1 0 0
UDP 10.0.0.2:53 wrr
 -> 10.0.1.9:53 Masq 2 0 0
 -> 10.0.1.10:53 Masq 65535 0 0"

out=$(adm "$LB" -L -n) || fail "$ADM -L -n failed"
log "$ADM -L -n:"
printf '%s\n' "$out" | sed 's/^/#   /' >&2

# Header, as ipvsadm prints it.
printf '%s\n' "$out" | sed -n 1p | grep -Eq '^IP Virtual Server version [0-9]+\.[0-9]+\.[0-9]+ \(size=[0-9]+\)$' ||
  fail "first line is not ipvsadm's version line: $(printf '%s\n' "$out" | sed -n 1p)"
assert_eq "$(printf '%s\n' "$out" | sed -n 2p)" "Prot LocalAddress:Port Scheduler Flags" "second header line"
assert_eq "$(printf '%s\n' "$out" | sed -n 3p)" "  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn" "third header line"

# Specific lines with ipvsadm's exact spacing.
printf '%s\n' "$out" | grep -qx 'TCP  10.0.0.1:80 rr' || fail "no line 'TCP  10.0.0.1:80 rr'"
printf '%s\n' "$out" | grep -qx 'UDP  10.0.0.2:53 wrr' || fail "no line 'UDP  10.0.0.2:53 wrr'"
printf '%s\n' "$out" | grep -qx 'TCP  10.0.0.3:22 lc persistent 600' || fail "no line 'TCP  10.0.0.3:22 lc persistent 600'"
printf '%s\n' "$out" | grep -Eqx '  -> 10\.0\.1\.2:8080 {16}Masq {4}3 {6}0 {10}0 *' ||
  fail "real server line for 10.0.1.2:8080 not in ipvsadm's columns"
printf '%s\n' "$out" | grep -Eqx '  -> 10\.0\.1\.3:443 {17}Tunnel {2}0 {6}0 {10}0 *' ||
  fail "real server line for 10.0.1.3:443 not in ipvsadm's columns"

# The whole body, in order.
got_body=$(printf '%s\n' "$out" | tail -n +4 | norm)
[ "$got_body" = "$expected_body" ] || {
  log "expected (whitespace-normalised):"; printf '%s\n' "$expected_body" | sed 's/^/#   /' >&2
  fail "listing body differs from the configuration"
}

# One service only: ipvsadm prints no version line then, just the titles.
one=$(adm "$LB" -L -n -t 10.0.0.1:443) || fail "$ADM -L -n -t 10.0.0.1:443 failed"
log "$ADM -L -n -t 10.0.0.1:443:"
printf '%s\n' "$one" | sed 's/^/#   /' >&2
assert_eq "$(printf '%s\n' "$one" | norm)" "Prot LocalAddress:Port Scheduler Flags
 -> RemoteAddress:Port Forward Weight ActiveConn InActConn
TCP 10.0.0.1:443 wlc
 -> 10.0.1.1:443 Route 1 0 0
 -> 10.0.1.3:443 Tunnel 0 0 0" "-L -n -t 10.0.0.1:443"

# ipvsadm's other listings of real servers: thresholds, persistent
# connections (its column widths, trailing blanks included).
thr=$(adm "$LB" -L -n --thresholds -t 10.0.0.3:22) || fail "$ADM -L -n --thresholds failed"
log "$ADM -L -n --thresholds -t 10.0.0.3:22:"; printf '%s\n' "$thr" | sed 's/^/#   /' >&2
assert_eq "$(printf '%s\n' "$thr" | norm)" "Prot LocalAddress:Port Uthreshold Lthreshold ActiveConn InActConn
 -> RemoteAddress:Port
TCP 10.0.0.3:22 lc persistent 600
 -> 10.0.1.4:22 0 0 0 0" "-L -n --thresholds"
printf '%s\n' "$thr" | grep -qxF '  -> 10.0.1.4:22                  0          0          0          0         ' ||
  fail "--thresholds real server line not in ipvsadm's columns"
pc=$(adm "$LB" -L -n --persistent-conn -t 10.0.0.3:22) || fail "$ADM -L -n --persistent-conn failed"
assert_eq "$(printf '%s\n' "$pc" | norm)" "Prot LocalAddress:Port Weight PersistConn ActiveConn InActConn
 -> RemoteAddress:Port
TCP 10.0.0.3:22 lc persistent 600
 -> 10.0.1.4:22 1 0 0 0" "-L -n --persistent-conn"
printf '%s\n' "$pc" | grep -qxF '  -> 10.0.1.4:22                  1         0           0          0         ' ||
  fail "--persistent-conn real server line not in ipvsadm's columns"
# --nosort lists the same lines (in the kernel's order); --sort, -X and
# -v (the version) are accepted as ipvsadm accepts them.
assert_eq "$(adm "$LB" -L -n --nosort | tail -n +4 | norm | sort)" "$(printf '%s\n' "$expected_body" | sort)" "-L -n --nosort, sorted afterwards"
adm "$LB" -L -n --sort >/dev/null || fail "$ADM -L -n --sort failed"
adm "$LB" -L -n --stats -X >/dev/null || fail "$ADM -L -n --stats -X failed"
adm "$LB" -v >/dev/null || fail "$ADM -v failed"

if [ "$ADM" = rvsadm ]; then
  json=$(adm "$LB" -L -n --json) || fail "rvsadm -L -n --json failed"
  log "rvsadm -L -n --json: $json"
  printf '%s' "$json" | python3 -c '
import json, sys
t = json.load(sys.stdin)
got = {}
for s in t["services"]:
    key = (s["protocol"], s["address"], s["port"], s["scheduler"], s["persistent_timeout"])
    assert key not in got, "service listed twice: %r" % (key,)
    got[key] = sorted((d["address"], d["port"], d["forward"], d["weight"]) for d in s["dests"])
want = {
    ("tcp", "10.0.0.1", 80, "rr", None): [("10.0.1.1", 80, "masq", 1), ("10.0.1.2", 8080, "masq", 3)],
    ("tcp", "10.0.0.1", 443, "wlc", None): [("10.0.1.1", 443, "route", 1), ("10.0.1.3", 443, "tunnel", 0)],
    ("tcp", "10.0.0.3", 22, "lc", 600): [("10.0.1.4", 22, "route", 1)],
    ("udp", "10.0.0.2", 53, "wrr", None): [("10.0.1.10", 53, "masq", 65535), ("10.0.1.9", 53, "masq", 2)],
}
want = {k: sorted(v) for k, v in want.items()}
if got != want:
    sys.exit("JSON listing differs:\n got  %r\n want %r" % (got, want))
assert isinstance(t["version"], str) and isinstance(t["conn_tab_size"], int)
' || fail "JSON listing does not match the configuration"
  log "JSON listing matches"
fi

adm_ok "$LB" -C
out=$(adm "$LB" -L -n) || fail "$ADM -L -n after -C failed"
assert_eq "$(printf '%s\n' "$out" | wc -l)" 3 "lines listed after -C (header only)"
pass "listing matches the configuration"
