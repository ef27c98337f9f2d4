#!/bin/bash
# sh's wiring, flow by flow: 40 client addresses (and, with sh-port, 40
# source ports of one address) connect to an sh service over three
# weighted servers, and each must reach exactly the server that the
# host-side model of IPVS's source hashing (tests/py/sh_model.py) gives
# it. A broken hash, bucket fill or list order would send some flows
# elsewhere; counting only that each client sticks cannot see that.
. "$(dirname "$0")/../lib.sh"
adm_init sh
topo_nat shw 3
for i in 1 2 3; do serve_name_bg "${RS[$i]}" tcp 80 rs$i; done
for i in 1 2 3; do wait_listen "${RS[$i]}" tcp 80; done
for i in $(seq 10 49); do echo "addr add 10.0.0.$i/24 dev c0"; done | nsip "$CL"

# check MODE: every flow of MODE (addrs: one connection per address;
# ports: 40 source ports of 10.0.0.10) against the model.
check() {
  ip netns exec "$CL" env PYTHONPATH="$RVS_ROOT/tests/py" python3 - "$VIP" "$1" <<'PY'
import socket, sys, sh_model
vip, mode = sys.argv[1], sys.argv[2]
# Weights 1, 2, 3 added as rs1, rs2, rs3: listed newest first.
buckets = sh_model.table([("rs3", 3), ("rs2", 2), ("rs1", 1)])
flows = ([("10.0.0.%d" % i, 0) for i in range(10, 50)] if mode == "addrs"
         else [("10.0.0.10", 31000 + i) for i in range(40)])
bad, seen = [], {}
for caddr, cport in flows:
    want = sh_model.server_of(buckets, caddr, cport if mode == "ports" else 0)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.settimeout(10)
    s.bind((caddr, cport))
    s.connect((vip, 80))
    got = s.recv(64).decode().strip()
    s.close()
    seen[got] = seen.get(got, 0) + 1
    if got != want:
        bad.append("%s:%d -> %s, model %s" % (caddr, cport, got, want))
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
pass "sh sends every flow where IPVS's source hashing says (addresses, and ports with sh-port)"
