#!/usr/bin/env python3
"""same-counts.py A.json B.json -- two counted runs of the same suites, call by call.

Prints, per backend, how many phases counted the same instructions for every call in both runs,
and names the phases that did not. Exits 1 if a phase of a backend whose randomness pqprof seeds
(liboqs, libcrux, RustCrypto: src/counter/mod.rs) differs, or if the runs counted different phases:
for those, the counts are a function of the seeded inputs and must repeat exactly. OpenSSL's and
aws-lc's generators cannot be seeded, so a phase whose work depends on fresh randomness (a
rejection loop) may differ there; those are listed, not failed.
"""
import gzip
import json
import sys
from collections import defaultdict

SEEDED = {"liboqs", "libcrux", "rustcrypto"}


def counts(path):
    # A results file is JSON, or JSON through gzip (what a run writes by default).
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    with (gzip.open(path, "rt") if gz else open(path)) as f:
        r = json.load(f)
    return {
        (p["backend"], p["algorithm"], p["operation"], p.get("form", "handshake")): p["instructions"]["ir_calls"]
        for p in r["phases"]
        if p.get("instructions")
    }


a, b = counts(sys.argv[1]), counts(sys.argv[2])
bad = []
if a.keys() != b.keys():
    bad.append(f"phases counted in one run only: {sorted(a.keys() ^ b.keys())}")
same, differ = defaultdict(int), defaultdict(list)
for key in sorted(a.keys() & b.keys()):
    if a[key] == b[key]:
        same[key[0]] += 1
    else:
        differ[key[0]].append(f"{key[1]} {key[2]}")
        if key[0] in SEEDED:
            first = next((i for i, (x, y) in enumerate(zip(a[key], b[key])) if x != y), None)
            why = (f"{len(a[key])} calls counted against {len(b[key])}" if first is None
                   else f"call {first}: {a[key][first]} against {b[key][first]}")
            bad.append(f"{' '.join(key)}: {why}")
for backend in sorted(same.keys() | differ.keys()):
    line = f"same-counts: {backend}: {same[backend]} phases identical call for call"
    if differ[backend]:
        line += f", {len(differ[backend])} differ ({', '.join(differ[backend])})"
    print(line)
for problem in bad:
    print(f"same-counts: {problem}", file=sys.stderr)
sys.exit(1 if bad else 0)
