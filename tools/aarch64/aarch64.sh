#!/bin/bash
# aarch64.sh [--short] [STEP...] -- `make aarch64`: pqprof for aarch64, built and tested here under
# emulation, and its instructions per phase counted on fixed emulated CPUs beside x86-64's.
#
# Steps (default: all, in this order; each is skipped or fast when its cache holds):
#   root       make-root.sh: Debian sid with the arm64 cross toolchain and Rust ($CACHE/root)
#   qemu       build-qemu.sh: qemu-aarch64 with TCG plugins from Debian's source package, and the
#              counting plugin libpqcount.so ($CACHE/qemu)
#   counttest  the plugin's exactness test (counttest/check.sh: regions of known size)
#   build      the cross build of pqprof for aarch64-unknown-linux-gnu ($CACHE/target), then a check
#              that the counting markers survived (two distinct symbols around the counted call)
#   test       both crates' tests under qemu-user (-cpu neoverse-n1)
#   count      `pqprof run --counter instructions` under qemu on each CPU of $CPUS: a results file
#              marked emulated per CPU in results/, checked; neoverse-n1 counted twice and the seeded
#              backends' counts compared call by call
#   x86        the same suites on this machine (x86-64) with callgrind: the other side of the table
#
# --short (the CI form, .ci/run): the cross build links Debian's static arm64 OpenSSL instead of
# building OpenSSL 3.5 from openssl-src (about 4 of its 10 minutes), into $CACHE/target-short; the
# tests are pqprof-core's; one phase is counted (ML-KEM-768 keygen, liboqs), twice, into /tmp. It
# checks that the whole thing builds, runs and counts; it measures nothing that is kept.
#
# Environment: PQPROF_AARCH64_CACHE (the cache folder, default ~/.cache/pqprof-aarch64), CPUS
# (default "neoverse-n1 neoverse-v1"), JOBS (2). Each step's wall time is appended to
# $CACHE/timings.txt.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
cd "$REPO"
short=
if [[ ${1:-} == --short ]]; then
    short=1
    shift
fi
CPUS=${CPUS:-neoverse-n1 neoverse-v1}
SUITES=tools/aarch64/suites
# The backends that build for aarch64: every one but the Go peer (another program, built by
# peers/go for the host).
BACKENDS=(liboqs libcrux rustcrypto awslc openssl)
if [[ -n $short ]]; then
    TDIR=$CACHE/target-short
    # OPENSSL_ROOT_DIR: a folder with include/ and lib/ for liboqs's cmake (its FindOpenSSL does not
    # look in the multiarch lib folder when cross-compiling); -lz -lzstd: Debian's libcrypto.a
    # needs them, at the end of the link line.
    BUILD_ENV="OPENSSL_NO_VENDOR=1 OPENSSL_STATIC=1 \
AARCH64_UNKNOWN_LINUX_GNU_OPENSSL_LIB_DIR=/usr/lib/aarch64-linux-gnu \
AARCH64_UNKNOWN_LINUX_GNU_OPENSSL_INCLUDE_DIR=/usr/include \
OPENSSL_ROOT_DIR=$CACHE/openssl-arm64 \
CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUSTFLAGS='-C link-arg=-lz -C link-arg=-lzstd'"
    FEATURES="--no-default-features --features oqs-system-openssl"
else
    TDIR=$CACHE/target
    BUILD_ENV=
    FEATURES=
fi
BIN=$TDIR/$TARGET/release/pqprof
CARGO="CARGO_TARGET_DIR=$TDIR $BUILD_ENV \
CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER='$QEMU -cpu neoverse-n1' \
nice -n 19 ionice -c3 flock $CARGO_LOCK cargo --config tools/aarch64/cargo-config.toml"

do_root() { "$TOOLS/make-root.sh"; }
do_qemu() { "$TOOLS/build-qemu.sh"; }
do_counttest() { "$TOOLS/counttest/check.sh" | tail -1; }

do_build() {
    if [[ -n $short ]]; then
        mkdir -p "$CACHE/openssl-arm64"
        ln -sfn /usr/include "$CACHE/openssl-arm64/include"
        ln -sfn /usr/lib/aarch64-linux-gnu "$CACHE/openssl-arm64/lib"
    fi
    in_root "$CARGO build --release --locked --target $TARGET -j$JOBS $FEATURES --bin pqprof"
    # The plugin finds the markers by name in the binary's symbol table: both must be there, at
    # two addresses (function merging or identical-code folding would leave one name).
    local syms
    syms=$(in_root "aarch64-linux-gnu-nm $BIN" | awk '$3 ~ /^pqprof_count_(begin|end)$/ {print $1, $3}')
    [[ $(echo "$syms" | awk '{print $1}' | sort -u | wc -l) -eq 2 ]] || {
        echo "aarch64: the counting markers are missing or merged in $BIN: $syms" >&2
        exit 1
    }
    echo "aarch64: $BIN ($(du -h "$BIN" | cut -f1)); markers: $(echo "$syms" | tr '\n' ' ')"
}

