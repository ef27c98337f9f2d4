#!/bin/bash
# Rate estimates (-L --rate) against traffic of a known rate: one UDP flow
# of 50 datagrams a second (128-byte IP packets in, 32-byte answers out)
# through a NAT service; after 16 s of it (8 estimator periods of 2 s,
# the smoothed estimate within ~10% of the true rate on both engines) the
# service's InPPS and OutPPS must be near the rate the client measured,
# and InBPS/OutBPS near those times the packet sizes. Then, on rvs, the
# JSON listings (--rate, --stats, --timeout) must say what the text says.
. "$(dirname "$0")/../lib.sh"
adm_init rr
mk_test_tmp
topo_nat rate 1
serve_name_bg "${RS[1]}" udp 53 rs1
wait_listen "${RS[1]}" udp 53
adm_ok "$LB" -A -u $VIP:53 -s rr
adm_ok "$LB" -a -u $VIP:53 -r ${RIP[1]}:53 -m -w 1

# 22 s of 50 datagrams/s with 100-byte payloads (IP length 128) from one
# socket; prints "sent answered seconds" at the end.
ip netns exec "$CL" python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect((sys.argv[1], 53))
s.setblocking(False)
payload, sent, answered = b"x" * 100, 0, 0
start = time.monotonic()
while time.monotonic() - start < 22:
    s.send(payload); sent += 1
    due = start + sent / 50.0
    while True:
        try:
            s.recv(64); answered += 1
        except BlockingIOError:
            pass
        if time.monotonic() >= due:
            break
        time.sleep(0.002)
print(sent, answered, "%.2f" % (time.monotonic() - start))
' $VIP >"$TEST_TMP/sender" 2>&1 &
bg_track $!
sender=$!
sleep 16
rate=$(adm "$LB" -L -n --rate --exact) || fail "--rate: $rate"
json_rate=$( [ "$ADM" = rvsadm ] && adm "$LB" -L -n --rate --json)
log "rates after 16 s:"; printf '%s\n' "$rate" | sed 's/^/#   /' >&2
wait "$sender"
read -r sent answered secs <"$TEST_TMP/sender" || fail "the sender failed: $(cat "$TEST_TMP/sender")"
log "the client sent $sent datagrams in $secs s, $answered answered"
pps=$(awk -v n="$sent" -v t="$secs" 'BEGIN {printf "%d", n / t}')
[ "$answered" -ge $((sent * 9 / 10)) ] || fail "only $answered of $sent datagrams answered"

# The service line: UDP VIP:53 CPS InPPS OutPPS InBPS OutBPS.
read -r cps inpps outpps inbps outbps < <(printf '%s\n' "$rate" | awk -v v="$VIP:53" '$1 == "UDP" && $2 == v {print $3, $4, $5, $6, $7}')
for v in cps inpps outpps inbps outbps; do
  case "${!v}" in ''|*[!0-9]*) fail "--rate's $v is not a number: '${!v}'" ;; esac
done
near() { # near VALUE WANT PERCENT LABEL
  awk -v g="$1" -v w="$2" -v p="$3" 'BEGIN {exit !(g >= w * (100 - p) / 100 && g <= w * (100 + p) / 100)}' ||
    fail "$4: $1, want $2 +-$3%"
}
near "$inpps" "$pps" 40 "InPPS of a $pps datagrams/s flow"
near "$outpps" "$pps" 40 "OutPPS of a $pps datagrams/s flow"
near "$inbps" $((inpps * 128)) 15 "InBPS of $inpps 128-byte packets/s"
near "$outbps" $((outpps * 32)) 15 "OutBPS of $outpps 32-byte answers/s"
[ "$cps" -le 1 ] || fail "CPS of one flow 16 s old: $cps"

if [ "$ADM" = rvsadm ]; then
  # The JSON of the same listing, read right after the text: within an
  # estimator period of it.
  printf '%s\n' "$json_rate" | python3 -c '
import json, sys
inpps, inbps = int(sys.argv[2]), int(sys.argv[3])
svc = [s for s in json.load(sys.stdin)["services"] if s["address"] == sys.argv[1] and s["port"] == 53]
st = svc[0]["stats"] if svc else None
assert st is not None, "no service in --rate --json"
for k, want in (("inpps", inpps), ("inbps", inbps)):
    assert abs(st[k] - want) <= want * 0.3 + 2, (k, st[k], want)
' "$VIP" "$inpps" "$inbps" || fail "--rate --json disagrees with --rate: $json_rate"
  # Once the traffic stopped, --stats and its JSON agree exactly.
  text=$(adm "$LB" -L -n --stats --exact | awk -v v="$VIP:53" '$1 == "UDP" && $2 == v {print $3, $4, $5, $6, $7}')
  json=$(adm "$LB" -L -n --stats --json | python3 -c '
import json, sys
for s in json.load(sys.stdin)["services"]:
    st = s["stats"]
    print(st["conns"], st["inpkts"], st["outpkts"], st["inbytes"], st["outbytes"])')
  assert_eq "$json" "$text" "--stats --json against --stats --exact"
  log "--stats: $text"
  adm_ok "$LB" --set 0 0 77
  t=$(adm "$LB" -L --timeout --json)
  assert_eq "$t" '{"timeout":{"tcp":900,"tcpfin":120,"udp":77}}' "--timeout --json"
fi
pass "--rate follows a known traffic rate (packets and bytes, both directions); JSON listings agree"
