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
	kernel-debug module-debug test-debug check-layers \
	install install-module install-rvsadm install-dkms uninstall deb

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
	@echo "make module    build rvs.ko and rvs_rs.ko (KDIR=<6.12 CONFIG_RUST tree>, RVS_RUSTC=, RVS_BINDGEN= to override)"
	@echo "make rvsadm    build the userspace tool"
	@echo "make demo      README's main job: balance real traffic in the VM"
	@echo "make test      README's test command: host tests + VM tests"
	@echo "make kernel-debug  build or reuse the debug kernel (KASAN, kmemleak, lockdep, UBSAN)"
	@echo "make module-debug  build .build/debug/rvs.ko against it"
	@echo "make test-debug    the whole suite on the debug kernel, kmemleak scan at the end (slow)"
	@echo "make clippy    tools/check-layers, then clippy on module (CLIPPY=1), rvsadm and rvs/core"
	@echo "make check-layers  the module's layering rules (no unsafe in rvs/lb, no import cycles)"
	@echo "make fmt       rustfmt everything"
	@echo "make install   rvs.ko, rvs_rs.ko (KDIR=, KVER=), rvsadm, man page, completions, unit; DESTDIR-aware"
	@echo "make install-dkms  the module's sources and dkms.conf under /usr/src (then dkms install rvs/$(VERSION))"
	@echo "make uninstall what make install and install-dkms put there"
	@echo "make deb       Debian packages rvsadm and rvs-dkms into .build/deb/"

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
		$(filter-out rvs/bindings_generated.rs,$(wildcard rvs/*.rs rvs/sys/*.rs rvs/lb/*.rs rvs/lb/sync/*.rs rvs/rs/*.rs))
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

# Installation (DESTDIR-aware; the Debian packages are made with these).
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' rvsadm/Cargo.toml)
PREFIX ?= /usr
SBINDIR ?= $(PREFIX)/sbin
LIBEXECDIR ?= $(PREFIX)/libexec
MAN8DIR ?= $(PREFIX)/share/man/man8
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/vendor-completions
UNITDIR ?= $(shell pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || echo /lib/systemd/system)
SYSCONFDIR ?= /etc
DKMSDIR ?= $(PREFIX)/src/rvs-$(VERSION)
# The kernel rvs.ko is built for (KDIR's), and where its modules live.
KVER ?= $(shell cat $(KDIR)/include/config/kernel.release 2>/dev/null)
MODDIR ?= /lib/modules/$(KVER)/extra
RVSADM_BIN = $(or $(CARGO_TARGET_DIR),target)/release/rvsadm
# The module's sources as DKMS builds them: every Rust file at any depth
# (a new subdirectory such as rvs/core/sync/ must not be left out), but
# the generated bindings and the core's host-only tests.
DKMS_SRC = Kbuild rvs/bindings.h rvs/bindings.allow rvs/helpers.c rvs/helpers.h rvs/rs_helpers.c \
	rvs/uapi/rvs.h $(sort $(filter-out rvs/bindings_generated.rs rvs/core/tests/%,\
	$(shell find rvs -name '*.rs')))
# conffile SRC DEST: an /etc file, kept if there is one already.
conffile = test -e $(DESTDIR)$(2) || install -D -m 0644 $(1) $(DESTDIR)$(2)

install: install-module install-rvsadm

install-module: module
	@test -n "$(KVER)" || { echo "no kernel release in $(KDIR)/include/config/kernel.release: pass KVER="; exit 1; }
	install -D -m 0644 rvs.ko $(DESTDIR)$(MODDIR)/rvs.ko
	install -D -m 0644 rvs_rs.ko $(DESTDIR)$(MODDIR)/rvs_rs.ko
	$(call conffile,packaging/modprobe.conf,$(SYSCONFDIR)/modprobe.d/rvs.conf)
	@# depmod in DESTDIR only where a kernel is installed there (a scratch root).
	@if [ -z "$(DESTDIR)" ]; then echo "depmod $(KVER)"; depmod $(KVER); \
	elif [ -f $(DESTDIR)/lib/modules/$(KVER)/modules.builtin ]; then \
		echo "depmod -b $(DESTDIR) $(KVER)"; depmod -b $(DESTDIR) $(KVER); \
	else echo "depmod skipped: no kernel $(KVER) in $(DESTDIR) (run depmod $(KVER) where it is installed)"; fi

install-rvsadm: rvsadm
	install -D -m 0755 $(RVSADM_BIN) $(DESTDIR)$(SBINDIR)/rvsadm
	install -D -m 0644 Documentation/rvsadm.8 $(DESTDIR)$(MAN8DIR)/rvsadm.8
	install -d $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	$(RVSADM_BIN) --completions bash >$(DESTDIR)$(BASHCOMPDIR)/rvsadm
	$(RVSADM_BIN) --completions zsh >$(DESTDIR)$(ZSHCOMPDIR)/_rvsadm
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(LIBEXECDIR)/rvs $(DESTDIR)$(SYSCONFDIR)/rvs
	sed 's|@LIBEXECDIR@|$(LIBEXECDIR)|g' packaging/rvs.service.in >$(DESTDIR)$(UNITDIR)/rvs.service
	sed 's|@SBINDIR@|$(SBINDIR)|g' packaging/rvs-service.in >$(DESTDIR)$(LIBEXECDIR)/rvs/rvs-service
	chmod 0755 $(DESTDIR)$(LIBEXECDIR)/rvs/rvs-service
	$(call conffile,packaging/default,$(SYSCONFDIR)/default/rvs)

install-dkms:
	@for f in $(DKMS_SRC); do install -D -m 0644 $$f $(DESTDIR)$(DKMSDIR)/$$f || exit 1; done
	install -m 0755 -D -t $(DESTDIR)$(DKMSDIR)/dkms dkms/rvs-check-kernel dkms/rvs-dkms-build
	sed 's|@VERSION@|$(VERSION)|g' dkms/dkms.conf.in >$(DESTDIR)$(DKMSDIR)/dkms.conf
	$(call conffile,packaging/modprobe.conf,$(SYSCONFDIR)/modprobe.d/rvs.conf)

# Leaves /etc alone (the operator's settings and rules), as dpkg's remove does.
uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/rvsadm $(DESTDIR)$(MAN8DIR)/rvsadm.8 \
		$(DESTDIR)$(BASHCOMPDIR)/rvsadm $(DESTDIR)$(ZSHCOMPDIR)/_rvsadm \
		$(DESTDIR)$(UNITDIR)/rvs.service $(DESTDIR)$(LIBEXECDIR)/rvs/rvs-service
	-rmdir $(DESTDIR)$(LIBEXECDIR)/rvs
	rm -rf $(DESTDIR)$(DKMSDIR)
	@if [ -n "$(KVER)" ] && [ -f $(DESTDIR)$(MODDIR)/rvs.ko ]; then \
		rm -f $(DESTDIR)$(MODDIR)/rvs.ko $(DESTDIR)$(MODDIR)/rvs_rs.ko; \
		[ -n "$(DESTDIR)" ] || depmod $(KVER); fi

# Debian packages (packaging/debian/) built from a copy of the sources.
deb:
	packaging/make-deb

clean:
	-$(KMAKE) clean
	rm -f rvs/bindings_generated.rs
	rm -rf .build
	cargo clean
