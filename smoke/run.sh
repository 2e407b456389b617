#!/usr/bin/env bash
# Smoke run: every suite, every backend, a few iterations; the short forms of capacity, of the
# network grid and of the cross-check on top (the network one says "skipped" where the machine cannot run it); `pqprof
# check` on the JSON; the site rendered from it and checked against it. Fails (non-zero) if any phase
# fails verification or the identity "composed = sum of phases" breaks in the JSON or on the page.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${PQPROF:-target/release/pqprof}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
start=$(date +%s)
"$bin" run --suites suites --samples 2 --iterations 3 --rounds 1 --budget-ms 1 --quiet --out "$out/smoke.json"
"$bin" capacity --results "$out/smoke.json" --quick --connections 50 >/dev/null
"$bin" network --results "$out/smoke.json" --grid quick --per-point 6 --parallel 2 | tail -1
# Where the network ran, every cell has the emulator's clock beside its own: one wire time per
# handshake (`check` below holds each to its handshake); the report shows the 0%-loss cells' split.
python3 - "$out/smoke.json" <<'PY'
import base64, json, sys
def ints(v):
    # A raw array: packed (schema 4: "d1:", base64 of zigzag LEB128 differences) or a list.
    if isinstance(v, list):
        return v
    out, z, shift, prev = [], 0, 0, 0
    for b in base64.b64decode(v[3:]):
        z |= (b & 0x7F) << shift
        if b & 0x80:
            shift += 7
            continue
        prev = (prev + ((z >> 1) ^ -(z & 1))) % 2**64
        out.append(prev)
        z, shift = 0, 0
    return out
n = json.load(open(sys.argv[1])).get("network")
if n:
    for p in n["points"]:
        for c in p["cells"]:
            name = f'{c["stack"]} {c["group"]} at {p["rtt_ns"] / 1e6:.1f} ms, {p["loss_pct"]}%'
            ready, wire = ints(c["ready_ns"]), ints(c.get("wire_ns", []))
            if ready and (len(wire) != len(ready) or not c.get("split")):
                sys.exit(f"smoke: {name} has no wire time per handshake")
            if ready and p["rtt_ns"] > 0 and p["loss_pct"] == 0:
                s = c["split"]
                print(f'smoke: {name}: wire {s["wire_p50_ns"] / 1e6:.2f} ms, endpoint {s["endpoint_p50_ns"] / 1e6:.2f} ms (p50s; {c["model"]["round_trips"]:g} round trips)')
PY
# The cross-check's short form: liboqs's speed_kem (built once, about 2 minutes) against pqprof,
# 2 to 3 alternating rounds; no verdict is asked for, only that the section is made and recomputes.
"$bin" crosscheck --results "$out/smoke.json" --no-openssl --only ML-KEM-768 --rounds 2 --max-rounds 3 | tail -1
"$bin" check "$out/smoke.json"
"$bin" render "$out/smoke.json" --out "$out/site"
"$bin" check --site "$out/site" "$out/smoke.json"
echo "smoke: ok in $(( $(date +%s) - start )) s"
