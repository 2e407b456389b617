# pqprof: `make run` measures and renders; `make test` runs the tests and the smoke run.
CARGO ?= cargo
BIN := target/release/pqprof
# OUT=FILE chooses the results file; by default each run gets a new one that no other run takes
# (results/<host>-<UTC time>-<host fingerprint>.json.gz): nothing measured is ever overwritten.
OUT ?=
# BUDGET=S is `make run`'s time after the build, seconds (default 600: 10 minutes on 2 cores). Each
# step keeps to its share of it, whatever the host's speed: `run` 20% (120 s) for measuring,
# pooling and checking (the last two timed on the first process and kept for them); `handshake`
# 15% (90 s), `capacity` 15% (90 s) and `network` 33% (198 s) for the whole step, each shrinking
# its design to fit and saying so; each step's clock starts with its process and keeps 2% of its
# share for closing (writing the file; src/budget.rs); memory (~15 s), rendering and the last
# check take the rest.
BUDGET ?= 600

.PHONY: all build go-peer lab run render test smoke site-check crosscheck handshake openssl4 network-paquin aarch64 deps clean

all: run

deps:
	./.ci/deps

build: deps
	$(CARGO) build --release --locked
	@./peers/go/build.sh || echo "make: the Go stack is skipped (no Go peer: the line above says why)"
	@./tools/lab/root.sh >/dev/null || echo "make: the servers of servers/ are skipped (no lab root: the line above says why)"

# The lab root alone: a Debian trixie root with nginx, HAProxy and OpenSSH as Debian ships them
# (tools/lab/root.sh; made once, then cached in ~/.cache/pqprof-lab).
lab:
	./tools/lab/root.sh

# The Go peer alone (peers/go: Go's standard library as a backend and a TLS stack).
go-peer:
	./peers/go/build.sh

# `run` checks what it writes (less the composed intervals it has just resampled), and the new file
# is checked again once every step has added to it, with the site (the composed intervals of a
# sample of the suites resampled: `pqprof check --full FILE` resamples all); the files already in
# results/ and results/archive/ were checked when they were measured (`make render` checks them
# all, a few seconds each). The site shows the newest complete run of each machine, the new one
# beside the committed ones; every run is on its history page.
run: build
	@set -e; out="$(OUT)"; [ -n "$$out" ] || out=$$($(BIN) results-path); \
	echo "make run: measuring into $$out"; \
	t0=$$(date +%s); t=$$t0; times=""; \
	lap() { n=$$(date +%s); times="$$times $$1 $$(( n - t )) s,"; t=$$n; }; \
	$(BIN) run --out "$$out" --budget-s $$(( $(BUDGET) * 20 / 100 )); lap run; \
	$(BIN) memory --results "$$out"; lap memory; \
	$(BIN) handshake --results "$$out" --budget-s $$(( $(BUDGET) * 15 / 100 )); lap handshake; \
	$(BIN) capacity --results "$$out" --budget-s $$(( $(BUDGET) * 15 / 100 )); lap capacity; \
	$(BIN) network --results "$$out" --budget-s $$(( $(BUDGET) * 33 / 100 )); lap network; \
	$(BIN) render results results/archive --out site; \
	$(BIN) check --site site "$$out"; lap "render and check"; \
	echo "make run: $$(( $$(date +%s) - t0 )) s after the build (budget $(BUDGET) s):$${times%,}"

# The site from every committed or new results file (results/: one per machine; results/archive/:
# the older runs, on the history page); RENDER_FLAGS=--all puts every run on the front page.
render:
	$(BIN) render results results/archive --out site $(RENDER_FLAGS)
	$(BIN) check --site site results/*.json* results/archive/*.json*

test: build
	$(CARGO) test --release --locked --workspace
	@if [ -x target/go/pqprof-go-peer ]; then ./peers/go/build.sh test; fi
	./smoke/run.sh

smoke: build
	./smoke/run.sh

# Headless Chromium loads the site (smoke/browser: playwright-core on Debian's chromium): fails on
# no cards, console output, a page wider than 1280 or 390 px, a stacked bar without a legend;
# screenshots in target/.
site-check: build
	[ -f site/index.html ] || $(MAKE) render
	./smoke/site-check.sh site

# Real loopback TLS / SSH handshakes into the newest results file.
handshake: build
	$(BIN) handshake
	$(MAKE) render

# liboqs speed tools and openssl speed beside pqprof (builds the tools once, then about 3 minutes).
crosscheck: build
	$(BIN) crosscheck
	$(MAKE) render

# Paquin et al.'s whole grid (4 RTTs x 25 loss rates, every TLS group) into the newest results file;
# about an hour. NET_FLAGS adds options (e.g. --per-point 100 --rate-mbit 10).
network-paquin: build
	$(BIN) network --grid paquin --all-groups --force $(NET_FLAGS)
	$(MAKE) render

# OpenSSL 3.5 LTS beside 4.0: builds OpenSSL 4.0 and a second pqprof against it (once; about 3 + 5
# minutes), measures the OpenSSL phases and real handshakes with each, compares, renders.
openssl4: build
	./tools/openssl4.sh
	$(MAKE) render

# aarch64 without an aarch64 machine (tools/aarch64/aarch64.sh): a Debian sid cross root, qemu with
# plugins from Debian's source package, the cross build, both crates' tests under qemu-user, and each
# phase's instructions counted on emulated Neoverse-N1 and V1 into results files marked emulated,
# beside this machine's callgrind counts. About 25 min the first time, the caches
# (~/.cache/pqprof-aarch64, or PQPROF_AARCH64_CACHE) kept for the next.
aarch64: build
	./tools/aarch64/aarch64.sh

clean:
	$(CARGO) clean
