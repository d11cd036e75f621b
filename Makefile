# ECVKit: two commands for a fresh Debian 12 machine: `make demo` and `make test`.
# Both install missing system packages first (`make deps`), quietly when all are present.

SWIFT ?= swift
# The optional ECVSpeech product (pocketsphinx, espeak-ng), which the ecv CLI links for
# `ecv agent --voice` and `ecv demo --bot`. The SDK products (ECV, ECVAgent, ECVPeer) do not.
SPEECH_DEB_PACKAGES := libpocketsphinx-dev pocketsphinx-en-us gstreamer1.0-espeak
# Debian packages the build, the tests and the demo need.
DEB_PACKAGES := libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev libgstreamer-plugins-bad1.0-dev \
	libnice-dev gstreamer1.0-nice gstreamer1.0-plugins-base gstreamer1.0-plugins-good \
	gstreamer1.0-plugins-bad gstreamer1.0-plugins-ugly gstreamer1.0-libav gstreamer1.0-tools gstreamer1.0-plugins-base-apps \
	libsoup-3.0-dev libssl-dev glib-networking openssl pkg-config fonts-dejavu-core $(SPEECH_DEB_PACKAGES)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# SwiftPM warns about -pthread in pkg-config flags; it is harmless, so keep it out of the output.
QUIET_PTHREAD := 2>&1 | grep --line-buffered -v "prohibited flag(s): -pthread" ; exit $${PIPESTATUS[0]}
SHELL := /bin/bash

# Test-only: the interop tests' foreign peers (Tests/Interop), the network lab's tools, gdb for the
# suite watchdog's thread stacks (Tests/Support/run-suite.sh) and coturn, the TURN server of the relay-only
# tests (Tests/ECVAgentTests/RelayOnlyTests.swift), and man-db, which renders the installed
# manual page in ReadmeTourTests, and zsh, which loads the installed zsh completion there. `make demo` needs none of these.
TEST_DEB_PACKAGES := chromium chromium-driver python3-venv nftables iproute2 gdb coturn man-db zsh espeak-ng
INTEROP_VENV := .build/interop-venv
INTEROP_REQUIREMENTS := Tests/Interop/requirements.txt
INTEROP_NODEPS := Tests/Interop/requirements-nodeps.txt

.PHONY: deps test-deps bench-deps build test demo bench fuzz sanitize clean install install-build uninstall

deps:
	@missing=$$(dpkg-query -W -f='$${Status} $${Package}\n' $(DEB_PACKAGES) 2>/dev/null \
		| awk '$$3 == "installed" { print $$4 }' | sort > /tmp/.ecv-installed; \
		for p in $(DEB_PACKAGES); do grep -qx "$$p" /tmp/.ecv-installed || echo "$$p"; done); \
	rm -f /tmp/.ecv-installed; \
	if [ -n "$$missing" ]; then \
		echo "Installing missing packages:" $$missing; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

build: deps
	@$(SWIFT) build $(QUIET_PTHREAD)

