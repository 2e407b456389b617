//! `pqprof crosscheck`: pqprof's figures beside liboqs's speed_kem / speed_sig and `openssl speed`
//! built from the same sources and run on the same core, and beside published reference cycles.
//!
//! Like for like: pqprof's side is the primitive form wherever the handshake form does setup the
//! tool does once (OpenSSL's key import and contexts), and signatures are timed on one fixed 50-byte
//! message as speed_sig does. Each tool run sits between two of pqprof's, so each round gives a
//! ratio that cancels slow drift; the ratios give a 95% interval, and a row disagrees only when the
//! whole interval lies outside the tolerance ("undecided" when it straddles the edge). On a noisy
//! host a few rounds leave intervals wider than the tolerance, so a tool run goes on, round by
//! round, while any of its phases is undecided (`--rounds` to `--max-rounds`); `check` replays that
//! rule from the stored rounds.

pub mod tools;

use crate::algorithm::{self, Operation};
use crate::backend::{self, Backend};
use crate::measure::{self, Settings, Slot, Timer};
use crate::parse::{liboqs_speed, openssl_speed};
use crate::results::{should_continue, Agreement, Crosscheck, CrosscheckRow, Form};
use crate::suite::Workload;
use crate::{case, references, stats};
use anyhow::{anyhow, bail, Context, Result};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

pub(crate) struct Options {
    pub(crate) results: PathBuf,
    pub(crate) references: PathBuf,
    pub(crate) duration_s: u64,
    /// Rounds before a verdict can end a tool run, and the most it may have.
    pub(crate) rounds: usize,
    pub(crate) max_rounds: usize,
    /// Only the tool runs that measure one of these algorithms (all when empty).
    pub(crate) only: Vec<String>,
    pub(crate) tolerance_pct: f64,
    pub(crate) openssl: bool,
}

/// What still differs between pqprof's call and the tool's, by tool and operation.
fn note(tool: &str, op: Operation) -> &'static str {
    use Operation::*;
    match (tool.starts_with("liboqs"), op) {
        (true, KemKeygen | KemEncaps | KemDecaps) => "pqprof's call allocates its outputs (oqs crate Vec); speed_kem reuses buffers",
        (true, _) => "both: one fixed 50-byte message (pqprof allocates its outputs; speed_sig reuses buffers)",
        (false, SigSign | SigVerify) => "openssl speed signs a 32-byte zero buffer with a reused context; pqprof a fixed 50-byte message with a new EVP_MD_CTX per call",
        (false, AeadEncrypt) => "openssl speed -aead re-keys every call, uses 13 bytes of AAD and one hot buffer in a loop of seconds, timed once; pqprof keeps the key schedule, uses 5 (a TLS record header), copies each record in before the clock and re-enters the phase in short round-robin chunks, timed per sample: at a microsecond a call the chunk's first samples and the clock reads weigh (tools/crosscheck/aead-harnesses.sh measures each part)",
        (false, _) => "both reuse the context and the imported key (pqprof's primitive form)",
    }
}

/// The timed loop's clock: the timer, its own cost, the pinned core.
#[derive(Clone, Copy)]
struct Clock<'a> {
    timer: &'a Timer,
    overhead_ns: f64,
    core: Option<usize>,
}

/// pqprof's own figures over about `duration`: (mean cycles where counted, else mean nanoseconds;
/// whether it counted cycles; median nanoseconds).
fn ours(
    b: &dyn Backend,
    alg: &'static algorithm::Algorithm,
    op: Operation,
    form: Form,
    duration: Duration,
    clock: Clock,
) -> Result<(f64, bool, f64)> {
    let Clock {
        timer,
        overhead_ns,
        core,
    } = clock;
    let w = Workload {
        payload_bytes: 16384,
        aad_bytes: 5,
    };
    let mut slot = Slot::new(case::build(b, alg, op, &w, form)?);
    let per_sample = measure::warm_up(
        &mut slot,
        &Settings {
            warmup_ms: 50,
            ..Settings::default()
        },
        timer,
        overhead_ns,
    )?;
    let n = ((duration.as_nanos() as f64 / per_sample.max(1.0)) as usize).clamp(3, 200_000);
    slot.target = n;
    measure::run_chunk(&mut slot, n, timer, core)?;
    let ns: Vec<f64> = slot.raw.samples_ns.iter().map(|&x| x as f64).collect();
    Ok(if slot.raw.cycles.is_empty() {
        (stats::mean(&ns), false, stats::median(&ns))
    } else {
        (
            stats::mean(
                &slot
                    .raw
                    .cycles
                    .iter()
                    .map(|&x| x as f64)
                    .collect::<Vec<_>>(),
            ),
            true,
            stats::median(&ns),
        )
    })
}

