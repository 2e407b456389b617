#!/usr/bin/env bash
# Reliability of the figure itself (a benchmark, not a test): runs the default measurement N times
# back to back (default 3) and reports the spread of every composed median: (max - min) / median.
# The goal on a 2-core shared machine is <= 2% for the TLS and SSH suites.
# Usage: smoke/reliability.sh [RUNS] [extra pqprof run options]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${PQPROF:-target/release/pqprof}
runs=${1:-3}
shift || true
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
files=()
for i in $(seq 1 "$runs"); do
  "$bin" run --quiet --out "$dir/run-$i.json" "$@" 2>/dev/null
  files+=("$dir/run-$i.json")
done
echo "spread of composed medians over $runs runs ((max - min) / median):"
"$bin" spread "${files[@]}" | sort -rn | tee "$dir/spread.txt"
worst=$(grep -E '(X25519|MLKEM768|curve25519|mlkem768x25519)' "$dir/spread.txt" | grep -v 'round trip' | sort -rn | head -1)
echo "worst TLS/SSH suite: $worst"
