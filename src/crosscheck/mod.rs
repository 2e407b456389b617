//! `pqprof crosscheck`: pqprof's figures beside liboqs's speed_kem / speed_sig and `openssl speed`
//! built from the same sources and run on the same core, alternating (ours, theirs, ours, theirs),
//! and beside published reference cycles. Verdicts compare the same statistic on both sides.

pub mod tools;

use crate::algorithm::{self, Operation};
use crate::backend::{self, Backend};
use crate::measure::{self, Settings, Slot, Tsc};
use crate::parse::{liboqs_speed, openssl_speed};
use crate::results::{Crosscheck, CrosscheckRow};
use crate::suite::Workload;
use crate::{case, references, stats};
use anyhow::{anyhow, bail, Context, Result};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

pub struct Options {
    pub results: PathBuf,
    pub references: PathBuf,
    pub duration_s: u64,
    pub rounds: usize,
    pub tolerance_pct: f64,
    pub openssl: bool,
}

/// What differs between pqprof's call and the tool's, by tool and operation.
fn note(tool: &str, op: Operation) -> &'static str {
    use Operation::*;
    match (tool.starts_with("liboqs"), op) {
        (true, KemEncaps) => "pqprof's call also allocates its outputs (oqs crate Vec) and checks the key length; speed_kem reuses buffers",
        (true, SigSign) => "speed_sig signs one fixed 50-byte message; pqprof a 130-byte CertificateVerify with a new hash each call",
        (true, SigVerify) => "speed_sig verifies one signature of a 50-byte message again and again; pqprof rotates through up to 16 signatures of 130-byte messages (more cache traffic)",
        (true, _) => "pqprof's call also allocates its outputs (oqs crate Vec); speed_kem/speed_sig reuse buffers",
        (false, DhDerive) => "openssl speed derives with a context and peer key made once; pqprof imports the peer share and makes a new EVP_PKEY_CTX per call, as libssl does",
        (false, KemEncaps) => "openssl speed reuses one EVP_PKEY_CTX and key; pqprof imports the encapsulation key and makes a new context per call",
        (false, KemKeygen | KemDecaps | SigKeygen) => "openssl speed reuses one EVP_PKEY_CTX; pqprof makes a new one per call (and exports the public key after keygen)",
        (false, SigSign | SigVerify) => "openssl speed signs a 32-byte zero buffer with a reused context; pqprof a 130-byte CertificateVerify with a new EVP_MD_CTX per call",
        (false, AeadEncrypt) => "openssl speed -aead re-keys every call and uses 13 bytes of AAD; pqprof keeps the key schedule and uses 5 (a TLS record header)",
        _ => "",
    }
}

struct Ours {
    mean_ns: f64,
    median_ns: f64,
    mean_cycles: Option<f64>,
}

/// pqprof's own figure, measured here for about `duration` (half the tool's time: pqprof keeps
/// every sample, so it needs fewer to pin the mean, and the whole check stays within 3 minutes).
fn ours(b: &dyn Backend, alg: &'static algorithm::Algorithm, op: Operation, duration: Duration, tsc: Tsc, core: Option<usize>) -> Result<Ours> {
    let w = Workload { payload_bytes: 16384, aad_bytes: 5 };
    let mut slot = Slot::new(case::build(b, alg, op, &w)?);
    let est = measure::warm_up(&mut slot, &Settings { warmup_ms: 50, ..Settings::default() })?;
    let n = ((duration.as_nanos() as f64 / est.max(1.0)) as usize).clamp(3, 200_000);
    slot.target = n;
    measure::run_chunk(&mut slot, n, tsc, core)?;
    let xs: Vec<f64> = slot.raw.samples_ns.iter().map(|&x| x as f64).collect();
    let c: Vec<f64> = slot.raw.cycles.iter().map(|&x| x as f64).collect();
    Ok(Ours { mean_ns: stats::mean(&xs), median_ns: stats::median(&xs), mean_cycles: (!c.is_empty()).then(|| stats::mean(&c)) })
}