fn output(cmd: &mut Command) -> Result<(String, String)> {
    crate::interrupt::check()?;
    let out = crate::interrupt::die_with_parent(cmd)
        .output()
        .with_context(|| format!("cannot run {:?}", cmd.get_program()))?;
    let (o, e) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    if !out.status.success() {
        bail!(
            "{:?} failed ({}): {}",
            cmd.get_program(),
            out.status,
            e.lines().last().unwrap_or("")
        );
    }
    Ok((o, e))
}

/// One compared phase and its rounds.
struct Pair {
    tool: &'static str,
    backend: &'static str,
    algorithm: String,
    op: Operation,
    form: Form,
    ours: Vec<f64>,
    ours_median_ns: Vec<f64>,
    theirs: Vec<f64>,
    cycles: bool,
    /// Index of the tool run (`Group`) it belongs to.
    group: usize,
}

/// A geometric-mean ratio and its 95% interval (`stats::paired_ratio`).
type Ratio = (f64, Option<(f64, f64)>);

/// pqprof's rounds in the statistic compared (where the tool counted nanoseconds only, pqprof's
/// cycles become nanoseconds too), the ratio with its 95% interval, and the verdict.
fn judged(p: &Pair, timer: &Timer, tolerance_pct: f64) -> (Vec<f64>, Ratio, Agreement) {
    let ours: Vec<f64> = if p.cycles || !timer.counts_cycles() {
        p.ours.clone()
    } else {
        p.ours.iter().map(|c| timer.ns(*c as u64)).collect()
    };
    let (ratio, ci) = stats::paired_ratio(&ours, &p.theirs).unwrap_or((f64::NAN, None));
    let verdict = Agreement::judge(ci, tolerance_pct);
    (ours, (ratio, ci), verdict)
}

/// A tool run and the phases it reports: (tool, backend, command, the phases to pair).
struct Group {
    tool: &'static str,
    backend: &'static str,
    cmd: Vec<String>,
    bin: PathBuf,
    phases: Vec<(String, Operation)>,
}

/// The tool runs: liboqs's speed_kem and speed_sig for every algorithm it names, and `openssl speed`
/// where the tool was built, each with the phases of pqprof it is set against.
fn groups(tools: &tools::Tools, liboqs: &backend::liboqs::Liboqs, secs: &str) -> Vec<Group> {
    let mut groups = Vec::new();
    let kem_ops = [
        Operation::KemKeygen,
        Operation::KemEncaps,
        Operation::KemDecaps,
    ];
    let sig_ops = [
        Operation::SigKeygen,
        Operation::SigSign,
        Operation::SigVerify,
    ];
    groups.push(Group {
        tool: "liboqs speed_kem",
        backend: "liboqs",
        bin: tools.speed_kem.clone(),
        cmd: vec![
            "--duration".into(),
            secs.into(),
            liboqs
                .native_name("ML-KEM-768")
                .unwrap_or("ML-KEM-768")
                .into(),
        ],
        phases: kem_ops
            .iter()
            .map(|o| ("ML-KEM-768".to_string(), *o))
            .collect(),
    });
    for a in algorithm::all()
        .iter()
        .filter(|a| a.kind == algorithm::Kind::Sig)
    {
        let Some(native) = liboqs.native_name(&a.name) else {
            continue;
        };
        groups.push(Group {
            tool: "liboqs speed_sig",
            backend: "liboqs",
            bin: tools.speed_sig.clone(),
            cmd: vec!["--duration".into(), secs.into(), native.into()],
            phases: sig_ops.iter().map(|o| (a.name.clone(), *o)).collect(),
        });
    }
    if let Some(app) = &tools.openssl {
        let speed = |args: &[&str], phases: Vec<(&str, Operation)>| Group {
            tool: "openssl speed",
            backend: "openssl",
            bin: app.clone(),
            cmd: ["speed", "-mr", "-elapsed", "-seconds", secs]
                .iter()
                .chain(args)
                .map(|s| s.to_string())
                .collect(),
            phases: phases
                .into_iter()
                .map(|(a, o)| (a.to_string(), o))
                .collect(),
        };
        groups.push(speed(
            &["ecdhx25519", "ecdhp256"],
            vec![
                ("X25519", Operation::DhDerive),
                ("P-256", Operation::DhDerive),
            ],
        ));
        groups.push(speed(
            &["ML-KEM-768"],
            kem_ops.iter().map(|o| ("ML-KEM-768", *o)).collect(),
        ));
        for a in ["ML-DSA-44", "ML-DSA-65", "ML-DSA-87"] {
            groups.push(speed(&[a], sig_ops.iter().map(|o| (a, *o)).collect()));
        }
        groups.push(speed(
            &["-evp", "aes-256-gcm", "-bytes", "16384", "-aead"],
            vec![("AES-256-GCM", Operation::AeadEncrypt)],
        ));
    }
    groups
}

