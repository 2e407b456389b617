#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 60) with cargo-fuzz on a nightly toolchain,
# starting from the committed seed corpus (fuzz/corpus/TARGET, read only) and a working corpus in
# fuzz/work/TARGET. A crash leaves its input in fuzz/artifacts/TARGET and fails the script.
# Where nightly or cargo-fuzz is missing, says so in one line and exits 0.
# PQPROF_FUZZ_TARGET_DIR puts the instrumented build elsewhere than fuzz/target (CI keeps it in its
# cache: a fresh build of the targets is minutes).
# Usage: fuzz/run.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:-60}
shift || true
if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "fuzz: skipped: no nightly toolchain (rustup toolchain install nightly)"; exit 0
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked >/dev/null 2>&1 || { echo "fuzz: skipped: cargo-fuzz could not be installed"; exit 0; }
fi
tdir=(--target-dir "${PQPROF_FUZZ_TARGET_DIR:-target}")
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(cargo +nightly fuzz list)
cargo +nightly fuzz build -O "${tdir[@]}" >/dev/null 2>&1 || cargo +nightly fuzz build -O "${tdir[@]}"
for t in "${targets[@]}"; do
  mkdir -p "work/$t"
  log="work/$t.log"
  if cargo +nightly fuzz run -O "${tdir[@]}" "$t" "work/$t" "corpus/$t" -- -max_total_time="$secs" -max_len=16384 -timeout=10 >"$log" 2>&1; then
    echo "fuzz $t: $(grep -aE '^Done' "$log" | tail -1); $(grep -aoE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)"
  else
    echo "fuzz $t: FAILED, see fuzz/$log and fuzz/artifacts/$t" >&2
    tail -20 "$log" >&2
    exit 1
  fi
done
