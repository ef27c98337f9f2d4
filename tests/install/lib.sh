# shellcheck shell=bash disable=SC2154 # $tmp and $kdir are the caller's
# Helpers of tests/install/run: scratch kernel trees and assertions.
# Sourced; needs $tmp (a scratch directory) and $kdir (the test kernel tree).

# fake_tree NAME: $tmp/trees/NAME, the test kernel tree with its
# configuration, include/config/ and rust/ as copies or links that one
# test may change without touching the real tree.
fake_tree() {
  local t=$tmp/trees/$1 d
  mkdir -p "$t"
  # Links to everything (one ln per directory: include/config/ has a
  # thousand entries), then copies where a test changes something.
  ln -s "$kdir"/* "$kdir"/.config "$t/"
  for d in include include/config rust; do
    rm "$t/$d" && mkdir "$t/$d" && ln -s "$kdir/$d"/* "$t/$d/"
  done
  for f in .config include/config/auto.conf include/config/kernel.release; do
    rm "$t/$f" && cp "$kdir/$f" "$t/$f"
  done
  echo "$t"
}

# set_cfg TREE NAME [VALUE]: sets (or, without VALUE, unsets) a kernel
# option in both .config and include/config/auto.conf.
set_cfg() {
  local t=$1 name=$2 f
  for f in "$t/.config" "$t/include/config/auto.conf"; do
    sed -i "/^$name=/d; /^# $name is not set/d" "$f"
    if [ $# -ge 3 ]; then echo "$name=$3" >>"$f"; elif [ "$f" = "$t/.config" ]; then echo "# $name is not set" >>"$f"; fi
  done
}

pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
not_ok() { fail=$((fail + 1)); echo "not ok - $*"; }
# check NAME COMMAND...: one test, passed when COMMAND succeeds.
check() { local name=$1; shift; if "$@"; then ok "$name"; else not_ok "$name"; fi; }
# same WHAT EXPECTED_FILE ACTUAL_FILE: the files are equal, or the diff.
same() {
  if diff -u "$2" "$3" >"$tmp/diff"; then return 0; fi
  echo "# $1: expected (-) and got (+):"; sed 's/^/#   /' "$tmp/diff"
  return 1
}
