#!/usr/bin/env python3
"""Where a Go-peer stack's CPU per handshake goes, by perf's samples: for stacks pqprof cannot time
in situ (go and quic-go: crypto/tls and quic-go call the crypto inside the standard library).

    tools/perf-calls.py record OUT.json.gz [--stack go] [--budget-s 45]
    tools/perf-calls.py report OUT.json.gz

`record` runs `pqprof handshake` (on a copy of the newest results file, which it leaves alone)
under `perf record -a -g` (frame pointers: Go keeps them), snapshots the Go peer's processes'
command lines while it runs, then `pqprof run --backend go` for the phases' medians at the same
time (sampled alike, its samples dropped), and writes each process's samples as folded stacks
(leaf first) with both results to OUT.

`report` sets each client and server process's CPU per handshake (samples x period over the
scenario's stored handshakes) in categories: ML-KEM (any frame in crypto/internal/fips140/mlkem
or crypto/mlkem), ML-DSA, SHA-3 whose caller is lost (Go's Keccak permutation is assembly with
no frame pointer: with an ECDSA chain it is ML-KEM's, since nothing else there calls SHA-3),
X25519, P-256 and ECDSA, SHA-256/HMAC/HKDF, AES-GCM, the garbage collector, malloc and clearing,
and the rest (crypto/tls, quic-go, the runtime's scheduler and the kernel); the first category
that matches a sample takes it. Then ML-KEM's and X25519's CPU per handshake against the same
calls' means in a handshake's state (the phases'; a sum of samples is a mean), each side.

A sampling profile, not a timer: each sample stands for the period (200 us at 4,999 Hz), so a
category's figure has an error of about sqrt(samples) samples. The total per handshake is printed
beside the CPU the step stored (rusage), as a check that the pid's samples are that scenario's.
"""

import collections
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PQPROF = os.path.join(ROOT, "target", "release", "pqprof")
HZ = 4999

CATEGORIES = [
    ("ML-KEM", lambda leaf, s: "fips140/mlkem." in s or "crypto/mlkem." in s),
    ("ML-DSA", lambda leaf, s: "mldsa" in s),
    # Go's Keccak permutation is assembly without a frame pointer: its samples have no caller.
    # ML-KEM's and ML-DSA's; where the chain is ECDSA's, ML-KEM's alone.
    ("SHA-3, caller lost", lambda leaf, s: "fips140/sha3." in leaf),
    ("X25519", lambda leaf, s: "edwards25519" in s or "x25519" in s),
    ("P-256/ECDSA", lambda leaf, s: "nistec" in s or "ecdsa" in s or "bigmod" in s),
    ("SHA-256/HMAC/HKDF", lambda leaf, s: "sha256" in s or "hmac" in s or "hkdf" in s),
    ("AES-GCM", lambda leaf, s: "aes" in s or "gcm" in s),
    ("GC", lambda leaf, s: "gcBgMarkWorker" in s or "gcDrain" in s or "bgsweep" in s or "bgscavenge" in s),
    ("malloc/clear", lambda leaf, s: "mallocgc" in s or "memclr" in leaf),
]


def categorize(stacks):
    """Counter of folded stacks (leaf first, ';'-joined) -> Counter of categories."""
    c = collections.Counter()
    for stack, n in stacks.items():
        frames = stack.split(";")
        c["total"] += n
        for name, match in CATEGORIES:
            if match(frames[0], stack):
                c[name] += n
                break
        else:
            c["rest"] += n
    return c


def die(msg):
    sys.exit(f"perf-calls: {msg}")


def newest_results():
    d = os.path.join(ROOT, "results")
    files = [f for f in os.listdir(d) if re.match(r".*\.json(\.gz)?$", f)]
    if not files:
        die("no results file in results/")
    return os.path.join(d, max(files, key=lambda f: os.path.getmtime(os.path.join(d, f))))


def snapshot(stop, seen):
    while not stop.is_set():
        out = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True).stdout
        for line in out.splitlines():
            pid, _, args = line.strip().partition(" ")
            if "pqprof-go-peer" in args and (" client " in args or " serve " in args):
                seen[pid] = args
        time.sleep(1)


