#!/usr/bin/env python3
"""Where a Go-peer stack's CPU per handshake goes, by perf's samples: for stacks pqprof cannot time
in situ (go and quic-go: crypto/tls and quic-go call the crypto inside the standard library).

    tools/perf-calls.py record OUT.json.gz [--stack go ...] [--budget-s 45] [--results FILE]
    tools/perf-calls.py report OUT.json.gz [--medians]

`record` runs `pqprof handshake` (on a copy of --results, by default the canonical run in results/
with the latest time in its name; the file itself is left alone)
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
that matches a sample takes it. Then ML-KEM's, ML-DSA's and X25519's CPU per handshake against
the same calls' means in a handshake's state (the phases'; a sum of samples is a mean; --medians:
their medians), each side, and the share of ML-KEM's samples with the allocator or the
collector's assists on their stacks.

A sampling profile, not a timer: each sample stands for the period (200 us at 4,999 Hz), so a
category's figure has an error of about sqrt(samples) samples. The total per handshake is printed
beside the CPU the step stored (rusage), as a check that the pid's samples are that scenario's.
"""

import argparse
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


def canonical_results():
    """results/'s run with the latest UTC time in its name (a checkout's mtimes are its own), not
    an emulated aarch64 one (no handshakes there)."""
    d = os.path.join(ROOT, "results")
    stamp = re.compile(r"-(\d{8}T\d{6}Z)-[0-9a-f]+\.json(\.gz)?$")
    files = [(m.group(1), f) for f in os.listdir(d)
             if (m := stamp.search(f)) and "aarch64" not in f]
    if not files:
        die(f"no results file in {d}")
    return os.path.join(d, max(files)[1])


def snapshot(stop, seen):
    # Polled, so a peer process that lives under the poll's second is missed (and its samples
    # left out of the report); the handshake step keeps its clients and servers for the step.
    while not stop.is_set():
        out = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True).stdout
        for line in out.splitlines():
            pid, _, args = line.strip().partition(" ")
            if "pqprof-go-peer" in args and (" client " in args or " serve " in args):
                seen[pid] = args
        time.sleep(0.5)


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


def sampled(data, cmd):
    return ["perf", "record", "-e", "cpu-clock", "-F", str(HZ), "-a", "-g", "-o", data, "--"] + cmd


