//! Instruction counts per phase (`run --counter instructions`): every phase's case runs again in a
//! child process (`count-phase`), under a counter that counts exactly the timed call, so
//! instructions per call do not move with the load on a shared machine. The counter is chosen per
//! target: valgrind's callgrind where pqprof runs natively (x86-64, or a real aarch64 host), and
//! qemu's TCG plugin `tools/aarch64/pqcount.c` where it runs under qemu-user (`--emulator`). Each
//! is one `Counter`; the results say which counted (`run.counter.method`).
//!
//! What a counter's CPU reports: valgrind 3.19 hides AVX-512 (its CPUID says no AVX-512), so a
//! library that dispatches at run time takes its AVX2 path there where it would take AVX-512
//! natively; qemu reports the features of its `-cpu` model. Each phase records what its child saw.
//! Randomness is made deterministic where a backend lets it (RustCrypto's and libcrux's generators
//! and liboqs's randombytes are seeded from a fixed seed in the child, and so are the cases'
//! inputs: messages, transcript hashes, keys), so their counts repeat exactly; OpenSSL's and
//! aws-lc's generators cannot be seeded, so a phase whose work depends on fresh randomness (a
//! signature's rejection loop) varies from call to call there. Each call's count is kept, so
//! `compare` gives such a phase an interval.

mod callgrind;
mod qemu;

pub use callgrind::{valgrind, Callgrind};
pub use qemu::QemuPlugin;

use crate::backend;
use crate::results::{CounterMethod, CounterRun, Form, Instructions, Phase, PhaseId};
use crate::suite::Workload;
use anyhow::{anyhow, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The seed every counting child's generators start from, so repeated counts see the same values.
pub(crate) const SEED: u64 = 0x7071_7072_6f66_6374;
/// A phase is counted with this many calls when one call takes at most `FULL_COUNT_NS` natively.
pub(crate) const MAX_CALLS: usize = 50;
pub(crate) const FULL_COUNT_NS: f64 = 2e6;
/// Slower phases get at most this many, and as many as fit in `MAX_SECONDS` under the counter.
pub(crate) const SLOW_CALLS: usize = 10;
/// A phase whose one call would take longer than `MAX_SECONDS` under the counter is not counted
/// (and named).
pub(crate) const MAX_SECONDS: f64 = 30.0;

/// One way of counting a phase's calls.
pub(crate) trait Counter: Sync {
    /// The tool, its version and options (`run.counter.tool`).
    fn tool(&self) -> String;
    fn method(&self) -> CounterMethod;
    /// How much slower a call runs under the counter than the estimate `count` is given.
    fn slowdown(&self) -> f64;
    /// A phase whose estimate is at most this gets the full `MAX_CALLS` (`calls_for`).
    fn full_count_ns(&self) -> f64 {
        FULL_COUNT_NS
    }
    /// Why a phase cannot be counted this way, if it cannot.
    fn cannot(&self, p: &Phase) -> Option<String> {
        (p.backend == "go")
            .then(|| "the Go peer is another program, not a count-phase child".into())
    }
    /// Runs the `count-phase` child for `calls` calls of `p` (its arguments: `child_args`) and
    /// reads each call's count.
    fn count(
        &self,
        exe: &Path,
        dir: &Path,
        p: &Phase,
        calls: usize,
        w: Workload,
    ) -> Result<Instructions>;
}

/// What the counting child prints.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct ChildReport {
    pub(crate) calls: usize,
    pub(crate) verified: usize,
    /// The CPU features the child saw, in words (under valgrind: what valgrind's CPUID reports;
    /// under qemu: the HWCAPs of its `-cpu` model).
    pub(crate) cpu: String,
}

/// The counted region: exactly the timed call. Never inlined and never renamed, so callgrind's
/// `--toggle-collect` finds it by name.
#[inline(never)]
#[no_mangle]
pub extern "Rust" fn pqprof_counted_call(case: &mut dyn crate::case::Case) {
    case.run(0);
}