def samples(data):
    """pid -> Counter of folded stacks (leaf first) from `perf script`."""
    out = subprocess.run(["perf", "script", "-i", data, "-F", "pid,ip,sym"],
                         capture_output=True, text=True, check=True).stdout
    per = collections.defaultdict(collections.Counter)
    pid, frames = None, []
    for line in out.splitlines() + [""]:
        if not line.strip():
            if pid is not None and frames:
                per[pid][";".join(frames)] += 1
            pid, frames = None, []
        elif not line.startswith("\t"):
            pid, frames = line.split()[0], []
        else:
            parts = line.strip().split(None, 1)
            frames.append(parts[1] if len(parts) > 1 else "?")
    return per


def record(out, stacks, budget):
    if shutil.which("perf") is None:
        die("perf is not installed (Debian: linux-perf)")
    tmp = tempfile.mkdtemp(prefix="perf-calls-")
    res = os.path.join(tmp, "results.json.gz")
    shutil.copy(newest_results(), res)
    data = os.path.join(tmp, "perf.data")
    seen, stop = {}, threading.Event()
    t = threading.Thread(target=snapshot, args=(stop, seen))
    t.start()
    try:
        cmd = ["perf", "record", "-e", "cpu-clock", "-F", str(HZ), "-a", "-g", "-o", data, "--",
               PQPROF, "handshake", "--results", res, "--budget-s", str(budget), "--force"]
        for s in stacks:
            cmd += ["--stack", s]
        subprocess.run(cmd, check=True, cwd=ROOT)
    finally:
        stop.set()
        t.join()
    # The phases under the same sampling, so that its interruptions cost both sides alike.
    phases = os.path.join(tmp, "phases.json.gz")
    subprocess.run(["perf", "record", "-e", "cpu-clock", "-F", str(HZ), "-a", "-g", "-o",
                    os.path.join(tmp, "phases.data"), "--", PQPROF, "run", "--backend", "go",
                    "--budget-s", "30", "--out", phases, "--force", "--quiet"], check=True, cwd=ROOT)
    per = samples(data)
    hs = json.load(gzip.open(res))["handshakes"]
    ph = json.load(gzip.open(phases))["phases"]
    with gzip.open(out, "wt") as f:
        json.dump({"hz": HZ, "processes": seen, "samples": per, "handshakes": hs,
                   "phases": [{k: p.get(k) for k in ("algorithm", "operation", "stats", "situ")}
                              for p in ph]}, f)
    shutil.rmtree(tmp)
    print(f"perf-calls: wrote {out}")


def scenario_of(args):
    """(role, stack, group, auth dir, mode) from a Go peer's command line."""
    a = args.split()
    role = "client" if " client " in args else "server"
    val = lambda flag: a[a.index(flag) + 1] if flag in a else None
    group = val("--group")
    path = val("--ca") if role == "client" else val("--cert")
    auth = os.path.basename(os.path.dirname(path)) if path else None
    mode = "resumed" if "--resumed" in a else ("two_shares" if "--second-share" in a else None)
    stack = "quic-go" if "--quic" in a else "go"
    return role, stack, group, auth, mode