def record(out, stacks, budget, results):
    if shutil.which("perf") is None:
        die("perf is not installed (Debian: linux-perf)")
    if not os.access(PQPROF, os.X_OK):
        die(f"{PQPROF} is not built (cargo build --release --locked)")
    tmp = tempfile.mkdtemp(prefix="perf-calls-")
    try:
        res = os.path.join(tmp, "results.json.gz" if results.endswith(".gz") else "results.json")
        shutil.copy(results, res)
        data = os.path.join(tmp, "perf.data")
        seen, stop = {}, threading.Event()
        t = threading.Thread(target=snapshot, args=(stop, seen))
        t.start()
        try:
            cmd = [PQPROF, "handshake", "--results", res, "--budget-s", str(budget), "--force"]
            for s in stacks:
                cmd += ["--stack", s]
            subprocess.run(sampled(data, cmd), check=True, cwd=ROOT)
        finally:
            stop.set()
            t.join()
        # The phases under the same sampling, so that its interruptions cost both sides alike.
        phases = os.path.join(tmp, "phases.json.gz")
        subprocess.run(sampled(os.path.join(tmp, "phases.data"),
                               [PQPROF, "run", "--backend", "go", "--budget-s", "30", "--out",
                                phases, "--force", "--quiet"]), check=True, cwd=ROOT)
        per = samples(data)
        hs = read_json(res)["handshakes"]
        ph = read_json(phases)["phases"]
        with gzip.open(out, "wt") as f:
            json.dump({"hz": HZ, "processes": seen, "samples": per, "handshakes": hs,
                       "phases": [{k: p.get(k) for k in ("algorithm", "operation", "stats", "situ")}
                                  for p in ph]}, f)
    except subprocess.CalledProcessError as e:
        die(f"{e.cmd[0]} {' '.join(e.cmd[1:4])} ... failed (exit {e.returncode})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"perf-calls: wrote {out}")


def read_json(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


def slug(name):
    """A chain's folder name as pqprof writes it (`identity::Files::write`)."""
    return re.sub(r"[^A-Za-z0-9]", "-", name)


def scenario_of(args):
    """(role, stack, group, auth folder, mode) from a Go peer's command line."""
    a = args.split()
    role = "client" if " client " in args else "server"

    def val(flag):
        i = a.index(flag) if flag in a else -1
        return a[i + 1] if 0 <= i < len(a) - 1 else None

    path = val("--ca") if role == "client" else val("--cert")
    auth = os.path.basename(os.path.dirname(path)) if path else None
    mode = "resumed" if "--resumed" in a else ("two_shares" if "--second-share" in a else None)
    stack = "quic-go" if "--quic" in a else "go"
    return role, stack, val("--group"), auth, mode


def report(path, medians):
    try:
        d = read_json(path)
    except (OSError, ValueError) as e:
        die(f"{path}: {e}")
    period = 1e6 / d["hz"]
    counts = {pid: categorize(st) for pid, st in d["samples"].items()}
    scen = {}
    for s in d["handshakes"]["scenarios"] + d["handshakes"].get("other_modes", []):
        if s.get("instrumented"):
            continue
        auth = (s.get("auth") or {}).get("name", "")
        scen[(s["stack"], s["suite"], slug(auth), s.get("mode"))] = s
    names = ["total"] + [c for c, _ in CATEGORIES] + ["rest"]
    print("CPU per handshake by perf's samples, us (stored: the step's rusage CPU per handshake)")
    print(f"{'process':<52}" + "".join(f"{n[:12]:>13}" for n in names) + f"{'stored':>9}")
    which = "median_ns" if medians else "mean_ns"
    in_state = {(p["algorithm"], p["operation"]): (p.get("situ") or {}).get(which, float("nan")) / 1e3
                for p in d["phases"]}
    rows, calls = [], []
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
        n = sum(s["sample_sizes"]) if s else 0
        if not c or not n:
            continue
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
            calls.append((f"ML-KEM  {label}", per["ML-KEM"] + per["SHA-3, caller lost"], state, hits))
        # ML-DSA's calls with X25519 (no ML-KEM: SHA-3's lost callers then ML-DSA's alone), in a
        # full handshake: the server's one signing (its rejection loop's tail in the mean), the
        # client's three checks (the chain's leaf and intermediate signatures, as crypto/x509
        # verifies them, and the CertificateVerify).
        if group == "X25519" and auth.startswith("ML-DSA") and not mode:
            op, k = ("sig.sign", 1) if role == "server" else ("sig.verify", 3)
            state = k * in_state.get((auth, op), float("nan"))
            hits = c.get("ML-DSA", 0) + c.get("SHA-3, caller lost", 0)
            calls.append((f"ML-DSA  {label}", per["ML-DSA"] + per["SHA-3, caller lost"], state, hits))
        # X25519's keygen and derive, each side, in the classical group and in the hybrid alike.
        if group.startswith("X25519") and auth.startswith("ECDSA"):
            state = sum(in_state.get(("X25519", o), float("nan")) for o in ("dh.keygen", "dh.derive"))
            calls.append((f"X25519  {label}", per["X25519"], state, c.get("X25519", 0)))
    for label, v, stored in sorted(rows):
        print(f"{label:<52}" + "".join(f"{x:13.1f}" for x in v) + f"{stored:9.1f}")
    print(f"\nCalls in the handshakes against the same calls' {which[:-3]}s in a handshake's state"
          " (ML-KEM, ML-DSA: their frames and SHA-3's)")
    print("  (± the samples' 95% Poisson interval, 1.96 / sqrt(samples), the phases' own left out)")
    for label, hs, state, hits in sorted(calls):
        pm = 1.96 / hits**0.5 * hs / state if hits and state else float("nan")
        ratio = hs / state if state else float("nan")
        print(f"  {label:<52} {hs:7.1f} us against {state:7.1f} us: {ratio:.2f}x ± {pm:.2f}"
              f" ({hits} samples)")
    print("\nML-KEM's samples with the allocator (mallocgc) or the collector's assists on their stack")
    for pid, args in sorted(d["processes"].items(), key=lambda x: x[1]):
        kem = {k: n for k, n in d["samples"].get(pid, {}).items()
               if "fips140/mlkem." in k or "crypto/mlkem." in k}
        if sum(kem.values()) >= 100:
            alloc = sum(n for k, n in kem.items() if "mallocgc" in k or "gcAssist" in k)
            role, stack, group, auth, mode = scenario_of(args)
            print(f"  {stack} {role} {group} {auth}{' ' + mode if mode else ''} [{pid}]: "
                  f"{alloc} of {sum(kem.values())} ({alloc / sum(kem.values()):.1%})")
    print("\nThe Go peer's phases at the same time, us: loop median; in a handshake's state median, mean")
    for p in d["phases"]:
        if p["algorithm"] in ("ML-KEM-768", "X25519", "P-256", "ECDSA-P256") or (
                p["algorithm"].startswith("ML-DSA") and p["operation"] != "sig.keygen"):
            situ = p.get("situ") or {}
            us = lambda k: situ[k] / 1e3 if situ.get(k) else float("nan")
            print(f"  {p['algorithm']:<11} {p['operation']:<11} {p['stats']['median_ns'] / 1e3:7.2f};"
                  f" {us('median_ns'):7.2f}, {us('mean_ns'):7.2f}")


def main():
    ap = argparse.ArgumentParser(prog="perf-calls.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("out")
    r.add_argument("--stack", action="append", choices=["go", "quic-go"])
    r.add_argument("--budget-s", type=int, default=45)
    r.add_argument("--results", default=None)
    p = sub.add_parser("report")
    p.add_argument("file")
    p.add_argument("--medians", action="store_true")
    a = ap.parse_args()
    if a.cmd == "report":
        return report(a.file, a.medians)
    record(a.out, a.stack or ["go"], a.budget_s, a.results or canonical_results())


if __name__ == "__main__":
    main()
