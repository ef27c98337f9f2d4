#!/bin/bash
# Real-server connection thresholds with IPVS's hysteresis: a server with
# -x 4 -y 2 stops getting new connections once it holds 4, and gets them
# again only after it dropped below 2 (not at 3 or 2). UDP flows with a
# short timeout stand in for connections: each flow kept alive by the
# client is one connection; a flow left idle expires. The same script
# passes against the kernel's IPVS (RVS_ADM=ipvsadm).
. "$(dirname "$0")/../lib.sh"
adm_init fo
topo_nat thr 2
for i in 1 2; do serve_name_bg "${RS[$i]}" udp 53 rs$i; done
for i in 1 2; do wait_listen "${RS[$i]}" udp 53; done

T=8
adm_ok "$LB" --set 900 120 $T
# fo: the highest weight (rs1) while it is available, else rs2.
adm_ok "$LB" -A -u $VIP:53 -s fo
adm_ok "$LB" -a -u $VIP:53 -r ${RIP[1]}:53 -m -w 2 -x 4 -y 2
adm_ok "$LB" -a -u $VIP:53 -r ${RIP[2]}:53 -m -w 1

# One client process plays the whole schedule and prints
# "label:server" per request. Flows a1..a4 fill rs1; b goes elsewhere;
# then a4, a3, a2 are left to expire one after the other while the others
# are refreshed (a packet every second), and once the listing shows rs1
# down to 3, 2 and 1 connections a new flow (c1, c2, c3) shows where new
# connections go. (Polling the listing, not the clock: under a loaded
# emulator timers and the collector run late.)
ip netns exec "$CL" python3 -c 'import socket' || fail "python3 does not run"
out=$(timeout 300 ip netns exec "$CL" python3 -c '
import socket, subprocess, sys, time
vip, T, lb, adm, rip = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
socks = {}
def ask(label, port):
    s = socks.get(label)
    if s is None:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("0.0.0.0", port))
        s.connect((vip, 53))
        s.settimeout(3)
        socks[label] = s
    s.send(b"who\n")
    try:
        return s.recv(64).decode().strip()
    except socket.timeout:
        return "timeout"
def say(label, port):
    print("%s:%s" % (label, ask(label, port)))
    sys.stdout.flush()
def rs1_conns():
    out = subprocess.run(["ip", "netns", "exec", lb, adm, "-L", "-n"],
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 6 and f[0] == "->" and f[1] == rip + ":53":
            return int(f[4]) + int(f[5])
    return -1
ports = {"a1": 32001, "a2": 32002, "a3": 32003, "a4": 32004}
for l in ("a1", "a2", "a3", "a4"):
    say(l, ports[l])
say("b", 32100)
def keep_until(labels, want):
    end = time.time() + 120
    while time.time() < end:
        for l in labels:
            r = ask(l, ports[l])
            if r != "rs1":
                print("lost:%s:%s" % (l, r))
        if rs1_conns() == want:
            return
        time.sleep(1)
    print("stuck:%d" % rs1_conns())
keep_until(["a1", "a2", "a3"], 3)
say("c1", 32201)
keep_until(["a1", "a2"], 2)
say("c2", 32202)
keep_until(["a1"], 1)
say("c3", 32203)
' $VIP $T "$LB" "$ADM" ${RIP[1]} 2>&1) || fail "client failed: $out"
log "schedule:"; echo "$out" | sed 's/^/#   /' >&2
got=$(echo "$out" | tr '\n' ' ' | sed 's/ $//')
assert_eq "$got" "a1:rs1 a2:rs1 a3:rs1 a4:rs1 b:rs2 c1:rs2 c2:rs2 c3:rs1" \
  "new flows with -x 4 -y 2 as rs1 holds 4, 3, 2 and 1 connections"
pass "a server at -x stops receiving and gets new connections again only below -y"