/// One tool run's figures, each added to the pair it measures.
fn theirs(g: &Group, pairs: &mut [Pair], out: &str, err: &str) -> Result<()> {
    if g.tool.starts_with("liboqs") {
        for row in liboqs_speed::parse(out)? {
            let Some(p) = pairs
                .iter_mut()
                .find(|p| liboqs_speed::op_name(p.op) == Some(row.operation.as_str()))
            else {
                continue;
            };
            match (p.cycles, row.mean_cycles) {
                (true, Some(c)) => p.theirs.push(c),
                _ => {
                    p.cycles = false;
                    p.theirs.push(row.mean_us * 1e3);
                }
            }
        }
    } else {
        for row in openssl_speed::parse(err)? {
            let Some(p) = pairs
                .iter_mut()
                .find(|p| p.algorithm == row.algorithm && p.op == row.operation)
            else {
                continue;
            };
            // openssl speed reports counts per second: nanoseconds only.
            p.cycles = false;
            p.theirs.push(row.mean_ns());
        }
    }
    Ok(())
}

/// A group's pairs, each phase in the form the tool measures.
fn pairs_of(g: &Group, gi: usize, be: &dyn Backend) -> Vec<Pair> {
    g.phases
        .iter()
        .map(|(alg_name, op)| {
            // The primitive form where this backend's handshake form does setup the tool does once;
            // signatures always (the tools sign one fixed message).
            let form = if be.setup(alg_name, *op).is_some() || op.kind() == algorithm::Kind::Sig {
                Form::Primitive
            } else {
                Form::Handshake
            };
            Pair {
                tool: g.tool,
                backend: g.backend,
                algorithm: alg_name.clone(),
                op: *op,
                form,
                ours: Vec::new(),
                ours_median_ns: Vec::new(),
                theirs: Vec::new(),
                cycles: true,
                group: gi,
            }
        })
        .collect()
}

/// A pair's stored row: both sides' rounds, their ratio with its interval, and the verdict.
fn row(p: Pair, timer: &Timer, tolerance_pct: f64) -> CrosscheckRow {
    let (ours, (ratio, ci), verdict) = judged(&p, timer, tolerance_pct);
    CrosscheckRow {
        note: note(p.tool, p.op).into(),
        tool: p.tool.into(),
        backend: p.backend.into(),
        algorithm: p.algorithm,
        operation: p.op,
        statistic: if p.cycles {
            "mean TSC cycles"
        } else {
            "mean ns"
        }
        .into(),
        pqprof: stats::mean(&ours),
        pqprof_median_ns: stats::median(&p.ours_median_ns),
        tool_value: stats::mean(&p.theirs),
        diff_pct: (ratio - 1.0) * 100.0,
        agree: verdict == Agreement::Agree,
        form: p.form,
        pqprof_rounds: ours,
        tool_rounds: p.theirs,
        diff_ci95_pct: ci.map(|(lo, hi)| ((lo - 1.0) * 100.0, (hi - 1.0) * 100.0)),
        verdict: Some(verdict),
        group: Some(p.group),
    }
}

