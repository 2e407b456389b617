#!/usr/bin/env bash
# Render speed (a benchmark, not a test): the site from 1, 2, 3, 10 and 50 runs, each compared with
# the baseline. The runs are copies of a results file under other host fingerprints and times, so
# each is a machine of its own: the front page shows every one (the worst case for its size). Then
# 50 runs of one machine, at other times: the front page shows the newest, the history page all
# (what results/archive/ grows into).
# PQPROF=target/release/examples/render measures core's example, which takes the same arguments.
# Usage: smoke/render-bench.sh [RESULTS.json]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${PQPROF:-target/release/pqprof}
cmd=("$bin" render)
[[ $bin == *examples/render ]] && cmd=("$bin")
src=${1:-$(ls results/*.json | tail -1)}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 - "$src" "$dir" <<'PY'
import json, sys
src, out = sys.argv[1], sys.argv[2]
r = json.load(open(src))
for i in range(50):
    r["run"]["host"]["fingerprint"] = f"{i:06x}"
    r["run"]["date_utc"] = f"2026-11-30T00:00:{i:02d}Z"
    json.dump(r, open(f"{out}/run-{i}.json", "w"))
r["run"]["host"]["fingerprint"] = "a0a0a0"
for i in range(50):
    r["run"]["date_utc"] = f"2026-11-30T{i // 60:02d}:{i % 60:02d}:30Z"
    json.dump(r, open(f"{out}/one-{i}.json", "w"))
PY
for n in 1 2 3 10 50; do
  files=()
  for i in $(seq 0 $((n - 1))); do files+=("$dir/run-$i.json"); done
  start=$(date +%s.%N)
  "${cmd[@]}" "${files[@]}" --out "$dir/site-$n" >/dev/null
  end=$(date +%s.%N)
  printf 'render of %2d run(s), %d comparisons with the baseline: %.2f s, index.html %d kB\n' "$n" $((n - 1)) \
    "$(echo "$end - $start" | bc)" $(( $(stat -c %s "$dir/site-$n/index.html") / 1000 ))
done
start=$(date +%s.%N)
"${cmd[@]}" "$dir"/one-*.json --out "$dir/site-one" >/dev/null
end=$(date +%s.%N)
printf 'render of 50 runs of one machine (history): %.2f s, index.html %d kB, history.html %d kB\n' \
  "$(echo "$end - $start" | bc)" $(( $(stat -c %s "$dir/site-one/index.html") / 1000 )) \
  $(( $(stat -c %s "$dir/site-one/history.html") / 1000 ))
