//! `pqprof memory`: memory per operation, as the OQS profiling pages report it (peak heap and peak
//! stack bytes of one call). For every KEM, DH and signature algorithm of the registry
//! (core/src/algorithms.toml) and every backend of the results file that has it, each operation's
//! handshake-form case (src/case, the same set-up as the timing loop's) runs on a thread of its own:
//! one warm-up call, then `calls` probed calls, each with the heap tracker (`heap`) and a freshly
//! painted stack (`stack`). Each backend's algorithms run in child processes of their own
//! (`memory-child`, one per backend and algorithm, the slowest first), so one library's or
//! algorithm's state never sits under another's figures.

pub mod heap;
pub mod stack;

use crate::algorithm::{self, Kind, Operation};
use crate::backend::{self, Backend};
use crate::case::{self, Case, Kernel, Slots};
use crate::results::{MemoryCall, MemoryEntry, MemoryFailure, OperationMemory, PhaseId, Results};
use crate::suite::Workload;
use anyhow::{anyhow, bail, ensure, Context, Result};
use serde::{Deserialize, Serialize};
use std::process::Command;

/// Probed calls per phase (their stack figures must agree; the heap figure is their largest).
pub(crate) const CALLS: usize = 3;
/// Calls made first and not measured.
pub(crate) const WARMUP: usize = 1;

pub(crate) const HEAP_METHOD: &str =
    "the most heap bytes in use during one call above what was in use \
when it started, over every malloc, calloc, realloc, posix_memalign and aligned_alloc and every \
free in the executable (the linker wraps them: -Wl,--wrap): Rust's global allocator, liboqs, the \
vendored OpenSSL 3.5's CRYPTO_malloc and aws-lc's OPENSSL_malloc all end there; block sizes as \
the allocator holds them (malloc_usable_size: 16-byte rounding and an 8-byte header, where \
massif's heap figure counts the requested bytes); a realloc that moves counts both blocks at \
once; the call's output buffers are included, its inputs (made before it) are not";

pub(crate) const STACK_METHOD: &str =
    "stack painting: the call runs on a thread of its own with an \
8 MiB stack (bounds from pthread_getattr_np); every word below the probe's stack pointer is set \
to a pattern, the call is made through a function pointer, and the stack is scanned up from its \
bottom for the first changed word; the figure is the stack pointer minus that word's address \
(8-byte granularity), less what an empty case shows through the same probe (harness_stack_bytes: \
the return address and the probe's leaf frames); it includes every frame below the case's run, \
the backend's wrapper and the library's own";

/// The phases `memory` measures on a backend: every operation of every KEM, DH and signature
/// algorithm it supports (of `only`, if given), in the handshake form.
pub(crate) fn phases(b: &dyn Backend, only: &[String]) -> Vec<PhaseId> {
    phases_of(b, only, &[])
}

/// `phases`, of the operations `ops` only (all if empty).
fn phases_of(b: &dyn Backend, only: &[String], ops: &[Operation]) -> Vec<PhaseId> {
    let mut v = Vec::new();
    for alg in algorithm::all() {
        if !matches!(alg.kind, Kind::Kem | Kind::Dh | Kind::Sig)
            || (!only.is_empty() && !only.contains(&alg.name))
        {
            continue;
        }
        for op in Operation::ALL {
            if op.kind() == alg.kind
                && (ops.is_empty() || ops.contains(&op))
                && b.supports(&alg.name, op)
            {
                v.push(PhaseId::handshake(b.name(), &alg.name, op));
            }
        }
    }
    v
}

/// What `memory-child` prints: one backend's entries.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct ChildReport {
    pub(crate) harness_stack_bytes: u64,
    pub(crate) entries: Vec<MemoryEntry>,
    pub(crate) failures: Vec<MemoryFailure>,
}

/// An operation that does nothing, through the same `Slots` as every case: the probe's own share.
struct Empty;

impl Kernel for Empty {
    type In = ();
    type Out = ();
    fn input(&mut self, _i: usize, _reuse: Option<()>) -> Result<()> {
        Ok(())
    }
    fn call(&mut self, _input: &mut ()) {}
    fn check(&mut self, _input: &(), _out: ()) -> Result<()> {
        Ok(())
    }
}

/// One probe of `case`'s slot 0, whose input is prepared.
fn probe_case(case: &mut dyn Case) -> Result<stack::Probe> {
    stack::probe(&mut || case.run(0))
}