pub(crate) fn run(opts: &Options, progress: &mut dyn FnMut(&str)) -> Result<Crosscheck> {
    let start = Instant::now();
    let exe = std::env::current_exe()?;
    let profile = exe
        .parent()
        .ok_or_else(|| anyhow!("no folder for {}", exe.display()))?;
    // Pinned before the tools start: children inherit this core.
    let core = measure::pin();
    let timer = Timer::detect(Duration::from_millis(200));
    let (overhead_ns, _) = timer.overhead();
    let tools = tools::build(profile, opts.openssl, progress)?;
    let liboqs = backend::liboqs::Liboqs::new();
    let openssl = backend::openssl::OpenSsl;
    let mut groups = groups(&tools, &liboqs, &opts.duration_s.to_string());
    if !opts.only.is_empty() {
        groups.retain(|g| {
            g.phases
                .iter()
                .any(|(a, _)| opts.only.iter().any(|o| o.eq_ignore_ascii_case(a)))
        });
        if groups.is_empty() {
            bail!(
                "--only {}: no tool run measures these algorithms",
                opts.only.join(", ")
            );
        }
    }

    let d = Duration::from_secs(opts.duration_s) / 2;
    let (min_rounds, max_rounds) = (opts.rounds.max(2), opts.max_rounds.max(opts.rounds.max(2)));
    let mut pairs: Vec<Pair> = Vec::new();
    for (gi, g) in groups.iter().enumerate() {
        let be: &dyn Backend = if g.backend == "liboqs" {
            &liboqs
        } else {
            &openssl
        };
        let first = pairs.len();
        pairs.extend(pairs_of(g, gi, be));
        // ours, theirs, ours, ..., ours: every tool run between two of pqprof's, at least
        // `min_rounds` of them, and more while a phase of this run is undecided.
        let mut k = 0;
        loop {
            // pqprof's k+1-th measurement follows the tool's k-th run: the tool runs are the
            // rounds counted against the bounds.
            progress(&format!(
                "{}/{} {} {}: pqprof after {k} tool run(s) (at least {min_rounds}, at most {max_rounds})",
                gi + 1,
                groups.len(),
                g.tool,
                g.cmd.last().map_or("", String::as_str),
            ));
            for p in &mut pairs[first..] {
                crate::interrupt::check()?;
                let alg = algorithm::find(&p.algorithm)
                    .ok_or_else(|| anyhow!("unknown {}", p.algorithm))?;
                let (v, cycles, median) = ours(
                    be,
                    alg,
                    p.op,
                    p.form,
                    d,
                    Clock {
                        timer: &timer,
                        overhead_ns,
                        core,
                    },
                )?;
                p.ours.push(v);
                p.ours_median_ns.push(median);
                p.cycles &= cycles;
            }
            let verdicts: Vec<Agreement> = pairs[first..]
                .iter()
                .filter(|p| !p.theirs.is_empty())
                .map(|p| judged(p, &timer, opts.tolerance_pct).2)
                .collect();
            if !should_continue(&verdicts, k, min_rounds, max_rounds) {
                break;
            }
            k += 1;
            let (out, err) = output(Command::new(&g.bin).args(&g.cmd))?;
            theirs(g, &mut pairs[first..], &out, &err)?;
        }
    }

    let rows = pairs
        .into_iter()
        .filter(|p| !p.theirs.is_empty() && p.ours.len() == p.theirs.len() + 1)
        .map(|p| row(p, &timer, opts.tolerance_pct))
        .collect();
    let results = crate::results::read(&opts.results)?;
    Ok(Crosscheck {
        date_utc: crate::host::utc_now(),
        wall_seconds: start.elapsed().as_secs_f64(),
        tolerance_pct: opts.tolerance_pct,
        duration_s: opts.duration_s,
        rounds: min_rounds,
        max_rounds: Some(max_rounds),
        rows,
        references: references::reference_rows(&results, &opts.references)?,
    })
}