/// The markers of qemu's counting plugin (tools/aarch64/pqcount.c): it counts every instruction
/// this thread executes after entering `pqprof_count_begin` and before entering
/// `pqprof_count_end`, outside both, so a region is the counted call and the few instructions that
/// make and leave it (on aarch64: the two argument moves, the `bl` into `pqprof_counted_call` and the
/// `bl` into `pqprof_count_end`; tools/aarch64/aarch64.sh checks them in the disassembly). Under
/// callgrind they are outside `pqprof_counted_call` and cost nothing it counts. The bodies differ
/// so that LLVM's function merging or the linker's identical-code folding cannot make them one.
#[inline(never)]
#[no_mangle]
pub extern "C" fn pqprof_count_begin() {
    std::hint::black_box(1u8);
}

#[inline(never)]
#[no_mangle]
pub extern "C" fn pqprof_count_end() {
    std::hint::black_box(2u8);
}

#[cfg(target_arch = "x86_64")]
fn cpu_features() -> String {
    use std::arch::x86_64::__cpuid_count;
    let b = __cpuid_count(7, 0).ebx;
    format!(
        "AVX2 {}, AVX-512 {}",
        yes((b >> 5) & 1 == 1),
        yes((b >> 16) & 1 == 1)
    )
}

/// The aarch64 features the libraries dispatch on, as the kernel's (or qemu's) HWCAPs give them
/// (Rust's `sha3` is FEAT_SHA3 with FEAT_SHA512).
#[cfg(target_arch = "aarch64")]
fn cpu_features() -> String {
    use std::arch::is_aarch64_feature_detected as has;
    format!(
        "NEON {}, AES {}, SHA-256 {}, SHA3 {}, SVE {}, SVE2 {}",
        yes(has!("neon")),
        yes(has!("aes")),
        yes(has!("sha2")),
        yes(has!("sha3")),
        yes(has!("sve")),
        yes(has!("sve2"))
    )
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn cpu_features() -> String {
    "not reported on this architecture".into()
}

/// The hidden `count-phase` command: one phase's case, `calls` counted calls, outputs checked.
pub(crate) fn child(
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
        pqprof_count_begin();
        pqprof_counted_call(case.as_mut());
        pqprof_count_end();
        if i == 0 || i + 1 == calls {
            case.keep(0);
            verified += case.verify_kept()?;
        }
    }
    Ok(ChildReport {
        calls,
        verified,
        cpu: cpu_features(),
    })
}

/// The arguments of the `count-phase` child for `calls` calls of `p`.
pub(crate) fn child_args(p: &Phase, calls: usize, w: Workload) -> Vec<String> {
    let form = if p.form == Form::Primitive {
        "primitive"
    } else {
        "handshake"
    };
    [
        "count-phase",
        "--backend",
        &p.backend,
        "--algorithm",
        &p.algorithm,
        "--operation",
        p.operation.name(),
        "--form",
        form,
        "--calls",
        &calls.to_string(),
        "--payload",
        &w.payload_bytes.to_string(),
        "--aad",
        &w.aad_bytes.to_string(),
    ]
    .map(String::from)
    .to_vec()
}

/// Calls to count for a phase whose one call takes `estimate_ns` before the counter's `slowdown`;
/// `None` when one call would take too long under the counter. The count must not follow the
/// machine's noise: where calls differ (a rejection loop), a count of 48 one run and 49 the next
/// would move the mean per call. So every phase up to `full_ns` (2 ms natively) gets the same 50
/// calls, and only the few slower ones a count from their time.
pub(crate) fn calls_for(estimate_ns: f64, slowdown: f64, full_ns: f64) -> Option<usize> {
    let per_call_s = estimate_ns.max(1.0) * slowdown / 1e9;
    if per_call_s > MAX_SECONDS {
        return None;
    }
    if estimate_ns <= full_ns {
        return Some(MAX_CALLS);
    }
    Some(((MAX_SECONDS / per_call_s) as usize).clamp(1, SLOW_CALLS))
}

