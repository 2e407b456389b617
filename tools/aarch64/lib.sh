# Shared by the tools/aarch64 scripts (sourced, not run). Everything heavy lives in one cache
# folder, so a second run reuses the root, qemu, the cargo home and the target dirs:
#   $CACHE/root          Debian sid with the arm64 cross toolchain and Rust (make-root.sh)
#   $CACHE/qemu          qemu-aarch64 with TCG plugins and libpqcount.so (build-qemu.sh)
#   $CACHE/cargo-home    crates.io index and sources
#   $CACHE/target        the cross build (vendored OpenSSL, as measured); target-short: the CI form
#   $CACHE/timings.txt   each step's wall time, appended
# PQPROF_AARCH64_CACHE chooses the folder (default ~/.cache/pqprof-aarch64).
# shellcheck shell=bash

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TOOLS=$REPO/tools/aarch64
CACHE=${PQPROF_AARCH64_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pqprof-aarch64}
mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd -P)
ROOT=$CACHE/root
PREFIX=$CACHE/qemu
QEMU=$PREFIX/bin/qemu-aarch64
PLUGIN=$PREFIX/lib/libpqcount.so
TARGET=aarch64-unknown-linux-gnu
# Other work on the machine goes first: every heavy step is niced and idle-class for the disk.
NICE=(nice -n 19 ionice -c3)
# One cargo build at a time on a shared machine (the lock every cargo invocation here takes).
CARGO_LOCK=${PQPROF_CARGO_LOCK:-/tmp/pqprof-cargo.lock}
JOBS=${JOBS:-2}

# in_root [--emulate] CMD: runs the shell command CMD in the root (see in-root.sh).
in_root() {
    "$TOOLS/in-root.sh" "$@"
}

# step NAME CMD...: runs CMD, then prints and appends its wall time to $CACHE/timings.txt.
step() {
    local name=$1
    shift
    local t0 t1
    t0=$(date +%s.%N)
    echo "=== aarch64: $name"
    "$@"
    t1=$(date +%s.%N)
    printf '%-12s %7.1f s  (%s, load %s)\n' "$name" "$(echo "$t1 - $t0" | bc)" \
        "$(date -u +%FT%TZ)" "$(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$CACHE/timings.txt"
}