/// The stack an empty case shows through the probe; the same on every call or an error.
fn harness(calls: usize) -> Result<u64> {
    let mut empty: Box<dyn Case> = Box::new(Slots::new(Empty));
    let mut seen = Vec::new();
    for i in 0..calls.max(2) {
        empty.prepare(i, 0)?;
        seen.push(probe_case(empty.as_mut())?.stack_bytes as u64);
    }
    ensure!(
        seen.windows(2).all(|w| w[0] == w[1]),
        "an empty call shows different stack depths: {seen:?}"
    );
    Ok(seen[0])
}

/// One phase: set-up, warm-up, then `calls` probed calls, each output verified after its probe.
/// Runs on the current thread, which must have come from `stack::on_thread`.
fn measure(be: &dyn Backend, id: &PhaseId, calls: usize, harness: u64) -> Result<MemoryEntry> {
    let alg = algorithm::find(&id.algorithm)
        .ok_or_else(|| anyhow!("unknown algorithm {}", id.algorithm))?;
    let w = Workload {
        payload_bytes: 0,
        aad_bytes: 0,
    };
    let mut case = case::build_few(be, alg, id.operation, &w, id.form)?;
    for i in 0..WARMUP {
        case.prepare(i, 0)?;
        case.run(0);
    }
    let mut out = Vec::new();
    for i in 0..calls {
        case.prepare(WARMUP + i, 0)?;
        let p = probe_case(case.as_mut())?;
        // The first probed call's output verified after its probe (the set-up verified the case's
        // first outputs already; a keygen's check signs with the new key: for SLH-DSA-128s,
        // seconds).
        if i == 0 {
            case.keep(0);
            ensure!(
                case.verify_kept()? == 1,
                "the probed call left no output to verify"
            );
        }
        out.push(MemoryCall {
            heap_bytes: p.heap.peak_bytes,
            allocs: p.heap.allocs,
            stack_bytes: (p.stack_bytes as u64).saturating_sub(harness),
        });
    }
    Ok(MemoryEntry::from_calls(id, out))
}

/// The hidden `memory-child` command: every phase of one backend (of the algorithms `only` and
/// the operations `ops`, if given), each on a fresh thread.
pub(crate) fn child(
    backend_name: &str,
    calls: usize,
    only: &[String],
    ops: &[Operation],
) -> Result<ChildReport> {
    let be = backend::all()
        .into_iter()
        .find(|b| b.name() == backend_name)
        .ok_or_else(|| anyhow!("unknown backend {backend_name}"))?;
    let harness_stack_bytes = stack::on_thread(|| harness(calls))?;
    let mut entries = Vec::new();
    let mut failures = Vec::new();
    for id in phases_of(be.as_ref(), only, ops) {
        match stack::on_thread(|| {
            // Measured on each phase's own thread too: it must be the child's figure.
            let h = harness(calls)?;
            ensure!(
                h == harness_stack_bytes,
                "the empty call shows {h} bytes here, {harness_stack_bytes} on the first thread"
            );
            measure(be.as_ref(), &id, calls, h)
        }) {
            Ok(e) => entries.push(e),
            Err(e) => failures.push(MemoryFailure {
                backend: id.backend.clone(),
                algorithm: id.algorithm.clone(),
                operation: id.operation,
                error: format!("{e:#}"),
            }),
        }
    }
    Ok(ChildReport {
        harness_stack_bytes,
        entries,
        failures,
    })
}

pub(crate) struct Options {
    pub(crate) calls: usize,
    /// Child processes at a time.
    pub(crate) jobs: usize,
    /// Only these algorithms (default every KEM, DH and signature algorithm).
    pub(crate) only: Vec<String>,
}

