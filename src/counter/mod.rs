//! Instruction counts per phase (`run --counter instructions`): every phase's case runs again in a
//! child process under valgrind's callgrind, with collection switched on only inside
//! `pqprof_counted_call`, which makes exactly the timed call; instructions (and, with callgrind's
//! cache simulation, data reads and writes and simulated cache misses) per call do not move with
//! the load on a shared machine.
//!
//! What the emulated CPU reports: valgrind 3.19 hides AVX-512 (its CPUID says no AVX-512), so a
//! library that dispatches at run time takes its AVX2 path here where it would take AVX-512 natively;
//! each phase records what its child saw. Randomness is made deterministic where a backend lets it
//! (RustCrypto's and libcrux's generators and liboqs's randombytes are seeded from a fixed seed in the
//! child, and so are the cases' inputs: messages, transcript hashes, keys), so their counts repeat
//! exactly; OpenSSL's and aws-lc's generators cannot be seeded, so a phase whose work depends on
//! fresh randomness (a signature's rejection loop) varies from call to call there. Each call's count
//! is kept (one callgrind dump per call), so `compare` gives such a phase an interval.

use crate::backend;
use crate::results::{CounterRun, Form, Instructions, Phase, PhaseId};
use crate::suite::Workload;
use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The seed every counting child's generators start from, so repeated counts see the same values.
pub const SEED: u64 = 0x7071_7072_6f66_6374;
/// A phase is counted with this many calls when one call takes at most `FULL_COUNT_NS` natively.
pub const MAX_CALLS: usize = 50;
pub const FULL_COUNT_NS: f64 = 2e6;
/// Slower phases get at most this many, and as many as fit in `MAX_SECONDS` under valgrind.
pub const SLOW_CALLS: usize = 10;
/// Valgrind slows code by about this much; a phase whose one call would take longer than
/// `MAX_SECONDS` under it is not counted (and named).
pub const SLOWDOWN: f64 = 60.0;
pub const MAX_SECONDS: f64 = 30.0;

/// What the counting child prints.
#[derive(Debug, Serialize, Deserialize)]
pub struct ChildReport {
    pub calls: usize,
    pub verified: usize,
    /// CPU features the child saw (under valgrind: what valgrind's CPUID reports).
    pub avx2: bool,
    pub avx512f: bool,
}

/// The counted region: exactly the timed call. Never inlined and never renamed, so callgrind's
/// `--toggle-collect` finds it by name.
#[inline(never)]
#[no_mangle]
pub extern "Rust" fn pqprof_counted_call(case: &mut dyn crate::case::Case) {
    case.run(0);
}

#[cfg(target_arch = "x86_64")]
fn cpu_features() -> (bool, bool) {
    use std::arch::x86_64::__cpuid_count;
    let b = __cpuid_count(7, 0).ebx;
    ((b >> 5) & 1 == 1, (b >> 16) & 1 == 1)
}

#[cfg(not(target_arch = "x86_64"))]
fn cpu_features() -> (bool, bool) {
    (false, false)
}

/// The hidden `count-phase` command: one phase's case, `calls` counted calls, outputs checked.
pub fn child(
    backend_name: &str,
    algorithm: &str,
    operation: &str,
    form: Form,
    calls: usize,
    w: Workload,
) -> Result<ChildReport> {
    backend::deterministic_randomness(SEED);
    crate::case::seed_inputs(SEED);
    let be = backend::all()
        .into_iter()
        .find(|b| b.name() == backend_name)
        .ok_or_else(|| anyhow!("unknown backend {backend_name}"))?;
    let alg = crate::algorithm::find(algorithm)
        .ok_or_else(|| anyhow!("unknown algorithm {algorithm}"))?;
    let op = crate::algorithm::Operation::from_name(operation)
        .ok_or_else(|| anyhow!("unknown operation {operation}"))?;
    let mut case = crate::case::build(be.as_ref(), alg, op, &w, form)?;
    // Lazy initialisation (library setup, provider fetches) happens in the first calls: not counted.
    for i in 0..3 {
        case.prepare(i, 0)?;
        case.run(0);
    }
    let mut verified = 0;
    for i in 0..calls {
        case.prepare(3 + i, 0)?;
        pqprof_counted_call(case.as_mut());
        if i == 0 || i + 1 == calls {
            case.keep(0);
            verified += case.verify_kept()?;
        }
    }
    let (avx2, avx512f) = cpu_features();
    Ok(ChildReport {
        calls,
        verified,
        avx2,
        avx512f,
    })
}

