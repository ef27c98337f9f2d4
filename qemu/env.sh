# Shared settings for rvs's scripts: where the toolchain and the cached test
# kernel live, and the make variables every kernel/module build needs.
# Sourced, not executed.

RVS_ROOT=${RVS_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
RVS_CACHE=${RVS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rvs}
RVS_TOOLS_DIR=${RVS_TOOLS_DIR:-$RVS_CACHE/tools}
export PATH="/usr/lib/llvm-19/bin:$RVS_TOOLS_DIR/bin:$PATH"
export LIBCLANG_PATH=/usr/lib/llvm-19/lib

# The kernel must be built by the rustc whose core/alloc sources it compiles
# (Debian's rustc-web), never by the rustup toolchain on PATH.
RVS_KRUSTC=/usr/bin/rustc
RVS_BINDGEN=$RVS_TOOLS_DIR/bin/bindgen
RVS_KMAKE_VARS=(LLVM=1 "RUSTC=$RVS_KRUSTC" "BINDGEN=$RVS_BINDGEN")

rvs_say() { printf '[%s] %s\n' "${RVS_STEP:-rvs}" "$*" >&2; }
rvs_die() { rvs_say "ERROR: $*"; exit 1; }

# Prints the cache key of the test kernel: everything that changes its bytes.
# `rvs_kernel_key debug` is the key of the debug (sanitizer) kernel: the same
# inputs plus qemu/kernel-debug.config and the debug part of the recipe (the
# normal key does not depend on either).
rvs_kernel_key() {
  {
    dpkg-query -W -f='${Version}\n' linux-source-6.12 2>/dev/null
    cat "$RVS_ROOT/qemu/kernel.config"
    sed -n '/^# key-begin/,/^# key-end/p' "$RVS_ROOT/qemu/build-kernel"
    "$RVS_KRUSTC" --version 2>/dev/null
    "$RVS_BINDGEN" --version 2>/dev/null
    clang --version 2>/dev/null | head -1
    if [ "${1:-}" = debug ]; then
      cat "$RVS_ROOT/qemu/kernel-debug.config"
      sed -n '/^# debug-key-begin/,/^# debug-key-end/p' "$RVS_ROOT/qemu/build-kernel"
    fi
  } | sha256sum | cut -c1-16
}

# Directory of the cached kernel tree for the current key (argument `debug`:
# the debug kernel's, $RVS_CACHE/kernel/6.12-debug-<key>).
rvs_kernel_dir() {
  if [ "${1:-}" = debug ]; then
    echo "$RVS_CACHE/kernel/6.12-debug-$(rvs_kernel_key debug)"
  else
    echo "$RVS_CACHE/kernel/6.12-$(rvs_kernel_key)"
  fi
}
