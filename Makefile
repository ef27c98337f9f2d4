# rvs: build the module (against the cached test kernel, or KDIR=), rvsadm,
# and run things in the VM. `make help` lists the targets.

KDIR ?= $(shell qemu/build-kernel --print-dir 2>/dev/null)
RVS_TOOLS_DIR ?= $(HOME)/.cache/rvs/tools
# The rustc and bindgen that built the kernel (the test kernel's by default).
RVS_RUSTC ?= /usr/bin/rustc
RVS_BINDGEN ?= $(RVS_TOOLS_DIR)/bin/bindgen
KMAKE := $(MAKE) -C $(KDIR) M=$(CURDIR) LLVM=1 RUSTC=$(RVS_RUSTC) \
	BINDGEN=$(RVS_BINDGEN) CLIPPY_DRIVER=/usr/bin/clippy-driver \
	PATH=/usr/lib/llvm-19/bin:$(RVS_TOOLS_DIR)/bin:$(PATH)

.PHONY: all module rvsadm deps kernel clean test demo help clippy fmt \
	kernel-debug module-debug test-debug check-layers

# The debug (sanitizer) kernel and the module built against it, in its own
# output directory so the normal rvs.ko is never clobbered (6.12's kbuild
# cannot put an external module's objects elsewhere, so the sources are
# copied there first). Documentation/hardening.md, "Debug kernel".
DEBUG_KDIR ?= $(shell qemu/build-kernel --debug --print-dir 2>/dev/null)
DEBUG_OUT := $(CURDIR)/.build/debug

all: module rvsadm

help:
	@echo "make deps      install packages and tools (qemu/install-deps)"
	@echo "make kernel    build or reuse the cached test kernel (qemu/build-kernel)"
	@echo "make module    build rvs.ko (KDIR=<6.12 CONFIG_RUST tree>, RVS_RUSTC=, RVS_BINDGEN= to override)"
	@echo "make rvsadm    build the userspace tool"
	@echo "make demo      README's main job: balance real traffic in the VM"
	@echo "make test      README's test command: host tests + VM tests"
	@echo "make kernel-debug  build or reuse the debug kernel (KASAN, kmemleak, lockdep, UBSAN)"
	@echo "make module-debug  build .build/debug/rvs.ko against it"
	@echo "make test-debug    the whole suite on the debug kernel, kmemleak scan at the end (slow)"
	@echo "make clippy    tools/check-layers, then clippy on module (CLIPPY=1), rvsadm and rvs/core"
	@echo "make check-layers  the module's layering rules (no unsafe in rvs/lb, no import cycles)"
	@echo "make fmt       rustfmt everything"

deps:
	qemu/install-deps

kernel: deps
	qemu/build-kernel

kernel-debug: deps
	qemu/build-kernel --debug

# The prerequisites first (CONFIG_RUST, the kernel's rustc and bindgen, its
# rust/ build output), so that a missing one is one line, not a wall of errors.
module:
	@test -n "$(KDIR)" || { echo "no kernel tree: run 'make kernel' or pass KDIR="; exit 1; }
	@PATH=/usr/lib/llvm-19/bin:$(PATH) dkms/rvs-check-kernel --rustc $(RVS_RUSTC) \
		--bindgen $(RVS_BINDGEN) $(KDIR) >/dev/null
	$(KMAKE) modules

module-debug:
	@test -n "$(DEBUG_KDIR)" || { echo "no debug kernel tree: run 'make kernel-debug' or pass DEBUG_KDIR="; exit 1; }
	@mkdir -p $(DEBUG_OUT)
	@tar -cf - --exclude=target --exclude='*.o' --exclude='*.ko' --exclude='*.mod' \
		--exclude='*.mod.c' --exclude='.*.cmd' --exclude='.*.d' \
		--exclude=bindings_generated.rs Kbuild rvs | tar -xf - -C $(DEBUG_OUT)
	$(MAKE) -C $(DEBUG_KDIR) M=$(DEBUG_OUT) LLVM=1 RUSTC=/usr/bin/rustc \
		BINDGEN=$(RVS_TOOLS_DIR)/bin/bindgen \
		PATH=/usr/lib/llvm-19/bin:$(RVS_TOOLS_DIR)/bin:$(PATH) modules
	@nm -u $(DEBUG_OUT)/rvs.ko | grep -q __asan_ || \
		{ echo "$(DEBUG_OUT)/rvs.ko is not KASAN-instrumented: wrong DEBUG_KDIR?"; exit 1; }

rvsadm:
	cargo build --release --quiet -p rvsadm

# The layering rules of Documentation/architecture.md ("Two layers").
check-layers:
	tools/check-layers

clippy: check-layers
	$(KMAKE) CLIPPY=1 modules
	cargo clippy --workspace --all-targets -- -D warnings

fmt:
	rustfmt --edition 2021 --config-path $(KDIR)/.rustfmt.toml \
		$(filter-out rvs/bindings_generated.rs,$(wildcard rvs/*.rs rvs/sys/*.rs rvs/lb/*.rs))
	cargo fmt --all

# README's main job: everything from a fresh machine to balanced traffic.
demo:
	@qemu/install-deps
	@qemu/build-kernel >/dev/null
	@$(MAKE) -s module rvsadm
	@qemu/run --no-build -- tests/demo.sh

# README's test command: host unit tests, then every VM test in one boot.
test:
	@tests/run-all

# The same suite on the debug kernel, then a kmemleak scan; not in CI (slow).
test-debug:
	@tests/run-all --debug

clean:
	-$(KMAKE) clean
	rm -f rvs/bindings_generated.rs
	rm -rf .build
	cargo clean
