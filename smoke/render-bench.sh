#!/usr/bin/env bash
# Render speed (a benchmark, not a test): the site from 1, 2, 3 and 10 runs, each compared with the
# baseline. The runs are copies of a results file under other host fingerprints and times.
# Usage: smoke/render-bench.sh [RESULTS.json]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${PQPROF:-target/release/pqprof}
src=${1:-$(ls results/*.json | head -1)}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 - "$src" "$dir" <<'PY'
import json, sys
src, out = sys.argv[1], sys.argv[2]
r = json.load(open(src))
for i in range(10):
    r["run"]["host"]["fingerprint"] = f"{i:06x}"
    r["run"]["date_utc"] = f"2026-11-30T00:00:{i:02d}Z"
    json.dump(r, open(f"{out}/run-{i}.json", "w"))
PY
for n in 1 2 3 10; do
  files=()
  for i in $(seq 0 $((n - 1))); do files+=("$dir/run-$i.json"); done
  start=$(date +%s.%N)
  "$bin" render "${files[@]}" --out "$dir/site-$n" >/dev/null
  end=$(date +%s.%N)
  printf 'render of %2d run(s), %d comparisons with the baseline: %.2f s\n' "$n" $((n - 1)) "$(echo "$end - $start" | bc)"
done