# Installs what is missing, prints nothing when all is there; the venv is rebuilt only when the
# requirements file changed since its stamp.
test-deps: deps
	@missing=$$(for p in $(TEST_DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}\n' "$$p" 2>/dev/null | grep -q "ok installed" || echo "$$p"; done); \
	if [ -n "$$missing" ]; then \
		echo "Installing test-only packages:" $$missing; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
	@$(MAKE) -s --no-print-directory $(INTEROP_VENV)/.installed

$(INTEROP_VENV)/.installed: $(INTEROP_REQUIREMENTS) $(INTEROP_NODEPS)
	@[ -x $(INTEROP_VENV)/bin/python ] || python3 -m venv $(INTEROP_VENV)
	@$(INTEROP_VENV)/bin/pip install --quiet --disable-pip-version-check -r $(INTEROP_REQUIREMENTS)
	@$(INTEROP_VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps --ignore-requires-python -r $(INTEROP_NODEPS)
	@touch $@

# The try? rule (each reports its failure or says why not), the products' public API, Package.swift's
# dependencies against the imports, a short smoke of every fuzz target (FUZZ_SMOKE_SECONDS each: about
# 50 s in all once the fuzz builds are cached in .build/fuzz; building them all first takes about
# 1.5 min), then the suite. The checks and the smoke come first because they fail in minutes where the
# suite takes twenty.
test: test-deps
	@Tests/Support/check-try.sh $$(ls -d Sources/*/ | grep -v '^Sources/C')
	@Tests/Support/check-public-api.sh
	@Tests/Support/check-dependencies.sh
	@Tests/Fuzz/run.sh $${FUZZ_SMOKE_SECONDS:-4}
	@SWIFT="$(SWIFT)" Tests/Support/run-suite.sh --no-parallel

# libFuzzer targets (swiftc -sanitize=fuzzer,address; Tests/Fuzz/run.sh), one per parser of outside
# input: REST bodies, signaling and collider JSON, queue and agent socket frames, pc_config and its
# ICE URLs, data-channel commands, received SDP, preset files, log escaping, the DER walker of
# pins, the HTTP request head (Content-Length, Transfer-Encoding, folding), the query string and
# bearer header, the Origin check. Each runs FUZZ_SECONDS (60) from its seeds in Tests/Fuzz/corpus/<target>, checking its
# properties (round trips, the parser's own rules), and prints executions, corpus and coverage
# per target and in total; a crash fails with the reproducer's path. Builds are cached in .build/fuzz.
fuzz:
	@Tests/Fuzz/run.sh $${FUZZ_SECONDS:-60}

# The suite built with ASan and with TSan (.build/asan, .build/tsan) and run under each, without
# InteropTests (Tests/Sanitize/run.sh says why); TSan suppressions with reasons in
# Tests/Sanitize/tsan.supp. Slow (see README, Security model); not part of `make test`.
sanitize: deps
	@Tests/Sanitize/run.sh

demo: deps
	@$(SWIFT) run ecv demo $(QUIET_PTHREAD)

# Benchmark-only: Go and Debian's Pion for the Pion side of `bench-call cost` (Benchmarks/pion,
# built in GOPATH mode against /usr/share/gocode when the benchmark runs). Neither the build, the
# tests nor the demo need them.
BENCH_DEB_PACKAGES := golang-go golang-github-pion-webrtc.v3-dev

bench-deps: deps
	@missing=$$(for p in $(BENCH_DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}\n' "$$p" 2>/dev/null | grep -q "ok installed" || echo "$$p"; done); \
	if [ -n "$$missing" ]; then \
		echo "Installing benchmark-only packages:" $$missing; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

bench: bench-deps
	@$(SWIFT) build -c release $(QUIET_PTHREAD)
	@Benchmarks/run.sh

clean:
	@$(SWIFT) package clean

# `make install` (PREFIX=/usr/local, DESTDIR for staging): ecv built in release mode with the Swift
# runtime linked in (it runs without the toolchain's libraries), its manual page ecv(1) made from
# its own help (`ecv manual`), and its bash and zsh completion (`ecv completion bash|zsh`, in the
# folders bash-completion and zsh's compinit look in). ECV_BIN=PATH installs an ecv already built
# instead (the test suite installs its debug build this way).
PREFIX ?= /usr/local
ECV_BIN ?=
RELEASE_ECV := .build/release/ecv

install: $(if $(ECV_BIN),,install-build)
	@bin="$(or $(ECV_BIN),$(RELEASE_ECV))"; root="$(DESTDIR)$(PREFIX)"; \
	install -d "$$root/bin" "$$root/share/man/man1" "$$root/share/bash-completion/completions" "$$root/share/zsh/site-functions" && \
	install -m 0755 "$$bin" "$$root/bin/ecv" && \
	"$$bin" manual > "$$root/share/man/man1/ecv.1" && \
	"$$bin" completion bash > "$$root/share/bash-completion/completions/ecv" && \
	"$$bin" completion zsh > "$$root/share/zsh/site-functions/_ecv" && \
	echo "installed $$root/bin/ecv, $$root/share/man/man1/ecv.1, $$root/share/bash-completion/completions/ecv," \
		"$$root/share/zsh/site-functions/_ecv"

install-build: deps
	@$(SWIFT) build -c release --static-swift-stdlib --product ecv $(QUIET_PTHREAD)

uninstall:
	@rm -f "$(DESTDIR)$(PREFIX)/bin/ecv" "$(DESTDIR)$(PREFIX)/share/man/man1/ecv.1" \
		"$(DESTDIR)$(PREFIX)/share/bash-completion/completions/ecv" "$(DESTDIR)$(PREFIX)/share/zsh/site-functions/_ecv"
