#!/bin/bash
# The rvs demo (README's main job): balance real TCP traffic in a VM.
#
# Builds a small network of namespaces (a client, a director running rvs,
# three web-ish servers that answer with their name), configures a NAT
# round-robin service with rvsadm, sends requests from the client to the
# virtual IP, and shows how they were spread. Exits non-zero if any server
# got no request (or a request went unanswered).
#
# Run it with `make demo` or `qemu/run -- tests/demo.sh` (on the host it
# boots the test VM itself: it never touches the host's network).
# RVS_DEMO_REQUESTS=N changes the number of requests (default 30);
# RVS_ADM=ipvsadm runs the same demo on the kernel's own IPVS.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${RVS_IN_VM:-}" ]; then
  echo "demo: starting the test VM (qemu/run), the demo runs inside it..." >&2
  exec "$here/../qemu/run" -- tests/demo.sh "$@"
fi
. "$here/lib.sh" || exit 1

requests=${RVS_DEMO_REQUESTS:-30}
servers=3
if [ -t 1 ]; then B=$'\e[1m' G=$'\e[32m' R=$'\e[31m' N=$'\e[0m'; else B= G= R= N=; fi
step() { printf '\n%s==> %s%s\n' "$B" "$*" "$N"; }
say() { printf '    %s\n' "$*"; }
run() { printf '    $ %s\n' "$*"; "$@" 2>&1 | sed 's/^/      /'; return "${PIPESTATUS[0]}"; }

cat <<TXT
${B}rvs demo${N}: a Layer-4 load balancer in a Rust kernel module.
Engine: $ADM ($( [ "$ADM" = rvsadm ] && echo "rvs.ko" || echo "the kernel's IPVS")), kernel $(uname -r).
TXT

step "1. Loading the engine"
adm_init rr
if [ "$ADM" = rvsadm ]; then
  say "rvs.ko is loaded: $(grep '^rvs ' /proc/modules | cut -d' ' -f1-2) bytes"
else
  say "ip_vs and ip_vs_rr loaded"
fi

step "2. Building the network (one namespace per machine)"
topo_nat demo $servers
cat <<TXT
    client            director (runs the balancer)          real servers
    10.0.0.2 -------- 10.0.0.1    10.0.1.254 (bridge) --+-- rs1 10.0.1.1
                      VIP $VIP on lo              +-- rs2 10.0.1.2
                                                        +-- rs3 10.0.1.3
    The client only knows the VIP. The servers' default route points at
    the director, so their answers come back through it and get the VIP
    as source again (NAT).
TXT

step "3. Starting a tiny server on each real server (answers its own name)"
for i in $(seq 1 $servers); do serve_name_bg "${RS[$i]}" tcp 80 "rs$i"; done
for i in $(seq 1 $servers); do
  wait_listen "${RS[$i]}" tcp 80
  say "rs$i listening on ${RIP[$i]}:80"
done

step "4. Configuring the virtual service with $ADM (inside the director's namespace)"
say "add a TCP service on VIP $VIP:80 with round-robin scheduling,"
say "then the three real servers, forwarding by NAT (-m), weight 1"
in_lb() { printf '    $ %s\n' "$ADM $*"; ip netns exec "$LB" "$ADM" "$@" 2>&1 | sed 's/^/      /'; return "${PIPESTATUS[0]}"; }
in_lb -A -t $VIP:80 -s rr || exit 1
for i in $(seq 1 $servers); do in_lb -a -t $VIP:80 -r ${RIP[$i]}:80 -m -w 1 || exit 1; done

step "5. Sending $requests requests from the client to $VIP:80"
say "each request is a new TCP connection; the answer is the server's name"
answers=$(lb_names "$CL" tcp $VIP 80 "$requests")
say "answers: $(printf '%s\n' "$answers" | tr '\n' ' ')"

step "6. Who served what"
status=0
printf '    %-8s %8s  %s\n' server requests ""
for i in $(seq 1 $servers); do
  c=$(printf '%s\n' "$answers" | grep -cx "rs$i")
  bar=$(printf '%*s' "$c" '' | tr ' ' '#')
  printf '    %-8s %8d  %s\n' "rs$i" "$c" "$bar"
  [ "$c" -gt 0 ] || status=1
done
failed=$(printf '%s\n' "$answers" | grep -c '^ERR')
printf '    %-8s %8d\n' failed "$failed"
[ "$failed" = 0 ] || status=1

step "7. The director's table ($ADM -L -n)"
in_lb -L -n

echo
if [ "$status" = 0 ]; then
  echo "${G}${B}demo passed${N}: all $requests requests answered, every server got its share."
else
  echo "${R}${B}demo FAILED${N}: a server got no requests or requests went unanswered."
fi
exit "$status"
