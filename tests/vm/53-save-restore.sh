#!/bin/bash
# Save and restore (-S / -R), checked against the kernel's IPVS:
# - the same rules made with ipvsadm (kernel IPVS) and with rvsadm (rvs)
#   are saved identically by "ipvsadm -S -n" and "rvsadm -S -n";
# - real ipvsadm-save output restored by rvsadm -R balances real traffic;
# - -S | -R into a flushed namespace | -S gives the same text (also with
#   thresholds, which rvsadm saves and ipvsadm does not);
# - a bad line stops -R, which names its number and text; earlier lines
#   stay applied, later ones are not;
# - a larger table restores over one netlink socket (time logged; kept
#   small enough for a loaded TCG guest).
. "$(dirname "$0")/../lib.sh"
rvs_only
adm_init
mk_test_tmp
T=$TEST_TMP

# The rule set, in the syntax both tools share.
rules() {
  cat <<'R'
-A -t 10.0.100.1:80 -s rr
-a -t 10.0.100.1:80 -r 10.0.1.1:80 -m -w 1
-a -t 10.0.100.1:80 -r 10.0.1.2:80 -m -w 1
-A -t 10.0.100.1:443 -s sh -p 600 -M 255.255.255.0 -b sh-fallback,sh-port
-a -t 10.0.100.1:443 -r 10.0.1.1:8443 -m -w 3
-a -t 10.0.100.1:443 -r 10.0.1.2:443 -g -w 0
-A -u 10.0.100.1:53 -s wlc -o
-a -u 10.0.100.1:53 -r 10.0.1.3:53 -i -w 2
-A -t 10.0.100.2:8080 -s mh -b mh-port
-a -t 10.0.100.2:8080 -r 10.0.1.4:8080 -g -w 65535
-A -f 7 -s rr -p 60
-a -f 7 -r 10.0.1.1:0 -m -w 1
-a -f 7 -r 10.0.1.2:8000 -m -w 2
-A -t 10.0.100.3:0 -s rr -p 300
-a -t 10.0.100.3:0 -r 10.0.1.5:0 -g -w 1
-A -u 10.0.100.2:53 -s rr
-a -u 10.0.100.2:53 -r 10.0.1.6:53 -i -w 1 --tun-type gre --tun-csum
-a -u 10.0.100.2:53 -r 10.0.1.7:53 -i -w 1 --tun-type gue --tun-port 6080 --tun-remcsum
-a -u 10.0.100.2:53 -r 10.0.1.8:53 -i -w 1 --tun-type gue --tun-port 6081 --tun-nocsum
-a -u 10.0.100.2:53 -r 10.0.1.9:53 -i -w 1 --tun-type gue --tun-port 6082 --tun-csum
-A -t [2001:db8::1]:80 -s wrr -p 120 -M 64
-a -t [2001:db8::1]:80 -r [2001:db8::10]:8080 -m -w 4
-a -t [2001:db8::1]:80 -r [2001:db8::11]:80 -i -w 1 --tun-type gre
-A -f 8 -6 -s lc
-a -f 8 -6 -r [2001:db8::12]:0 -g -w 1
R
}
apply() { # apply NS ADM: the rules, one command per line
  local ns=$1 tool=$2 line
  while read -r line; do
    ip netns exec "$ns" $tool $line || fail "$tool $line"
  done < <(rules)
}

# 1. The kernel's IPVS and ipvsadm make the reference.
command -v ipvsadm >/dev/null || fail "ipvsadm not installed (qemu/install-deps installs it)"
modprobe ip_vs && modprobe ip_vs_rr && modprobe ip_vs_sh && modprobe ip_vs_mh && modprobe ip_vs_wlc &&
  modprobe ip_vs_wrr && modprobe ip_vs_lc ||
  fail "cannot load the kernel's IPVS (the reference)"
# Leave the kernel as found: later tests load IPVS themselves.
at_exit 'modprobe -r ip_vs_rr ip_vs_sh ip_vs_mh ip_vs_wlc ip_vs_wrr ip_vs_lc ip_vs 2>/dev/null'
newns REF ref
apply "$REF" ipvsadm
ip netns exec "$REF" ipvsadm -S -n >"$T/ipvs.save" || fail "ipvsadm -S -n"
ip netns exec "$REF" ipvsadm-save -n >"$T/ipvs-save.out" || fail "ipvsadm-save -n"
sed 's/^/#   ipvsadm -S: /' "$T/ipvs.save" >&2
ip netns exec "$REF" ipvsadm -C

# 2. The same rules through rvsadm; -S must print what ipvsadm -S prints.
newns A a
apply "$A" rvsadm
adm "$A" -S -n >"$T/rvs.save" || fail "rvsadm -S -n"
sed 's/^/#   rvsadm -S: /' "$T/rvs.save" >&2
diff -u "$T/ipvs.save" "$T/rvs.save" >&2 || fail "rvsadm -S -n differs from ipvsadm -S -n"
log "rvsadm -S -n is identical to ipvsadm -S -n ($(wc -l <"$T/rvs.save") lines)"
adm "$A" -S >"$T/rvs.save2"
cmp -s "$T/rvs.save" "$T/rvs.save2" || fail "-S and -S -n differ (rvsadm is always numeric)"

