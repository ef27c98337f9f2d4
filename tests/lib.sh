# Shared helpers for rvs's VM tests (sourced). Tests run as root inside the
# guest started by qemu/run, with rvs.ko loaded and rvsadm on PATH.
#
# Conventions (kselftest): exit 0 pass, 1 fail, 4 skip; say why on stderr.

set -u
KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
RVS_ROOT=${RVS_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
. "$(dirname "${BASH_SOURCE[0]}")/kmsg.sh"
TEST_NAME=$(basename "$0" .sh)
NS_PREFIX="rvs-${TEST_NAME%%-*}-$$"
_created_ns=()

log() { printf '# %s\n' "$*" >&2; }
fail() { printf '# FAIL: %s\n' "$*" >&2; exit $KSFT_FAIL; }
skip() { printf '# SKIP: %s\n' "$*" >&2; exit $KSFT_SKIP; }
pass() { [ $# -gt 0 ] && printf '# %s\n' "$*" >&2; exit $KSFT_PASS; }

# Asserts "$1" == "$2" with a message.
assert_eq() { [ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"; }

# Creates a namespace removed when the test exits; prints its name.
mkns() {
  local ns="$NS_PREFIX-$1"
  ip netns add "$ns" || fail "ip netns add $ns"
  _created_ns+=("$ns")
  ip -n "$ns" link set lo up
  # The fast path pass (tests/vm/run, fastpath.list): every namespace has
  # rvs's ingress fast path on from the start.
  if [ "${RVS_FASTPATH:-0}" = 1 ] && rvs_loaded; then
    ip netns exec "$ns" rvsadm --set-option fastpath=1 >/dev/null || fail "rvsadm --set-option fastpath=1 in $ns"
  fi
  echo "$ns"
}

cleanup_ns() {
  local ns
  for ns in "${_created_ns[@]}"; do ip netns del "$ns" 2>/dev/null; done
  _created_ns=()
}
trap cleanup_ns EXIT

# Is rvs.ko loaded?
rvs_loaded() { grep -q '^rvs ' /proc/modules; }

# Kernel memory in use by slabs and module text, in kB (for leak checks).
kmem_kb() {
  awk '/^(Slab|VmallocUsed|KernelStack|PageTables):/ {s += $2} END {print s}' /proc/meminfo
}

# Drops reclaimable caches and waits out RCU so leak checks compare like
# with like. Then shrinks every slab cache: that frees empty slabs and,
# on a KASAN kernel, the cache's objects held in KASAN's quarantine (freed
# memory it keeps poisoned for a while, up to 1/32 of RAM, which would
# otherwise count as growth).
settle_memory() {
  sync
  echo 3 > /proc/sys/vm/drop_caches
  sleep 1
  local f
  for f in /sys/kernel/slab/*/shrink; do echo 1 > "$f" 2>/dev/null || true; done
}

# ---------------------------------------------------------------------------
# Traffic-test helpers (20-*, 3*-*, demo.sh).
#
# Every traffic test is parametric on the admin tool and engine:
#   RVS_ADM=rvsadm  (default) rvsadm and rvs.ko
#   RVS_ADM=ipvsadm            ipvsadm and the kernel's own IPVS (ip_vs.ko),
#                              the reference the tests are validated against.
#   RVS_ADM=ipvsadm RVS_COMPAT=1
#                              the real ipvsadm driving rvs.ko loaded with
#                              ipvs_compat=1 (answering as "IPVS").
# All traffic stays inside namespaces the test creates (see topo_* below).

ADM=${RVS_ADM:-rvsadm}
_bg_pids=()
_exit_hooks=()

# Runs "$@" (eval'd) when the test exits, before namespaces are deleted.
at_exit() { _exit_hooks+=("$*"); }

# Remembers a background process of the test shell for killing at exit.
bg_track() { _bg_pids+=("$1"); }

# Kills the tracked background jobs, then every process still running
# inside the test's namespaces (servers, socat children).
kill_ns_procs() {
  local ns p pids=()
  for p in "${_bg_pids[@]}"; do kill "$p" 2>/dev/null; done
  for ns in "${_created_ns[@]}"; do
    pids+=($(ip netns pids "$ns" 2>/dev/null))
  done
  if [ ${#pids[@]} -gt 0 ]; then
    kill "${pids[@]}" 2>/dev/null
    sleep 0.2
    kill -9 "${pids[@]}" 2>/dev/null
  fi
  for p in "${_bg_pids[@]}"; do wait "$p" 2>/dev/null; done
  _bg_pids=()
}

_lib_exit() {
  local rc=$? h ns
  for h in "${_exit_hooks[@]}"; do eval "$h"; done
  kill_ns_procs
  [ -z "${_compat_loaded:-}" ] || rmmod rvs 2>/dev/null
  # One ip process deletes them all (each ip start is slow under TCG).
  if [ ${#_created_ns[@]} -gt 0 ]; then
    for ns in "${_created_ns[@]}"; do echo "netns del $ns"; done | ip -force -batch - 2>/dev/null
    _created_ns=()
  fi
  cleanup_ns
  [ -z "${_ipvs_beside:-}" ] || ipvs_unload_beside
  [ -n "${TEST_TMP:-}" ] && rm -rf "$TEST_TMP"
  exit $rc
}
trap _lib_exit EXIT

# newns VAR TAG: creates namespace $NS_PREFIX-TAG (deleted at exit) and
# stores its name in VAR. (mkns in $(...) would register the namespace in
# a subshell, so it would never be deleted.)
newns() {
  mkns "$2" >/dev/null || exit $KSFT_FAIL
  printf -v "$1" '%s' "$NS_PREFIX-$2"
}

# A writable per-test directory ($TEST_TMP), removed at exit.
mk_test_tmp() {
  local base
  for base in "${TMPDIR:-/tmp}" "${RVS_SCRATCH:-}"; do
    [ -n "$base" ] && [ -d "$base" ] && [ -w "$base" ] || continue
    TEST_TMP=$(mktemp -d "$base/rvs-$TEST_NAME.XXXXXX" 2>/dev/null) && return 0
  done
  fail "no writable temporary directory (tried ${TMPDIR:-/tmp} and \$RVS_SCRATCH)"
}

# adm_init [SCHEDULER...]: makes sure the engine behind $ADM is ready.
# For ipvsadm this loads ip_vs and the named scheduler modules, or with
# RVS_COMPAT=1 rvs.ko with ipvs_compat=1 (unloaded at exit, so that the
# runner loads it back as the other tests expect it).
adm_init() {
  local s
  case "$ADM" in
    ipvsadm) [ "${RVS_COMPAT:-0}" = 1 ] && { compat_init; return; }
      command -v ipvsadm >/dev/null || fail "ipvsadm not installed (qemu/install-deps installs it)"
      # A pure reference: no rvs hooks next to IPVS's (the runner reloads
      # rvs.ko after each test).
      if rvs_loaded; then rmmod rvs || fail "cannot unload rvs for the ipvsadm reference run"; log "unloaded rvs.ko"; fi
      modprobe ip_vs 2>/dev/null || fail "cannot load ip_vs"
      for s in "$@"; do modprobe "ip_vs_$s" 2>/dev/null || fail "cannot load ip_vs_$s"; done
      ;;
    rvsadm)
      command -v rvsadm >/dev/null || fail "rvsadm not on PATH"
      rvs_loaded || fail "rvs.ko is not loaded"
      ;;
    *) fail "RVS_ADM must be rvsadm or ipvsadm, not '$ADM'" ;;
  esac
  log "engine: $ADM"
}

# ipvs_clients: for the tests of IPVS's own clients (ipvsadm, keepalived,
# moby/ipvs): the rvs pass drives rvs.ko with ipvs_compat=1 through them,
# the IPVS pass ip_vs. Call before adm_init.
ipvs_clients() {
  if [ "$ADM" = rvsadm ]; then ADM=ipvsadm RVS_COMPAT=1; fi
}

compat_init() {
  command -v ipvsadm >/dev/null || fail "ipvsadm not installed (qemu/install-deps installs it)"
  if grep -q '^ip_vs ' /proc/modules; then
    modprobe -r $(awk '$1 ~ /^ip_vs_/ {print $1}' /proc/modules) ip_vs || fail "cannot unload ip_vs"
  fi
  if rvs_loaded && [ "$(cat /sys/module/rvs/parameters/ipvs_compat 2>/dev/null)" != Y ]; then
    rmmod rvs || fail "cannot unload rvs to load it with ipvs_compat=1"
  fi
  rvs_loaded || insmod "$RVS_ROOT/rvs.ko" ipvs_compat=1 || fail "insmod rvs.ko ipvs_compat=1 failed"
  # Unloaded last, after the test's own exit hooks and processes (a
  # daemon such as keepalived cleans up through it).
  _compat_loaded=1
  log "engine: ipvsadm on rvs.ko (ipvs_compat=1)"
}

# ipvs_beside_rvs [SCHEDULER...]: loads ip_vs (and ip_vs_SCHEDULER) next
# to rvs.ko, for a test that runs both engines at once, each in its own
# namespaces, driven by ipvsadm and rvsadm (the sync daemon's interop with
# IPVS). They do not meet: rvs.ko without ipvs_compat has its own genl
# family and only handles namespaces where rvsadm made services, and IPVS
# hooks a namespace only once it has a service. ip_vs is unloaded again at
# exit if this loaded it, so the next test finds the kernel as before.
ipvs_beside_rvs() {
  local s
  command -v ipvsadm >/dev/null || fail "ipvsadm not installed (qemu/install-deps installs it)"
  [ "$(cat /sys/module/rvs/parameters/ipvs_compat 2>/dev/null)" != Y ] ||
    fail "rvs.ko is loaded with ipvs_compat=1: it holds IPVS's family, ip_vs cannot load beside it"
  grep -q '^ip_vs ' /proc/modules || _ipvs_beside=1
  modprobe ip_vs 2>/dev/null || fail "cannot load ip_vs beside rvs.ko"
  for s in "$@"; do modprobe "ip_vs_$s" 2>/dev/null || fail "cannot load ip_vs_$s"; done
  log "ip_vs loaded beside rvs.ko"
}

# Unloads what ipvs_beside_rvs loaded, once the deleted namespaces' services
# have let go of their scheduler modules (namespaces are freed
# asynchronously: up to 5 s).
ipvs_unload_beside() {
  local i
  for i in $(seq 1 50); do
    modprobe -r $(awk '$1 ~ /^ip_vs_/ {print $1}' /proc/modules) ip_vs 2>/dev/null && return 0
    sleep 0.1
  done
  log "could not unload ip_vs: $(grep '^ip_vs' /proc/modules | tr '\n' ' ')"
}

# Skips tests that exercise rvs itself, not the ipvsadm-compatible surface;
# tests/vm/parity.list must say why (the IPVS pass does not run them).
rvs_only() { [ "$ADM" = rvsadm ] || skip "rvs-only test (RVS_ADM=$ADM; see tests/vm/parity.list)"; }

# adm NS ARGS...: runs the admin tool in namespace NS (output untouched).
adm() { local ns=$1; shift; ip netns exec "$ns" "$ADM" "$@"; }

# adm_ok NS ARGS...: runs and logs the admin command; fails the test if it fails.
adm_ok() {
  local ns=$1 out; shift
  log "[${ns#$NS_PREFIX-}] $ADM $*"
  out=$(ip netns exec "$ns" "$ADM" "$@" 2>&1) || fail "$ADM $* (in ${ns#$NS_PREFIX-}) failed: $out"
  [ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/#   /' >&2
}

# nsysctl NS KEY=VALUE...: sets sysctls inside NS.
nsysctl() {
  local ns=$1; shift
  ip netns exec "$ns" sysctl -qw "$@" || fail "sysctl $* in ${ns#$NS_PREFIX-}"
}

# nsip NS <<EOF ... EOF: runs the ip commands on stdin (one per line, without
# the leading "ip") in NS, in one ip process.
nsip() { ip -n "$1" -batch - || fail "ip -batch in ${1#$NS_PREFIX-} failed"; }

# vethns NS_A IF_A NS_B IF_B: a veth pair between two namespaces, both up.
vethns() {
  ip link add "$2" netns "$1" type veth peer name "$4" netns "$3" || fail "veth $2/$4"
  ip -n "$1" link set "$2" up
  ip -n "$3" link set "$4" up
}

# wait_listen NS tcp|udp PORT: waits (up to 10 s) until a socket in NS
# listens on PORT (read from /proc/net/*, so no ss needed).
wait_listen() {
  local ns=$1 proto=$2 port=$3
  ip netns exec "$ns" bash -c '
    hex=$(printf "%04X" "$2")
    for i in $(seq 1 100); do
      for f in /proc/net/$1 /proc/net/${1}6; do
        while read -r _ local _ st _; do
          [ "${local##*:}" = "$hex" ] && { [ "$1" = udp ] || [ "$st" = 0A ]; } && exit 0
        done <"$f"
      done
      sleep 0.1
    done
    exit 1' _ "$proto" "$port" || fail "nothing listens on $proto port $port in ${ns#$NS_PREFIX-}"
}

# serve_name NS tcp|udp PORT NAME: a server in NS answering every TCP
# connection / UDP datagram with "NAME\n". One python process, no fork per
# connection (socat's fork + SYSTEM costs ~0.5 s a connection under TCG).
# serve_name_bg does not wait for the socket (start several, then
# wait_listen each: python starts slowly under TCG). The TCP listen backlog
# is $SERVE_BACKLOG (default 128); it also bounds the server's queue of
# half-open connections, and the test kernel has no SYN cookies
# (CONFIG_SYN_COOKIES is off), so a spoofed SYN flood larger than the
# backlog makes the real server drop every new SYN until its half-open
# requests time out: flood tests raise it (and net.core.somaxconn).
# serve_held NS PORT NAME: a TCP server (tests/py/held.py) that answers NAME
# and keeps each connection open until the client ends it, so the
# director sees it active for as long as the test holds it.
serve_held() {
  ip netns exec "$1" python3 "$RVS_ROOT/tests/py/held.py" serve "$2" "$3" </dev/null >/dev/null 2>&1 &
  bg_track $!
}

# nft_counter NS FAMILY TABLE NAME [packets|bytes]: the value of a named
# nftables counter (packets unless told).
nft_counter() {
  ip netns exec "$1" nft list counter "$2" "$3" "$4" |
    awk -v k="${5:-packets}" '{for (i = 1; i < NF; i++) if ($i == k) {print $(i + 1); exit}}'
}

serve_name() { serve_name_bg "$@"; wait_listen "$1" "$2" "$3"; }
serve_name_bg() {
  local ns=$1 proto=$2 port=$3 name=$4
  ip netns exec "$ns" python3 -c '
import socket, sys
proto, port, name = sys.argv[1], int(sys.argv[2]), (sys.argv[3] + "\n").encode()
# One dual-stack socket serves IPv4 and IPv6 clients.
if proto == "tcp":
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("::", port))
    s.listen(int(sys.argv[4]))
    while True:
        c, _ = s.accept()
        try:
            c.sendall(name)
        except OSError:
            pass
        c.close()
else:
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    s.bind(("::", port))
    while True:
        _, peer = s.recvfrom(2048)
        s.sendto(name, peer)
' "$proto" "$port" "$name" "${SERVE_BACKLOG:-128}" </dev/null >/dev/null 2>&1 &
  bg_track $!
}

# serve_udp_on NS ADDR PORT NAME: a UDP server bound to ADDR (a DR or TUN
# real server's VIP, so that it answers from the VIP: one bound to the
# wildcard address answers from its own address, which the client drops);
# answers NAME to every datagram. Returns once it listens.
serve_udp_on() {
  ip netns exec "$1" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
name = (sys.argv[3] + "\n").encode()
while True:
    _, peer = s.recvfrom(2048)
    s.sendto(name, peer)
' "$2" "$3" "$4" </dev/null >/dev/null 2>&1 &
  bg_track $!
  wait_listen "$1" udp "$3"
}

# drop_udp_port NS PORT: UDP datagrams to PORT end at NS's prerouting,
# without an ICMP port unreachable (flows that only fill a table).
drop_udp_port() {
  ip netns exec "$1" nft -f - <<NFT || fail "nft on $1"
table ip sink {
  chain pre {
    type filter hook prerouting priority -300;
    udp dport $2 drop
  }
}
NFT
}

# serve_sink NS PORT OUTFILE [6]: accepts one TCP connection (over IPv6
# with 6) in NS and writes
# what it receives to OUTFILE; its pid is in SINK_PID (see sink_wait).
serve_sink() {
  local listen="TCP4-LISTEN:$2,reuseaddr"
  [ "${4:-}" = 6 ] && listen="TCP6-LISTEN:$2,reuseaddr"
  # Outlives the longest send_file limit (8 MiB: 42 s).
  ip netns exec "$1" timeout 90 socat -u "$listen" "OPEN:$3,creat,trunc" </dev/null 2>/dev/null &
  SINK_PID=$!
  bg_track $SINK_PID
  wait_listen "$1" tcp "$2"
}

# sink_wait: waits (up to 15 s) for the sink to finish; fails if it does not.
sink_wait() {
  local i
  for i in $(seq 1 150); do
    kill -0 "$SINK_PID" 2>/dev/null || { wait "$SINK_PID" 2>/dev/null; return 0; }
    sleep 0.1
  done
  fail "the real server's sink did not see the connection end"
}

# send_file NS FILE ADDR PORT: sends FILE over TCP from NS; ADDR IPv4 or
# IPv6 (without brackets). The limit is 10 s plus 1 s per 256 KiB: the
# debug kernel (KASAN under TCG) moves 8 MiB in well over 10 s.
send_file() {
  local to="TCP4:$3:$4" limit rc
  case $3 in *:*) to="TCP6:[$3]:$4" ;; esac
  limit=$(( 10 + $(stat -c %s "$2") / 262144 ))
  timeout "$limit" ip netns exec "$1" socat -u "OPEN:$2" "$to,connect-timeout=5" 2>&1
  rc=$?
  [ $rc = 124 ] && echo "timed out after $limit s"
  return $rc
}

# check_transfer CLIENT_NS SERVER_NS VIP VPORT RPORT BYTES LABEL: sends
# BYTES random bytes from the client to VIP:VPORT, a sink on the real
# server's RPORT receives them; the bytes must arrive intact.
check_transfer() {
  local cl=$1 rs=$2 vip=$3 vport=$4 rport=$5 bytes=$6 label=$7 out
  [ -n "${TEST_TMP:-}" ] || mk_test_tmp
  head -c "$bytes" /dev/urandom >"$TEST_TMP/in" || fail "cannot write $TEST_TMP/in"
  rm -f "$TEST_TMP/out"
  case $vip in *:*) serve_sink "$rs" "$rport" "$TEST_TMP/out" 6 ;; *) serve_sink "$rs" "$rport" "$TEST_TMP/out" ;; esac
  out=$(send_file "$cl" "$TEST_TMP/in" "$vip" "$vport") ||
    fail "$label: client could not send $bytes bytes to $vip:$vport: $out"
  sink_wait
  [ -f "$TEST_TMP/out" ] || fail "$label: nothing reached the real server"
  cmp -s "$TEST_TMP/in" "$TEST_TMP/out" ||
    fail "$label: data corrupted: sent $bytes bytes, received $(stat -c %s "$TEST_TMP/out")"
  log "$label: $bytes bytes to $vip:$vport arrived intact on port $rport"
}

# tcp_from NS ADDR SRCPORT [PORT]: one TCP connection from NS to ADDR:PORT
# (80) from source port SRCPORT; prints the first line the server sends,
# or ERR:<exception> (ERR:timeout after 5 s). For tests that reuse a
# client port: the server should close first, so the port is free at once.
tcp_from() {
  ip netns exec "$1" python3 -c '
import socket, sys
s = socket.socket(); s.settimeout(5)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[2])))
try:
    s.connect((sys.argv[1], int(sys.argv[3]))); print(s.recv(64).decode().strip() or "ERR:empty")
except socket.timeout:
    print("ERR:timeout")
except OSError as e:
    print("ERR:" + type(e).__name__)
' "$2" "$3" "${4:-80}"
}

# lb_names NS tcp|udp ADDR PORT N [SRC_PORT_BASE [STEP]] (ADDR IPv4 or IPv6,
# without brackets): makes N sequential
# connections (TCP) or request datagrams (UDP, the i-th from source port
# SRC_PORT_BASE+i*STEP, default 20000+i, so each is a new flow; STEP 0
# sends all from one port, one flow) and prints
# one line per attempt: the server's answer, or ERR:<reason>. Gives up
# (printing ERR:skipped) after 3 consecutive timeouts.
lb_names() {
  local ns=$1 proto=$2 addr=$3 port=$4 n=$5 sbase=${6:-20000} step=${7:-1}
  timeout $((n * 4 + 20)) ip netns exec "$ns" python3 -c '
import socket, sys
proto, addr, port, n, sbase, step = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
timeouts = 0
for i in range(n):
    if timeouts >= 3:
        print("ERR:skipped"); continue
    s = None
    try:
        if proto == "tcp":
            s = socket.create_connection((addr, port), timeout=3)
            data = b""
            while True:
                d = s.recv(256)
                if not d: break
                data += d
        else:
            v6 = ":" in addr
            s = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET, socket.SOCK_DGRAM)
            s.settimeout(3)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("::" if v6 else "0.0.0.0", sbase + i * step))
            s.connect((addr, port))
            s.send(b"who\n")
            data = s.recv(256)
        print(data.decode(errors="replace").strip() or "ERR:empty")
        timeouts = 0
    except socket.timeout:
        print("ERR:timeout"); timeouts += 1
    except OSError as e:
        print("ERR:" + (type(e).__name__ if type(e) is not OSError else "errno%d" % (e.errno or 0)))
    finally:
        if s: s.close()
    sys.stdout.flush()
' "$proto" "$addr" "$port" "$n" "$sbase" "$step"
}

# set_opt NAME VALUE: the runtime setting NAME in the director's namespace
# ($LB): IPVS's sysctl net.ipv4.vs.NAME, rvsadm --set-option NAME=VALUE.
set_opt() {
  if [ "$ADM" = ipvsadm ]; then nsysctl "$LB" "net.ipv4.vs.$1=$2"
  else adm_ok "$LB" --set-option "$1=$2"; fi
}

# settled WANT FUNC [ARGS...]: prints FUNC's output once it is WANT, or its
# last output after 8 tries a second apart. For counters read through
# -L --stats: IPVS folds its per-CPU counters into what it lists only when
# its estimator runs (every 2 s); rvs sums them when asked.
settled() {
  local want=$1 out i
  shift
  for i in 1 2 3 4 5 6 7 8; do
    out=$("$@")
    [ "$out" = "$want" ] && break
    sleep 1
  done
  printf '%s\n' "$out"
}

# count_names: reads lb_names output, prints "name:count ..." sorted by name.
count_names() { sort | uniq -c | awk '{printf "%s%s:%d", sep, $2, $1; sep=" "} END {print ""}'; }

# expect_balance NS tcp|udp ADDR PORT N "EXPECTED" LABEL [SRC_PORT_BASE]:
# N requests must be answered exactly as EXPECTED ("rs1:10 rs2:10 ...").
expect_balance() {
  local got
  got=$(lb_names "$1" "$2" "$3" "$4" "$5" "${8:-20000}" | count_names)
  log "$7: $5 $2 requests to $3:$4 -> $got"
  assert_eq "$got" "$6" "$7"
}

# topo_nat TAG N: the NAT topology (like the kernel's ipvs.sh):
#
#   client ns "TAG-cl"        director ns "TAG-lb"              N real servers "TAG-rsI"
#   c0 10.0.0.2/24 ---------- d0 10.0.0.1/24
#   default via 10.0.0.1      lo: VIP 10.0.100.1/32
#                             br0 10.0.1.254/24 -+- lbrI ------- r0 10.0.1.I/24
#                             ip_forward=1                       default via 10.0.1.254
#
# Sets CL, LB, RS (array, RS[1]..RS[N]), VIP, CIP, RIP (array).
topo_nat() {
  local tag=$1 n=$2 i
  newns CL "$tag-cl"; newns LB "$tag-lb"
  VIP=10.0.100.1 CIP=10.0.0.2
  RS=("") RIP=("")
  for i in $(seq 1 "$n"); do newns RS[$i] "$tag-rs$i"; RIP[$i]=10.0.1.$i; done
  {
    echo "link add d0 type veth peer name c0 netns $CL"
    echo "link set d0 up"
    echo "addr add 10.0.0.1/24 dev d0"
    echo "addr add $VIP/32 dev lo"
    echo "link add br0 type bridge"
    echo "link set br0 up"
    echo "addr add 10.0.1.254/24 dev br0"
    for i in $(seq 1 "$n"); do
      echo "link add lbr$i type veth peer name r0 netns ${RS[$i]}"
      echo "link set lbr$i master br0 up"
    done
  } | nsip "$LB"
  nsip "$CL" <<IP
link set c0 up
addr add $CIP/24 dev c0
route add default via 10.0.0.1
IP
  for i in $(seq 1 "$n"); do
    nsip "${RS[$i]}" <<IP
link set r0 up
addr add ${RIP[$i]}/24 dev r0
route add default via 10.0.1.254
IP
  done
  nsysctl "$LB" net.ipv4.ip_forward=1
}

# topo_nat_ipv6: IPv6 beside IPv4 in topo_nat's namespaces (one real
# server): client 2001:db8::2, director 2001:db8::1 and 2001:db8:1::254,
# VIP6 2001:db8:100::1 on lo, real server 2001:db8:1::1. Sets VIP6.
topo_nat_ipv6() {
  VIP6=2001:db8:100::1
  {
    echo "addr add 2001:db8::1/64 dev d0 nodad"
    echo "addr add $VIP6/128 dev lo"
    echo "addr add 2001:db8:1::254/64 dev br0 nodad"
  } | nsip "$LB"
  nsip "$CL" <<IP
addr add 2001:db8::2/64 dev c0 nodad
route add default via 2001:db8::1
IP
  nsip "${RS[1]}" <<IP
addr add 2001:db8:1::1/64 dev r0 nodad
route add default via 2001:db8:1::254
IP
  nsysctl "$LB" net.ipv6.conf.all.forwarding=1
}

# switch3 SW CL LB RS: a bridge br0 in namespace SW joining c0 in CL, d0
# in LB and f0 in RS (ports swc, swl, sws), all up; addresses are the
# caller's.
switch3() {
  nsip "$1" <<IP
link add br0 type bridge
link set br0 up
link add swc type veth peer name c0 netns $2
link add swl type veth peer name d0 netns $3
link add sws type veth peer name f0 netns $4
link set swc master br0 up
link set swl master br0 up
link set sws master br0 up
IP
}

# topo_direct TAG: the DR/TUN topology of the kernel's ipvs.sh, one real server:
#
#   switch ns "TAG-sw" with bridge br0 joining:
#     client  "TAG-cl"  c0 10.0.0.2/24, route to VIP via 10.0.0.1
#     director "TAG-lb" d0 10.0.0.1/24, lo: VIP 10.0.100.1/32
#     real server "TAG-rs1" f0 10.0.0.3/24 (its replies go straight to the client)
#   director d1 172.16.0.1/24 ------ real server r0 172.16.0.2/24 (RIP)
#
# Sets CL, LB, SW, RS[1], VIP, CIP, RIP[1]. The VIP is not yet on the real
# server: the DR and TUN tests put it on lo or tunl0 themselves.
topo_direct() {
  local tag=$1
  newns SW "$tag-sw"; newns CL "$tag-cl"; newns LB "$tag-lb"
  RS=("") RIP=("")
  newns RS[1] "$tag-rs1"
  VIP=10.0.100.1 CIP=10.0.0.2 RIP[1]=172.16.0.2
  switch3 "$SW" "$CL" "$LB" "${RS[1]}"
  nsip "$CL" <<IP
link set c0 up
addr add $CIP/24 dev c0
route add $VIP/32 via 10.0.0.1
IP
  nsip "$LB" <<IP
link set d0 up
addr add 10.0.0.1/24 dev d0
addr add $VIP/32 dev lo
link add d1 type veth peer name r0 netns ${RS[1]}
link set d1 up
addr add 172.16.0.1/24 dev d1
IP
  nsip "${RS[1]}" <<IP
link set f0 up
addr add 10.0.0.3/24 dev f0
link set r0 up
addr add ${RIP[1]}/24 dev r0
IP
}

# direct_rs: readies topo_direct's real server for DR: the VIP on lo, no
# ARP for it, no reverse-path filter (requests come from the director,
# replies leave toward the client).
direct_rs() {
  nsysctl "${RS[1]}" net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2 \
    net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
    net.ipv4.conf.r0.rp_filter=0 net.ipv4.conf.f0.rp_filter=0
  ip -n "${RS[1]}" addr add $VIP/32 dev lo
}

# tun_rs: the same for TUN (IPIP): requests arrive on tunl0, and the
# director only encapsulates (no forwarding, no redirects).
tun_rs() {
  ip -n "${RS[1]}" link set tunl0 up 2>/dev/null || { ip -n "${RS[1]}" link add tunl0 type ipip; ip -n "${RS[1]}" link set tunl0 up; }
  nsysctl "${RS[1]}" net.ipv4.conf.tunl0.rp_filter=0
  direct_rs
  nsysctl "$LB" net.ipv4.ip_forward=0 net.ipv4.conf.all.send_redirects=0 net.ipv4.conf.default.send_redirects=0
}

# Held connections and how they ended (tests/py/flush_probe.py), for the
# flush and drain tests; files in $TEST_TMP (mk_test_tmp first).

# probe_serve NS PORT NAME: a held-connection server logging to $TEST_TMP/NAME.log.
probe_serve() {
  : >"$TEST_TMP/$3.log"
  ip netns exec "$1" python3 "$RVS_ROOT/tests/py/flush_probe.py" serve "$2" "$3" "$TEST_TMP/$3.log" </dev/null >/dev/null 2>&1 &
  bg_track $!
  wait_listen "$1" tcp "$2"
}
# probe_hold NS ADDR PORT N TAG: holds N connections in the background;
# their names and later results go to $TEST_TMP/TAG.out.
probe_hold() {
  rm -f "$TEST_TMP/$5.go"
  ip netns exec "$1" timeout 60 python3 "$RVS_ROOT/tests/py/flush_probe.py" hold "$2" "$3" "$4" "$TEST_TMP/$5.go" \
    >"$TEST_TMP/$5.out" 2>"$TEST_TMP/$5.err" </dev/null &
  bg_track $!
  local i
  for i in $(seq 1 100); do
    grep -qx held "$TEST_TMP/$5.out" 2>/dev/null && return 0
    sleep 0.1
  done
  fail "$5: connections not held: $(cat "$TEST_TMP/$5.out" "$TEST_TMP/$5.err" 2>/dev/null | tr '\n' ' ')"
}
# probe_results TAG: lets the holder probe, prints "NAME RESULT" lines.
probe_results() {
  touch "$TEST_TMP/$1.go"
  local i
  for i in $(seq 1 150); do
    grep -qx done "$TEST_TMP/$1.out" && break
    sleep 0.1
  done
  grep -qx done "$TEST_TMP/$1.out" || fail "$1: the probe did not finish"
  sed -n '/^held$/,/^done$/p' "$TEST_TMP/$1.out" | grep -v -x -e held -e done
}
# summary: "NAME:RESULT" counts of probe_results lines, sorted.
summary() { awk '{print $1 ":" $2}' | sort | uniq -c | awk '{printf "%s%s=%s", s, $2, $1; s=" "} END {print ""}'; }
# Counters of TCP resets received and of pure ACKs sent (a challenge ACK
# is one), in namespace $1 (table inet probe).
count_tcp() {
  ip netns exec "$1" nft -f - <<NFT || fail "nft in $1"
table inet probe {
  counter rst_in {}
  counter ack_out {}
  chain in {
    type filter hook input priority 0; policy accept;
    tcp flags & rst == rst counter name rst_in
  }
  chain out {
    type filter hook output priority 0; policy accept;
    tcp flags & (syn | fin | rst | ack) == ack counter name ack_out
  }
}
NFT
}
reset_counts() { ip netns exec "$1" nft reset counters table inet probe >/dev/null; }
counts() { echo "rst_in=$(nft_counter "$1" inet probe rst_in) ack_out=$(nft_counter "$1" inet probe ack_out)"; }
# log_resets NAME: how many "reset" lines the server NAME logged.
log_resets() { grep -c '^reset ' "$TEST_TMP/$1.log"; }

# capture NS DEV FILE FILTER...: records DEV's packets matching the
# tcpdump FILTER in FILE until capture_end (tcpdump's pids in _caps).
_caps=()
capture() {
  local ns=$1 dev=$2 file=$3 _; shift 3
  ip netns exec "$ns" tcpdump -i "$dev" -n -s 0 -U --immediate-mode -Z root -w "$file" "$@" 2>"$file.log" &
  bg_track $!
  _caps+=($!)
  for _ in $(seq 1 100); do
    grep -q "listening on" "$file.log" && return 0
    sleep 0.1
  done
  fail "tcpdump on $dev in ${ns#"$NS_PREFIX"-} did not start: $(cat "$file.log")"
}
capture_end() {
  local p
  sleep 0.5
  for p in "${_caps[@]}"; do kill -INT "$p" 2>/dev/null; done
  for p in "${_caps[@]}"; do wait "$p" 2>/dev/null; done
  _caps=()
}

# Helpers of the FullNAT and ENAT tests (79, 86). get and the conn_*
# helpers use the test's client ($CL) and director ($LB) namespaces.

# hostport ADDR PORT: ADDR:PORT, [ADDR]:PORT for IPv6.
hostport() { case $1 in *:*) echo "[$1]:$2" ;; *) echo "$1:$2" ;; esac; }
# get URL OUT [CURL ARGS...]: curl from the client, body to OUT.
get() {
  local url=$1 out=$2 err; shift 2
  err=$(ip netns exec "$CL" timeout 30 curl -sS -g --max-time 25 -o "$out" "$@" "$url" 2>&1) ||
    fail "curl $url: $err"
}
# conn_local CLIENT: the " local ADDR:PORT" of -L -n -c's line for CLIENT (ADDR:PORT).
conn_local() { adm "$LB" -L -n -c | grep -F " $1 " | sed -n 's/.* local \([^ ]*\)$/\1/p'; }
# conn_json CLIENT: "LADDR LPORT" of --json's connection of CLIENT.
conn_json() {
  adm "$LB" -L -n -c --json | python3 -c '
import json, sys
for c in json.load(sys.stdin)["connections"]:
    if c["client"] == sys.argv[1]:
        print(c.get("laddr"), c.get("lport"))' "$1"
}
# check_listed CLIENT LADDR LPORT LABEL: the connection of CLIENT is listed
# with that local address and port, in -L -n -c and in --json.
check_listed() {
  assert_eq "$(conn_local "$1")" "$(hostport "$2" "$3")" "$4: -L -n -c local address of $1"
  assert_eq "$(conn_json "$1")" "$2 $3" "$4: --json laddr and lport of $1"
}
# segments FILE LABEL: tests/py/fullnat.py segments of a capture (one line
# per TCP segment: SRC SPORT DST DPORT FLAGS LEN OPTIONS), logged.
segments() {
  local segs
  segs=$(python3 "$RVS_ROOT/tests/py/fullnat.py" segments "$1") || fail "$2: cannot read the capture $1"
  log "$2 ($(printf '%s\n' "$segs" | grep -c .) segments; SRC SPORT DST DPORT FLAGS LEN OPTIONS):"
  printf '%s\n' "$segs" | head -8 | sed 's/^/#   /' >&2
  printf '%s\n' "$segs"
}
# toa_hex ADDR PORT [KIND]: the option that carries the client ADDR:PORT,
# as its bytes in hex: KIND (254, FullNAT's TOA, unless told; ENAT's is
# 253), length (8, IPv6 20), port, address (network order).
toa_hex() {
  python3 -c '
import socket, sys
a = socket.inet_pton(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET, sys.argv[1])
print((bytes([int(sys.argv[3]), 4 + len(a)]) + int(sys.argv[2]).to_bytes(2, "big") + a).hex())' "$1" "$2" "${3:-254}"
}
# has_opt SEGMENT HEX: whether the segment line's options include HEX.
has_opt() { printf '%s\n' "$1" | awk -v o="$2" '{n = split($7, a, ","); for (i = 1; i <= n; i++) if (a[i] == o) f = 1} END {exit !f}'; }