/// Every backend of `r` that pqprof has (not the Go peer) in a child of its own, `jobs` at a time.
pub(crate) fn run(
    opts: &Options,
    r: &Results,
    progress: &mut dyn FnMut(&str),
) -> Result<OperationMemory> {
    ensure!(
        opts.calls >= 2,
        "--calls {}: two calls at least, so their stack figures can be compared",
        opts.calls
    );
    let started = std::time::Instant::now();
    let ours = backend::all();
    let mut names: Vec<&str> = Vec::new();
    // One child per phase, the slowest algorithms first (by the run's median times of their
    // phases added up: a verification's set-up signs), so the last to finish is a short one.
    let mut jobs: Vec<(PhaseId, f64, f64)> = Vec::new();
    for info in &r.backends {
        let Some(b) = ours.iter().find(|b| b.name() == info.name) else {
            continue;
        };
        let ids = phases(b.as_ref(), &opts.only);
        if ids.is_empty() {
            continue;
        }
        names.push(b.name());
        let median = |id: &PhaseId| r.phase(id).map_or(0.0, |p| p.stats.median_ns);
        for id in &ids {
            let alg: f64 = ids
                .iter()
                .filter(|x| x.algorithm == id.algorithm)
                .map(median)
                .sum();
            jobs.push((id.clone(), alg, median(id)));
        }
    }
    ensure!(
        !jobs.is_empty(),
        "no backend of the results file has a KEM, DH or signature algorithm to measure"
    );
    jobs.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.2.total_cmp(&a.2)));
    let exe = std::env::current_exe().context("cannot find the pqprof binary")?;
    let next = std::sync::Mutex::new(0usize);
    let done = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..opts.jobs.clamp(1, jobs.len()) {
            s.spawn(|| loop {
                let i = {
                    let mut n = next.lock().unwrap();
                    *n += 1;
                    *n - 1
                };
                let Some((id, _, _)) = jobs.get(i) else {
                    break;
                };
                let (name, alg) = (&id.backend, &id.algorithm);
                let t0 = std::time::Instant::now();
                let report = Command::new(&exe)
                    .args(["memory-child", "--backend", name, "--algorithm", alg])
                    .args(["--operation", id.operation.name()])
                    .args(["--calls", &opts.calls.to_string()])
                    .output()
                    .with_context(|| format!("cannot start the {id} child"))
                    .and_then(|o| {
                        if !o.status.success() {
                            bail!(
                                "the {id} child failed: {}",
                                String::from_utf8_lossy(&o.stderr).trim()
                            );
                        }
                        serde_json::from_slice::<ChildReport>(&o.stdout)
                            .with_context(|| format!("the {id} child's report"))
                    });
                done.lock()
                    .unwrap()
                    .push((i, report, t0.elapsed().as_secs_f64()));
            });
        }
    });
    let mut done = done.into_inner().unwrap();
    done.sort_by_key(|d| d.0);
    let mut harness = None;
    let (mut entries, mut failures) = (Vec::new(), Vec::new());
    for (i, report, secs) in done {
        let rep = report?;
        let id = &jobs[i].0;
        if secs >= 1.0 || !rep.failures.is_empty() {
            progress(&format!(
                "{id}: {}, {secs:.1} s",
                if rep.failures.is_empty() {
                    "measured"
                } else {
                    "failed"
                }
            ));
        }
        match harness {
            None => harness = Some(rep.harness_stack_bytes),
            Some(h) => ensure!(
                h == rep.harness_stack_bytes,
                "the empty call shows {h} stack bytes in one child and {} in the {id} child",
                rep.harness_stack_bytes
            ),
        }
        entries.extend(rep.entries);
        failures.extend(rep.failures);
    }
    // In the registry's order: backends, then their phases as `phases` lists them.
    let rank = |e: &MemoryEntry| {
        let b = names
            .iter()
            .position(|n| *n == e.backend)
            .unwrap_or(usize::MAX);
        let a = algorithm::all()
            .iter()
            .position(|a| a.name == e.algorithm)
            .unwrap_or(usize::MAX);
        (b, a, e.operation)
    };
    entries.sort_by_key(|e| rank(e));
    Ok(OperationMemory {
        date_utc: crate::host::utc_now(),
        wall_seconds: started.elapsed().as_secs_f64(),
        backends: names.iter().map(|n| n.to_string()).collect(),
        heap_method: HEAP_METHOD.into(),
        stack_method: STACK_METHOD.into(),
        harness_stack_bytes: harness.unwrap_or(0),
        warmup_calls: WARMUP,
        entries,
        failures,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_family_is_measured_where_a_backend_has_it() {
        let all = backend::all();
        let liboqs = all.iter().find(|b| b.name() == "liboqs").unwrap();
        let ids = phases(liboqs.as_ref(), &[]);
        for (alg, op) in [
            ("ML-KEM-512", Operation::KemKeygen),
            ("ML-KEM-1024", Operation::KemDecaps),
            ("ML-DSA-65", Operation::SigSign),
            ("Falcon-512", Operation::SigVerify),
            ("SLH-DSA-SHAKE-128f", Operation::SigSign),
        ] {
            assert!(
                ids.contains(&PhaseId::handshake("liboqs", alg, op)),
                "{alg} {op}"
            );
        }
        // No record-layer or key-schedule phases.
        assert!(ids
            .iter()
            .all(|id| matches!(id.operation.kind(), Kind::Kem | Kind::Dh | Kind::Sig)));
        let only = phases(liboqs.as_ref(), &["ML-KEM-768".to_string()]);
        assert_eq!(only.len(), 3);
    }
}
