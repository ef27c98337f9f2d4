#!/bin/bash
# The hashing schedulers' wiring, flow by flow: 40 client addresses (and,
# with sh-port, 40 source ports of one address) connect to an sh service
# over three weighted servers, and 40 destination addresses (one fwmark
# service for all of them) reach a dh service; each flow must reach
# exactly the server that the host-side model of IPVS's hashing
# (tests/py/hash_model.py) gives it. A broken hash, bucket fill or list
# order would send some flows elsewhere; counting only that each client
# sticks cannot see that.
. "$(dirname "$0")/../lib.sh"
adm_init sh
topo_nat shw 3
for i in 1 2 3; do serve_name_bg "${RS[$i]}" tcp 80 rs$i; done
for i in 1 2 3; do wait_listen "${RS[$i]}" tcp 80; done
for i in $(seq 10 49); do echo "addr add 10.0.0.$i/24 dev c0"; done | nsip "$CL"

# The dh service's 40 destinations: local addresses of the director, marked.
echo "route add local 10.0.100.0/24 dev lo" | nsip "$LB"
ip netns exec "$LB" nft -f - <<'NFT' || fail "nft mark rule"
table ip dhmark {
  chain pre {
    type filter hook prerouting priority mangle;
    ip daddr 10.0.100.0/24 tcp dport 80 meta mark set 7
  }
}
NFT

# check MODE: every flow of MODE (addrs: one connection per address;
# ports: 40 source ports of 10.0.0.10; dests: one connection to each of
# 10.0.100.10-49 from 10.0.0.10) against the model.
check() {
  ip netns exec "$CL" env PYTHONPATH="$RVS_ROOT/tests/py" python3 - "$VIP" "$1" <<'PY'
import socket, sys, hash_model
vip, mode = sys.argv[1], sys.argv[2]
# Weights 1, 2, 3 added as rs1, rs2, rs3: listed newest first.
sh = hash_model.sh_table([("rs3", 3), ("rs2", 2), ("rs1", 1)])
dh = hash_model.dh_table(["rs3", "rs2", "rs1"])
if mode == "addrs":
    flows = [("10.0.0.%d" % i, 0, vip) for i in range(10, 50)]
elif mode == "ports":
    flows = [("10.0.0.10", 31000 + i, vip) for i in range(40)]
else:
    flows = [("10.0.0.10", 0, "10.0.100.%d" % i) for i in range(10, 50)]
bad, seen = [], {}
for caddr, cport, daddr in flows:
    if mode == "dests":
        want = hash_model.dh_server_of(dh, daddr)
    else:
        want = hash_model.sh_server_of(sh, caddr, cport if mode == "ports" else 0)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.settimeout(10)
    s.bind((caddr, cport))
    s.connect((daddr, 80))
    got = s.recv(64).decode().strip()
    s.close()
    seen[got] = seen.get(got, 0) + 1
    if got != want:
        bad.append("%s:%d to %s -> %s, model %s" % (caddr, cport, daddr, got, want))
print("# %s: %d flows, %s" % (mode, len(flows), " ".join("%s:%d" % kv for kv in sorted(seen.items()))), file=sys.stderr)
if len(seen) < 2:
    sys.exit("all flows on one server: the test would not see a wrong hash")
if bad:
    sys.exit("%d flows off the model: %s" % (len(bad), "; ".join(bad[:5])))
PY
}

adm_ok "$LB" -A -t $VIP:80 -s sh
for i in 1 2 3; do adm_ok "$LB" -a -t $VIP:80 -r ${RIP[$i]}:80 -m -w $i; done
check addrs || fail "sh by client address differs from the model"
adm_ok "$LB" -E -t $VIP:80 -s sh -b sh-port
check ports || fail "sh-port by client address and port differs from the model"
adm_ok "$LB" -D -t $VIP:80
adm_ok "$LB" -A -f 7 -s dh
for i in 1 2 3; do adm_ok "$LB" -a -f 7 -r ${RIP[$i]}:80 -m -w $i; done
check dests || fail "dh by destination address differs from the model"
pass "sh and dh send every flow where IPVS's hashing says (client addresses, ports with sh-port, destination addresses)"
