# rvs: build the module (against the cached test kernel, or KDIR=), rvsadm,
# and run things in the VM. `make help` lists the targets.

KDIR ?= $(shell qemu/build-kernel --print-dir 2>/dev/null)
RVS_TOOLS_DIR ?= $(HOME)/.cache/rvs/tools
KMAKE := $(MAKE) -C $(KDIR) M=$(CURDIR) LLVM=1 RUSTC=/usr/bin/rustc \
	BINDGEN=$(RVS_TOOLS_DIR)/bin/bindgen CLIPPY_DRIVER=/usr/bin/clippy-driver \
	PATH=/usr/lib/llvm-19/bin:$(RVS_TOOLS_DIR)/bin:$(PATH)

.PHONY: all module rvsadm deps kernel clean test demo help clippy fmt

all: module rvsadm

help:
	@echo "make deps      install packages and tools (qemu/install-deps)"
	@echo "make kernel    build or reuse the cached test kernel (qemu/build-kernel)"
	@echo "make module    build rvs.ko (KDIR=<6.12 CONFIG_RUST tree> to override)"
	@echo "make rvsadm    build the userspace tool"
	@echo "make demo      README's main job: balance real traffic in the VM"
	@echo "make test      README's test command: host tests + VM tests"
	@echo "make clippy    clippy on module (CLIPPY=1), rvsadm and rvs/core"
	@echo "make fmt       rustfmt everything"

deps:
	qemu/install-deps

kernel: deps
	qemu/build-kernel

module:
	@test -n "$(KDIR)" || { echo "no kernel tree: run 'make kernel' or pass KDIR="; exit 1; }
	$(KMAKE) modules

rvsadm:
	cd rvsadm && cargo build --release --quiet

clippy:
	$(KMAKE) CLIPPY=1 modules
	cd rvsadm && cargo clippy --all-targets -- -D warnings
	cd rvs/core && cargo clippy --all-targets -- -D warnings

fmt:
	rustfmt --edition 2021 --config-path $(KDIR)/.rustfmt.toml \
		$(filter-out rvs/bindings_generated.rs,$(wildcard rvs/*.rs))
	cd rvsadm && cargo fmt
	cd rvs/core && cargo fmt

# README's main job: everything from a fresh machine to balanced traffic.
demo:
	@qemu/install-deps
	@qemu/build-kernel >/dev/null
	@$(MAKE) -s module rvsadm
	@qemu/run --no-build -- tests/demo.sh

# README's test command: host unit tests, then every VM test in one boot.
test:
	@tests/run-all

clean:
	-$(KMAKE) clean
	rm -f rvs/bindings_generated.rs
	cd rvsadm && cargo clean