fn output(cmd: &mut Command) -> Result<(String, String)> {
    crate::interrupt::check()?;
    let out = crate::interrupt::die_with_parent(cmd).output().with_context(|| format!("cannot run {:?}", cmd.get_program()))?;
    let (o, e) = (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned());
    if !out.status.success() {
        bail!("{:?} failed ({}): {}", cmd.get_program(), out.status, e.lines().last().unwrap_or(""));
    }
    Ok((o, e))
}

/// Pairs of (ours, theirs) accumulated over rounds, averaged at the end.
#[derive(Default)]
struct Pair {
    ours_ns: Vec<f64>,
    ours_median: Vec<f64>,
    ours_cycles: Vec<f64>,
    theirs_ns: Vec<f64>,
    theirs_cycles: Vec<f64>,
}

pub fn run(opts: &Options, progress: &mut dyn FnMut(&str)) -> Result<Crosscheck> {
    let start = Instant::now();
    let exe = std::env::current_exe()?;
    let profile = exe.parent().ok_or_else(|| anyhow!("no folder for {}", exe.display()))?;
    // Pinned before the tools start: children inherit this core.
    let core = measure::pin();
    let tsc = Tsc::detect();
    let tools = tools::build(profile, opts.openssl, progress)?;
    let d = Duration::from_secs(opts.duration_s);
    let liboqs = backend::liboqs::Liboqs::new();
    let openssl = backend::openssl::OpenSsl;
    let mut pairs: Vec<((String, String, String, Operation), Pair)> = Vec::new();
    let mut add = |key: (String, String, String, Operation), f: &dyn Fn(&mut Pair)| {
        if let Some((_, p)) = pairs.iter_mut().find(|(k, _)| *k == key) {
            f(p);
        } else {
            let mut p = Pair::default();
            f(&mut p);
            pairs.push((key, p));
        }
    };

    let kem_algs = ["ML-KEM-768"];
    let sig_algs: Vec<&str> = algorithm::all().iter().filter(|a| a.kind == algorithm::Kind::Sig).map(|a| a.name.as_str()).collect();
    for round in 0..opts.rounds {
        progress(&format!("round {}/{}: liboqs", round + 1, opts.rounds));
        for (tool, bin, algs, ops) in [
            ("liboqs speed_kem", &tools.speed_kem, kem_algs.to_vec(), vec![Operation::KemKeygen, Operation::KemEncaps, Operation::KemDecaps]),
            ("liboqs speed_sig", &tools.speed_sig, sig_algs.clone(), vec![Operation::SigKeygen, Operation::SigSign, Operation::SigVerify]),
        ] {
            for alg_name in algs {
                let alg = algorithm::find(alg_name).ok_or_else(|| anyhow!("unknown {alg_name}"))?;
                let native = liboqs.native_name(alg_name).ok_or_else(|| anyhow!("liboqs lacks {alg_name}"))?;
                for &op in &ops {
                    crate::interrupt::check()?;
                    let o = ours(&liboqs, alg, op, d / 2, tsc, core)?;
                    add((tool.into(), "liboqs".into(), alg_name.into(), op), &|p| {
                        p.ours_ns.push(o.mean_ns);
                        p.ours_median.push(o.median_ns);
                        p.ours_cycles.extend(o.mean_cycles);
                    });
                }
                let (text, _) = output(Command::new(bin).args(["--duration", &opts.duration_s.to_string(), native]))?;
                for r in liboqs_speed::parse(&text)? {
                    let Some(&op) = ops.iter().find(|o| liboqs_speed::op_name(**o) == Some(r.operation.as_str())) else { continue };
                    add((tool.into(), "liboqs".into(), alg_name.into(), op), &|p| {
                        p.theirs_ns.push(r.mean_us * 1e3);
                        p.theirs_cycles.extend(r.mean_cycles);
                    });
                }
            }
        }
        if let Some(app) = &tools.openssl {
            progress(&format!("round {}/{}: openssl speed", round + 1, opts.rounds));
            let secs = opts.duration_s.to_string();
            let groups: [&[&str]; 3] = [
                &["ecdhx25519", "ecdhp256"],
                &["ML-KEM-768", "ML-DSA-44", "ML-DSA-65", "ML-DSA-87"],
                &["-evp", "aes-256-gcm", "-bytes", "16384", "-aead"],
            ];
            for args in groups {
                let (_, err) = output(Command::new(app).args(["speed", "-mr", "-elapsed", "-seconds", &secs]).args(args))?;
                for r in openssl_speed::parse(&err)? {
                    let Some(alg) = algorithm::find(&r.algorithm) else { continue };
                    if !openssl.supports(&alg.name, r.operation) {
                        continue;
                    }
                    let o = ours(&openssl, alg, r.operation, d / 2, tsc, core)?;
                    add(("openssl speed".into(), "openssl".into(), alg.name.clone(), r.operation), &|p| {
                        p.ours_ns.push(o.mean_ns);
                        p.ours_median.push(o.median_ns);
                        p.theirs_ns.push(r.mean_ns());
                    });
                }
            }
        }
    }

    let rows = pairs
        .into_iter()
        .filter(|(_, p)| !p.ours_ns.is_empty() && !p.theirs_ns.is_empty())
        .map(|((tool, backend, algorithm, operation), p)| {
            let cycles = p.ours_cycles.len() == p.ours_ns.len() && p.theirs_cycles.len() == p.theirs_ns.len() && !p.theirs_cycles.is_empty();
            let (statistic, ours, theirs) = if cycles {
                ("mean TSC cycles", stats::mean(&p.ours_cycles), stats::mean(&p.theirs_cycles))
            } else {
                ("mean ns", stats::mean(&p.ours_ns), stats::mean(&p.theirs_ns))
            };
            let diff_pct = (ours - theirs) / theirs * 100.0;
            CrosscheckRow {
                note: note(&tool, operation).into(),
                tool,
                backend,
                algorithm,
                operation,
                statistic: statistic.into(),
                pqprof: ours,
                pqprof_median_ns: stats::mean(&p.ours_median),
                tool_value: theirs,
                diff_pct,
                agree: diff_pct.abs() <= opts.tolerance_pct,
            }
        })
        .collect();
    let results = crate::results::read(&opts.results)?;
    Ok(Crosscheck {
        date_utc: crate::run::utc_now(),
        wall_seconds: start.elapsed().as_secs_f64(),
        tolerance_pct: opts.tolerance_pct,
        duration_s: opts.duration_s,
        rounds: opts.rounds,
        rows,
        references: references::reference_rows(&results, &opts.references)?,
    })
}