# 3. Round trip: -S | -R into a fresh namespace | -S, with thresholds too.
adm_ok "$A" -e -t 10.0.100.1:80 -r 10.0.1.2:80 -m -w 1 -x 100 -y 10
adm "$A" -S -n >"$T/a.save"
grep -qx -- "-a -t 10.0.100.1:80 -r 10.0.1.2:80 -m -w 1 -x 100 -y 10" "$T/a.save" ||
  fail "thresholds not saved"
newns B b
adm "$B" -R <"$T/a.save" || fail "rvsadm -R of rvsadm -S output"
adm "$B" -S -n >"$T/b.save"
diff -u "$T/a.save" "$T/b.save" >&2 || fail "round trip -S | -R | -S changed the rules"
diff <(adm "$A" -L -n) <(adm "$B" -L -n) >&2 || fail "listings differ after the round trip"
log "round trip -S | -R | -S identical ($(wc -l <"$T/b.save") lines)"
# Restoring over existing rules fails at the first duplicate.
out=$(adm "$B" -R <"$T/a.save" 2>&1) && fail "-R of existing rules succeeded"
case "$out" in *"line 1 \`-A -t 10.0.100.1:80 -s rr'"*"File exists"*) ;; *) fail "unexpected -R message: $out" ;; esac
# -C then -R: back to the same rules.
adm_ok "$B" -C
adm "$B" -R <"$T/a.save" || fail "-R after -C"
diff -u "$T/a.save" <(adm "$B" -S -n) >&2 || fail "-C, -R gave other rules"

# 4. Real ipvsadm-save output into rvs, then real traffic.
topo_nat sr 2
for i in 1 2; do serve_name "${RS[$i]}" tcp 80 rs$i; done
src="$T/ipvs-save.out"
adm "$LB" -R <"$src" || fail "rvsadm -R of $(basename "$src")"
diff -u "$T/rvs.save" <(adm "$LB" -S -n) >&2 || fail "ipvsadm-save output restored into other rules"
expect_balance "$CL" tcp $VIP 80 6 "rs1:3 rs2:3" "restored from ipvsadm-save -n"

# 5. A bad line stops -R: earlier lines applied, later ones not.
newns C c
printf '%s\n' "# comment" "-A -t 10.0.0.9:80 -s rr" "" \
  "-a -t 10.0.0.9:80 -r 10.0.1.1:8080 -g" "-A -t 10.0.0.10:80 -s rr" >"$T/bad"
out=$(adm "$C" -R <"$T/bad" 2>&1); rc=$?
log "bad line: exit $rc: $out"
assert_eq "$rc" 2 "exit status of -R with an invalid line"
case "$out" in *"line 4 \`-a -t 10.0.0.9:80 -r 10.0.1.1:8080 -g'"*"port mapping requires masquerading"*) ;;
  *) fail "the bad line is not named: $out" ;; esac
assert_eq "$(adm "$C" -S -n)" "-A -t 10.0.0.9:80 -s rr" "rules after a failed -R"
for bad in "-L -n" "-A -t 10.0.0.11:80 -s rr -b bogus" "-A -f 0 -s rr" "--bogus"; do
  out=$(printf '%s\n' "$bad" | adm "$C" -R 2>&1) && fail "-R accepted '$bad'"
  case "$out" in *"line 1 \`$bad'"*) ;; *) fail "-R of '$bad': $out" ;; esac
done
out=$(printf '%s\n' "-A -t 10.0.0.9:80 -s nosuch" | adm "$C" -R 2>&1); rc=$?
assert_eq "$rc" 1 "exit status of -R when the module refuses a line"
log "refused line: $out"

# 6. A larger table: 100 services and 200 real servers in one -R.
newns D d
for s in $(seq 1 100); do
  a=10.1.$((s / 200)).$((s % 200 + 1))
  echo "-A -t $a:80 -s rr"
  echo "-a -t $a:80 -r 10.2.0.1:80 -m -w 1"
  echo "-a -t $a:80 -r 10.2.0.2:80 -m -w 1"
done >"$T/big"
start=$(date +%s%N)
adm "$D" -R <"$T/big" || fail "-R of 300 lines"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
n=$(adm "$D" -S -n | wc -l)
assert_eq "$n" 300 "lines saved after restoring 300"
log "rvsadm -R: 300 lines (100 services, 200 servers) in ${ms} ms"
adm_ok "$D" -C
newns E e
start=$(date +%s%N)
ip netns exec "$E" ipvsadm -R <"$T/big" || fail "ipvsadm -R of 300 lines"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
log "ipvsadm -R (kernel IPVS): the same 300 lines in ${ms} ms"
ip netns exec "$E" ipvsadm -C
pass "-S matches ipvsadm, -R restores ipvsadm-save output and round trips, stops at a bad line"
