#!/usr/bin/env bash
# Render speed (a benchmark, not a test): the site from 1, 2, 3, 10 and 50 runs, each compared with
# the baseline. The runs are copies of a results file under other host fingerprints and times, so
# each is a machine of its own: the front page shows every one (the worst case for its size). Then
# 50 runs of one machine, at other times: the front page shows the newest, the history page all
# (what results/archive/ grows into).
# PQPROF=target/release/examples/render measures core's example, which takes the same arguments.
# The copies are written by core's example `copies` (built here if it is not), in this pqprof's
# schema and a run's default form (gzip), whatever the source file's.
# Usage: smoke/render-bench.sh [RESULTS.json]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${PQPROF:-target/release/pqprof}
cmd=("$bin" render)
[[ $bin == *examples/render ]] && cmd=("$bin")
src=${1:-$(ls results/vm-2*.json* | sort -t- -k2 | tail -1)}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
copies=${copies:-target/release/examples/copies}
[[ -x $copies ]] || cargo build --release --locked -p pqprof-core --example copies
"$copies" "$src" "$dir"
for n in 1 2 3 10 50; do
  files=()
  for i in $(seq 0 $((n - 1))); do files+=("$dir/run-$i.json.gz"); done
  start=$(date +%s.%N)
  "${cmd[@]}" "${files[@]}" --out "$dir/site-$n" >/dev/null
  end=$(date +%s.%N)
  printf 'render of %2d run(s), %d comparisons with the baseline: %.2f s, index.html %d kB\n' "$n" $((n - 1)) \
    "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" $(( $(stat -c %s "$dir/site-$n/index.html") / 1000 ))
done
start=$(date +%s.%N)
"${cmd[@]}" "$dir"/one-*.json.gz --out "$dir/site-one" >/dev/null
end=$(date +%s.%N)
printf 'render of 50 runs of one machine (history): %.2f s, index.html %d kB, history.html %d kB\n' \
  "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" $(( $(stat -c %s "$dir/site-one/index.html") / 1000 )) \
  $(( $(stat -c %s "$dir/site-one/history.html") / 1000 ))