/// The verdict table as text.
pub fn table(c: &Crosscheck) -> String {
    use crate::units::text_table;
    let head = ["tool", "backend", "algorithm", "operation", "statistic", "pqprof", "tool", "diff", "verdict"];
    let rows: Vec<Vec<String>> = c
        .rows
        .iter()
        .map(|r| {
            vec![
                r.tool.clone(),
                r.backend.clone(),
                r.algorithm.clone(),
                r.operation.name().into(),
                r.statistic.clone(),
                format!("{:.0}", r.pqprof),
                format!("{:.0}", r.tool_value),
                format!("{:.1}%", r.diff_pct),
                if r.agree { "agree".to_string() } else { format!("DISAGREE: {}", r.note) },
            ]
        })
        .collect();
    let mut s = text_table(&head, &rows, &[5, 6, 7]) + "\n";
    s += "\nPublished references (pqprof median TSC cycles / reference; like-for-like only on the same microarchitecture):\n";
    let rows: Vec<Vec<String>> = c
        .references
        .iter()
        .map(|r| {
            vec![
                r.algorithm.clone(),
                r.operation.name().into(),
                r.backend.clone(),
                format!("{:.2}", r.pqprof_cycles),
                format!("{:.2}", r.reference_cycles),
                format!("{:.2}x", r.ratio),
                format!("{} on {}{}", r.implementation, r.machine, if r.comparable { "" } else { ", other microarchitecture" }),
                r.source.clone(),
            ]
        })
        .collect();
    s += &text_table(&["algorithm", "operation", "backend", "pqprof", "reference", "ratio", "implementation", "source"], &rows, &[3, 4, 5]);
    s + "\n"
}