def report(path):
    with gzip.open(path, "rt") as f:
        d = json.load(f)
    counts = {pid: categorize(st) for pid, st in d["samples"].items()}
    period = 1e6 / d["hz"]
    scen = {}
    for s in d["handshakes"]["scenarios"] + d["handshakes"].get("other_modes", []):
        auth = (s.get("auth") or {}).get("name", "").replace(" ", "-")
        scen[(s["stack"], s["suite"], auth, s.get("mode"))] = s
    names = ["total"] + [c for c, _ in CATEGORIES] + ["rest"]
    print("CPU per handshake by perf's samples, us (stored: the step's rusage CPU per handshake)")
    print(f"{'process':<52}" + "".join(f"{n[:12]:>13}" for n in names) + f"{'stored':>9}")
    # Against the calls' means in state: perf's samples add every call's time, a mean, and the
    # composition draws each call from those single calls, their tail with them.
    in_state = {(p["algorithm"], p["operation"]): (p.get("situ") or {}).get("mean_ns", float("nan")) / 1e3
                for p in d["phases"]}
    rows, kem = [], []
    # A server's command line does not say its mode: the plain scenario's and the two key shares'
    # servers look alike, and the plain one, with the most handshakes, has the most samples.
    best = {}
    for pid, args in d["processes"].items():
        key = scenario_of(args)
        total = counts.get(pid, {}).get("total", 0)
        if key not in best or total > best[key][1]:
            best[key] = (pid, total)
    for (role, stack, group, auth, mode), (pid, _) in best.items():
        s = scen.get((stack, group, auth, mode))
        c = counts.get(pid)
        if not s or not c:
            continue
        n = sum(s["sample_sizes"])
        stored = s["client_cpu_ns" if role == "client" else "server_cpu_ns"] / 1e3
        label = f"{stack} {role} {group} {auth}" + (f" {mode}" if mode else "") + f" [{pid}]"
        per = {k: c.get(k, 0) * period / n for k in names}
        rows.append((label, [per[k] for k in names], stored))
        # ML-KEM's calls against the same calls in a handshake's state, where the chain is ECDSA's
        # (SHA-3's lost callers then ML-KEM's alone): the client's keygen and decapsulation, the
        # server's encapsulation (its key's import included, as the phase's).
        if "MLKEM" in group and auth.startswith("ECDSA"):
            ops = ("kem.keygen", "kem.decaps") if role == "client" else ("kem.encaps",)
            state = sum(in_state.get(("ML-KEM-768", o), float("nan")) for o in ops)
            hits = c.get("ML-KEM", 0) + c.get("SHA-3, caller lost", 0)
            kem.append((f"ML-KEM  {label}", per["ML-KEM"] + per["SHA-3, caller lost"], state, hits))
        # X25519's keygen and derive, each side, in the classical group and in the hybrid alike.
        if group.startswith("X25519") and auth.startswith("ECDSA"):
            state = sum(in_state.get(("X25519", o), float("nan")) for o in ("dh.keygen", "dh.derive"))
            kem.append((f"X25519  {label}", per["X25519"], state, c.get("X25519", 0)))
    for label, v, stored in sorted(rows):
        print(f"{label:<52}" + "".join(f"{x:13.1f}" for x in v) + f"{stored:9.1f}")
    print("\nCalls in the handshakes against the same calls' means in a handshake's state (ML-KEM: its"
          " frames and SHA-3's)")
    print("  (± the samples' 95% Poisson interval, 1.96 / sqrt(samples), the phases' own left out)")
    for label, hs, state, hits in sorted(kem):
        pm = 1.96 / hits**0.5 * hs / state if hits else float("nan")
        print(f"  {label:<52} {hs:7.1f} us against {state:7.1f} us: {hs / state:.2f}x ± {pm:.2f}"
              f" ({hits} samples)")
    print("\nThe Go peer's phases at the same time, us: loop median; in a handshake's state median, mean")
    for p in d["phases"]:
        if p["algorithm"] in ("ML-KEM-768", "X25519", "P-256", "ECDSA-P256"):
            situ = p.get("situ") or {}
            us = lambda k: situ[k] / 1e3 if situ.get(k) else float("nan")
            print(f"  {p['algorithm']:<11} {p['operation']:<11} {p['stats']['median_ns'] / 1e3:7.2f};"
                  f" {us('median_ns'):7.2f}, {us('mean_ns'):7.2f}")


def main():
    a = sys.argv[1:]
    if len(a) < 2 or a[0] not in ("record", "report"):
        die("usage: perf-calls.py record OUT.json.gz [--stack S]... [--budget-s N] | report OUT.json.gz")
    if a[0] == "report":
        return report(a[1])
    stacks = [a[i + 1] for i, x in enumerate(a) if x == "--stack" and i + 1 < len(a)] or ["go"]
    budget = next((a[i + 1] for i, x in enumerate(a) if x == "--budget-s" and i + 1 < len(a)), "45")
    record(a[1], stacks, budget)


if __name__ == "__main__":
    main()