# Tests run under qemu-user through cargo's runner; --emulate lets a test start the aarch64
# pqprof binary itself (a binfmt_misc entry in a user namespace: in-root.sh).
do_test() {
    # The network grid's tests need network namespaces, which a user namespace inside the root
    # does not give: they are left out under emulation (and run in `make test` on the host).
    local what="--workspace" skip="-- --skip the_quick_grid_measures_the_link_and_check_recomputes_it \
--skip an_interrupted_or_killed_run_leaves_nothing_behind"
    local features=$FEATURES
    # pqprof-core alone needs none of the libraries, so none of the root crate's features; its unit
    # tests (the statistics, the models, the parsers: the arithmetic that could differ) and not its
    # site tests, which render every committed results file and took 297 s of the short form's 528
    # under qemu on a Zen 3 VM (they run natively in `make test`; the full form runs them here).
    [[ -z $short ]] || { what="-p pqprof-core --lib"; skip=; features=; }
    in_root --emulate "$CARGO test --release --locked --no-fail-fast --target $TARGET -j$JOBS $features $what $skip \
        2>&1" | tee "$CACHE/test.log" | grep -E '^test result|FAILED|panicked|^     Running' || true
    local passed failed
    passed=$(awk '/^test result/ {s += $4} END {print s + 0}' "$CACHE/test.log")
    failed=$(awk '/^test result/ {s += $6} END {print s + 0}' "$CACHE/test.log")
    echo "aarch64: tests under qemu-aarch64 -cpu neoverse-n1: $passed passed, $failed failed"
    [[ $failed -eq 0 ]] && grep -q '^test result' "$CACHE/test.log"
}

# One emulated run: pqprof (aarch64) under qemu -cpu CPU, counting with the plugin into OUT.
# Address-space randomization off (setarch -R, inherited by the counting children): glibc's memcpy
# takes a few instructions more or less with its buffers' alignment, so with randomized heaps a
# seeded phase's count moved by a constant between runs (CI saw 305,493 against 305,580 on every
# liboqs ML-KEM-1024 encaps call).
emulated_run() {
    local cpu=$1 out=$2
    shift 2
    in_root "setarch $(uname -m) -R $QEMU -cpu $cpu $BIN run --quiet --counter instructions --emulator $QEMU \
        --emulated-cpu $cpu --qemu-plugin $PLUGIN --out $out $*"
    in_root "$QEMU -cpu $cpu $BIN check $out"
}

do_count() {
    local args=(--suites "$SUITES")
    for b in "${BACKENDS[@]}"; do args+=(--backend "$b"); done
    if [[ -n $short ]]; then
        args=(--suites "$SUITES/kex.toml" --backend liboqs)
        emulated_run neoverse-n1 /tmp/pqprof-aarch64-short-1.json "${args[@]}" --force
        emulated_run neoverse-n1 /tmp/pqprof-aarch64-short-2.json "${args[@]}" --force
        python3 "$TOOLS/same-counts.py" /tmp/pqprof-aarch64-short-1.json \
            /tmp/pqprof-aarch64-short-2.json
        return
    fi
    local cpu out models
    models=$(in_root "$QEMU -cpu help" || true)
    for cpu in $CPUS; do
        if ! grep -qw -- "$cpu" <<<"$models"; then
            echo "aarch64: this qemu has no -cpu $cpu; not counted"
            continue
        fi
        out=$(in_root "$QEMU -cpu $cpu $BIN results-path --emulator $QEMU --emulated-cpu $cpu")
        echo "aarch64: counting under -cpu $cpu into $out"
        emulated_run "$cpu" "$out" "${args[@]}"
        if [[ $cpu == neoverse-n1 ]]; then
            # A second run: the seeded backends' counts must repeat call for call.
            emulated_run "$cpu" /tmp/pqprof-aarch64-again.json "${args[@]}" --force
            python3 "$TOOLS/same-counts.py" "$out" /tmp/pqprof-aarch64-again.json
        fi
    done
}

# The x86-64 side: this machine's pqprof (make build) on the same suites, timed and counted with
# callgrind; on an aarch64 host this is the real aarch64 run instead.
do_x86() {
    flock "$CARGO_LOCK" cargo build --release --locked
    local out args=(--suites "$SUITES" --counter instructions --quiet --budget-ms 500)
    for b in "${BACKENDS[@]}"; do args+=(--backend "$b"); done
    out=$(target/release/pqprof results-path)
    echo "aarch64: this machine's ($(uname -m)) counts into $out"
    target/release/pqprof run "${args[@]}" --out "$out"
    target/release/pqprof check "$out"
}

steps=("$@")
if [[ ${#steps[@]} -eq 0 ]]; then
    steps=(root qemu counttest build test count)
    [[ -n $short ]] || steps+=(x86)
fi
for s in "${steps[@]}"; do
    step "$s${short:+-short}" "do_$s"
done
echo "aarch64: cache $CACHE: $(du -sh --one-file-system "$CACHE" 2>/dev/null | cut -f1)"
