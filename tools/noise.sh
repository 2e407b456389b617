#!/usr/bin/env bash
# A noisy host on purpose, reproducibly: one busy loop (one core's worth of CPU, not pinned: the
# scheduler places it as it would another tenant's work) for a random span of 0.1-2 s, then idle
# for a random span of 0.1-2 s, again and again, the spans drawn from bash's RANDOM seeded with
# SEED. Used for #33's noisy-host runs: `tools/noise.sh & make run; kill %1`.
# Usage: tools/noise.sh [SECONDS (default: until killed)] [SEED (default 33)]
set -euo pipefail
limit=${1:-0}
RANDOM=${2:-33}
start=$SECONDS
child=
trap '[ -n "$child" ] && kill "$child" 2>/dev/null; exit 0' INT TERM EXIT
span() { printf '%d.%03d' $(( (100 + RANDOM % 1901) / 1000 )) $(( (100 + RANDOM % 1901) % 1000 )); }
while [ "$limit" -eq 0 ] || [ $(( SECONDS - start )) -lt "$limit" ]; do
  busy=$(span); idle=$(span)
  timeout "$busy" sh -c 'while :; do :; done' & child=$!
  wait "$child" || true
  child=
  sleep "$idle"
done