/// Counts every phase with `counter` (one child per core at a time: counts do not depend on load)
/// and adds the figures to the phases; `estimate_ns` gives a phase's one call before the counter's
/// slowdown (the native median, or under an emulator its emulated time). Returns what was run and
/// what was left out.
pub(crate) fn count(
    counter: &dyn Counter,
    phases: &mut [Phase],
    workloads: &[(PhaseId, Workload)],
    estimate_ns: &dyn Fn(&Phase) -> f64,
    progress: &mut dyn FnMut(&str),
) -> Result<CounterRun> {
    let started = std::time::Instant::now();
    let exe = std::env::current_exe()?;
    let dir = std::env::temp_dir().join(format!("pqprof-count-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let mut skipped = Vec::new();
    let mut jobs = Vec::new();
    for (i, p) in phases.iter().enumerate() {
        if let Some(why) = counter.cannot(p) {
            skipped.push(format!("{}: {why}", p.name()));
            continue;
        }
        let estimate = estimate_ns(p);
        let Some(calls) = calls_for(estimate, counter.slowdown(), counter.full_count_ns()) else {
            skipped.push(format!(
                "{}: one call takes {:.2} s, about {:.0} s under {}",
                p.name(),
                estimate / 1e9,
                estimate / 1e9 * counter.slowdown(),
                counter.method().name()
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
                    s.spawn(move || (i, counter.count(exe, dir, p, calls, w)))
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
        tool: counter.tool(),
        wall_seconds: started.elapsed().as_secs_f64(),
        skipped,
        seed: SEED,
        method: counter.method(),
    })
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
        let valgrind = |ns| calls_for(ns, Callgrind::SLOWDOWN, FULL_COUNT_NS);
        // 20 us or 1.9 ms, today or 10% slower tomorrow: 50 calls either way.
        for ns in [20e3, 22e3, 1.5e6, 1.9e6] {
            assert_eq!(valgrind(ns), Some(MAX_CALLS), "{ns}");
        }
        // 5 ms: 30 s / (5 ms x 60) = 100 calls fit, capped at 10; 100 ms: 5; 0.75 s: 45 s a call, skipped.
        assert_eq!(valgrind(5e6), Some(SLOW_CALLS));
        assert_eq!(valgrind(100e6), Some(5));
        assert_eq!(valgrind(0.75e9), None);
        // Under qemu the estimate is emulated time, which follows the host's load: 50 calls up to
        // 30 s / 50 / 1.2 = 0.5 s a call.
        let qemu = QemuPlugin {
            qemu: "qemu-aarch64".into(),
            cpu: "neoverse-n1".into(),
            plugin: "libpqcount.so".into(),
            version: String::new(),
        };
        let emulated = |ns| calls_for(ns, qemu.slowdown(), qemu.full_count_ns());
        for ns in [3e6, 20e6, 0.4e9, 0.5e9] {
            assert_eq!(emulated(ns), Some(MAX_CALLS), "{ns}");
        }
        // 0.75 s a call is 0.9 s under the plugin: 33 calls fit, capped at 10.
        assert_eq!(emulated(0.75e9), Some(SLOW_CALLS));
    }

    #[test]
    fn the_child_is_told_the_phase_its_form_and_its_workload() {
        let p = crate::figures::arch::counted_phase(
            PhaseId::new(
                "openssl",
                "AES-256-GCM",
                crate::algorithm::Operation::AeadEncrypt,
                Form::Primitive,
            ),
            2,
            String::new(),
        );
        let w = Workload {
            payload_bytes: 16384,
            aad_bytes: 5,
        };
        assert_eq!(
            child_args(&p, 50, w).join(" "),
            "count-phase --backend openssl --algorithm AES-256-GCM --operation aead.encrypt --form primitive --calls 50 --payload 16384 --aad 5"
        );
    }
}
