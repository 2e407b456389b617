#!/usr/bin/env bash
# Reliability of the figure itself (a benchmark, not a test): runs the default measurement N times
# back to back (default 3) and reports the spread of every composed median, (max - min) / median,
# raw and calibrated by the run's reference workload, and of every delta vs baseline, in
# percentage points. The runs are kept in target/reliability/.
# Goal on a 2-core shared machine: <= 2% for the TLS and SSH suites.
# Usage: smoke/reliability.sh [RUNS] [extra pqprof run options]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${PQPROF:-target/release/pqprof}
runs=${1:-3}
shift || true
dir=target/reliability
rm -rf "$dir" && mkdir -p "$dir"
files=()
for i in $(seq 1 "$runs"); do
  "$bin" run --quiet --out "$dir/run-$i.json" "$@" 2>/dev/null
  files+=("$dir/run-$i.json")
done
"$bin" spread "${files[@]}" > "$dir/spread.txt"
echo "spread of composed medians over $runs runs ((max - min) / median):"
grep -v 'pp delta\|calibrated' "$dir/spread.txt" | sort -rn
echo "the same, calibrated by the reference workload timed in each run:"
grep 'calibrated' "$dir/spread.txt" | sort -rn
echo "spread of deltas vs baseline (percentage points):"
grep 'pp delta' "$dir/spread.txt" | sort -rn
echo "worst TLS/SSH composed median: $(grep -v 'pp delta\|calibrated' "$dir/spread.txt" | grep -E '(X25519|MLKEM768|curve25519|mlkem768x25519)' | grep -v 'round trip' | sort -rn | head -1)"
echo "worst calibrated: $(grep 'calibrated' "$dir/spread.txt" | grep -E '(X25519|MLKEM768|curve25519|mlkem768x25519)' | grep -v 'round trip' | sort -rn | head -1)"