/// Calls to count for a phase whose native median is `median_ns`; `None` when one call would take
/// too long under valgrind. The count must not follow the machine's noise: where calls differ (a
/// rejection loop), a count of 48 one run and 49 the next would move the mean per call. So every
/// phase up to 2 ms gets the same 50 calls, and only the few slower ones a count from their time.
pub fn calls_for(median_ns: f64) -> Option<usize> {
    let per_call_s = median_ns.max(1.0) * SLOWDOWN / 1e9;
    if per_call_s > MAX_SECONDS {
        return None;
    }
    if median_ns <= FULL_COUNT_NS {
        return Some(MAX_CALLS);
    }
    Some(((MAX_SECONDS / per_call_s) as usize).clamp(1, SLOW_CALLS))
}

/// The valgrind on PATH and its version, or why there is none.
pub fn valgrind() -> Result<String> {
    let out = Command::new("valgrind")
        .arg("--version")
        .output()
        .context("valgrind is not installed (apt-get install valgrind)")?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Counts every phase (one child per core at a time: counts do not depend on load) and adds
/// the figures to the phases. Returns what was run and what was left out.
pub fn count(
    phases: &mut [Phase],
    workloads: &[(PhaseId, Workload)],
    progress: &mut dyn FnMut(&str),
) -> Result<CounterRun> {
    let started = std::time::Instant::now();
    let version = valgrind()?;
    let exe = std::env::current_exe()?;
    let dir = std::env::temp_dir().join(format!("pqprof-cg-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let mut skipped = Vec::new();
    let mut jobs = Vec::new();
    for (i, p) in phases.iter().enumerate() {
        if p.backend == "go" {
            skipped.push(format!(
                "{}: the Go runtime does not run under valgrind",
                p.name()
            ));
            continue;
        }
        let Some(calls) = calls_for(p.stats.median_ns) else {
            skipped.push(format!(
                "{}: one call takes {:.2} s natively, about {:.0} s under valgrind",
                p.name(),
                p.stats.median_ns / 1e9,
                p.stats.median_ns / 1e9 * SLOWDOWN
            ));
            continue;
        };
        let id = p.id();
        let w = workloads
            .iter()
            .find(|(k, _)| *k == id)
            .map(|(_, w)| *w)
            .unwrap_or_default();
        jobs.push((i, calls, w));
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let total = jobs.len();
    let mut results: Vec<(usize, Result<Instructions>)> = Vec::new();
    for (n, chunk) in jobs.chunks(threads).enumerate() {
        crate::interrupt::check()?;
        progress(&format!(
            "{}/{total}: {}",
            n * threads + 1,
            phases[chunk[0].0].name()
        ));
        let out: Vec<(usize, Result<Instructions>)> = std::thread::scope(|s| {
            let handles: Vec<_> = chunk
                .iter()
                .map(|&(i, calls, w)| {
                    let (p, exe, dir) = (&phases[i], &exe, &dir);
                    s.spawn(move || (i, count_one(exe, dir, p, calls, w)))
                })
                .collect();
            handles.into_iter().filter_map(|h| h.join().ok()).collect()
        });
        results.extend(out);
    }
    let _ = std::fs::remove_dir_all(&dir);
    for (i, r) in results {
        match r {
            Ok(ins) => phases[i].instructions = Some(ins),
            Err(e) => skipped.push(format!("{}: {e:#}", phases[i].name())),
        }
    }
    Ok(CounterRun {
        tool: format!("{version} --tool=callgrind --cache-sim=yes"),
        wall_seconds: started.elapsed().as_secs_f64(),
        skipped,
        seed: SEED,
    })
}

fn count_one(exe: &Path, dir: &Path, p: &Phase, calls: usize, w: Workload) -> Result<Instructions> {
    let out: PathBuf = dir.join(format!(
        "cg-{}-{}-{}-{:?}.out",
        p.backend, p.algorithm, p.operation, p.form
    ));
    let mut cmd = Command::new("valgrind");
    // One dump as each counted call returns: out.1, out.2, ... hold each call's own counts.
    cmd.args([
        "--tool=callgrind",
        "--cache-sim=yes",
        "--collect-atstart=no",
        "--toggle-collect=pqprof_counted_call",
        "--dump-after=pqprof_counted_call",
        "-q",
    ])
    .arg(format!("--callgrind-out-file={}", out.display()))
    .arg(exe)
    .args([
        "count-phase",
        "--backend",
        &p.backend,
        "--algorithm",
        &p.algorithm,
        "--operation",
        p.operation.name(),
    ])
    .args([
        "--form",
        if p.form == Form::Primitive {
            "primitive"
        } else {
            "handshake"
        },
    ])
    .args([
        "--calls",
        &calls.to_string(),
        "--payload",
        &w.payload_bytes.to_string(),
        "--aad",
        &w.aad_bytes.to_string(),
    ]);
    let o = crate::interrupt::die_with_parent(&mut cmd)
        .output()
        .context("cannot start valgrind")?;
    if !o.status.success() {
        bail!(
            "valgrind: {}",
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .last()
                .unwrap_or("")
        );
    }
    let report: ChildReport =
        serde_json::from_slice(&o.stdout).context("the counting child's report")?;
    let (events, totals, ir_calls) = dumps(&out, report.calls)?;
    Ok(Instructions::new(
        events,
        totals,
        report.calls,
        format!(
            "valgrind's CPU: AVX2 {}, AVX-512 {}",
            yes(report.avx2),
            yes(report.avx512f)
        ),
        ir_calls,
    ))
}

/// Reads callgrind's numbered dumps `out.1` .. `out.N` (one per counted call) and the final `out`
/// (what was collected after the last dump: nothing, collection being off outside the call):
/// the events, their totals over all dumps, and each call's instructions (Ir).
fn dumps(out: &Path, calls: usize) -> Result<(Vec<String>, Vec<u64>, Vec<u64>)> {
    let read = |p: &Path| -> Result<(Vec<String>, Vec<u64>)> {
        let text = std::fs::read_to_string(p)
            .with_context(|| format!("{}: no callgrind output", p.display()))?;
        crate::parse::callgrind::totals(&text).with_context(|| p.display().to_string())
    };
    let mut events: Option<Vec<String>> = None;
    let mut totals: Vec<u64> = Vec::new();
    let mut ir_calls = Vec::new();
    let mut add = |e: Vec<String>, t: Vec<u64>, ir_calls: Option<&mut Vec<u64>>| -> Result<()> {
        let known = events.get_or_insert_with(|| e.clone());
        if *known != e {
            bail!("callgrind dumps with different events");
        }
        totals.resize(t.len(), 0);
        totals.iter_mut().zip(&t).for_each(|(a, b)| *a += b);
        if let Some(v) = ir_calls {
            v.push(
                e.iter()
                    .position(|x| x == "Ir")
                    .and_then(|k| t.get(k).copied())
                    .ok_or_else(|| anyhow!("no Ir event"))?,
            );
        }
        Ok(())
    };
    for n in 1..=calls {
        let (e, t) = read(&PathBuf::from(format!("{}.{n}", out.display())))?;
        add(e, t, Some(&mut ir_calls))?;
    }
    // The final dump at exit, if callgrind wrote one (with or without the next number).
    for last in [
        out.to_path_buf(),
        PathBuf::from(format!("{}.{}", out.display(), calls + 1)),
    ] {
        if last.exists() {
            if let Ok((e, t)) = read(&last) {
                add(e, t, None)?;
            }
        }
    }
    let events = events.ok_or_else(|| anyhow!("no callgrind dump"))?;
    Ok((events, totals, ir_calls))
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_count_of_calls_does_not_follow_small_timing_changes() {
        // 20 us or 1.9 ms, today or 10% slower tomorrow: 50 calls either way.
        for ns in [20e3, 22e3, 1.5e6, 1.9e6] {
            assert_eq!(calls_for(ns), Some(MAX_CALLS), "{ns}");
        }
        // 5 ms: 30 s / (5 ms x 60) = 100 calls fit, capped at 10; 100 ms: 5; 0.75 s: 45 s a call, skipped.
        assert_eq!(calls_for(5e6), Some(SLOW_CALLS));
        assert_eq!(calls_for(100e6), Some(5));
        assert_eq!(calls_for(0.75e9), None);
    }

    #[test]
    fn per_call_dumps_give_each_call_and_the_totals() {
        let dir = std::env::temp_dir().join(format!("pqprof-dumps-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("cg.out");
        // Two calls (Ir 100 and 120, Dr 10 and 12) and the final dump with nothing collected.
        std::fs::write(dir.join("cg.out.1"), "events: Ir Dr\nsummary: 100 10\n").unwrap();
        std::fs::write(dir.join("cg.out.2"), "events: Ir Dr\nsummary: 120 12\n").unwrap();
        std::fs::write(&out, "events: Ir Dr\nsummary: 0 0\n").unwrap();
        let (events, totals, ir) = dumps(&out, 2).unwrap();
        assert_eq!(
            (events, totals, ir),
            (
                vec!["Ir".to_string(), "Dr".to_string()],
                vec![220, 22],
                vec![100, 120]
            )
        );
        // A missing call's dump is an error, not a shorter list.
        assert!(dumps(&out, 3).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
