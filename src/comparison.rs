//! `pqprof compare A B`: every phase and suite present in both runs, the ratio of medians B / A
//! with a 95% bootstrap interval, and a verdict that knows about noise.

use crate::cli::Format;
use crate::compose;
use crate::render::format;
use crate::results::Results;
use crate::stats::{self, SplitMix64};
use anyhow::Result;
use serde::Serialize;
use std::fmt::Write;

#[derive(Debug, Serialize)]
pub struct Comparison {
    pub a: String,
    pub b: String,
    /// Why the two may differ for reasons other than the code: different host or tool version.
    pub caveats: Vec<String>,
    pub rows: Vec<Row>,
}

#[derive(Debug, Serialize)]
pub struct Row {
    /// "phase" or "suite".
    pub kind: String,
    pub name: String,
    pub a_median_ns: f64,
    pub b_median_ns: f64,
    pub ratio: f64,
    pub ratio_ci95: Option<(f64, f64)>,
    /// Changes smaller than this, percent, are called noise (see `noise_floor`).
    pub noise_floor_pct: f64,
    pub verdict: Verdict,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Faster,
    Slower,
    NoChange,
}

impl Verdict {
    /// B is faster when the whole interval of B / A lies below 1 and the change is larger than the
    /// noise floor, slower likewise above; otherwise the difference is within the noise. The
    /// bootstrap interval only knows the noise inside one run; the floor stands for the drift
    /// between runs, which on a shared machine is larger.
    pub fn judge(ci: Option<(f64, f64)>, ratio: f64, floor_pct: f64) -> Verdict {
        let floor = floor_pct / 100.0;
        match ci {
            Some((_, hi)) if hi < 1.0 && ratio < 1.0 - floor => Verdict::Faster,
            Some((lo, _)) if lo > 1.0 && ratio > 1.0 + floor => Verdict::Slower,
            _ => Verdict::NoChange,
        }
    }

    pub fn text(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoChange => "no change within noise",
        }
    }
}

fn label(r: &Results) -> String {
    format!("{} {} ({})", r.run.host.hostname, r.run.date_utc, r.run.tool_commit)
}

fn boot_medians(samples: &[u64], seed: u64) -> Vec<f64> {
    let xs: Vec<f64> = samples.iter().map(|&x| x as f64).collect();
    if xs.len() < 2 {
        return Vec::new();
    }
    let mut rng = SplitMix64(seed);
    let mut buf = vec![0.0; xs.len()];
    (0..stats::BOOTSTRAP_RESAMPLES)
        .map(|_| {
            for b in buf.iter_mut() {
                *b = xs[rng.below(xs.len())];
            }
            stats::median_in_place(&mut buf)
        })
        .collect()
}

fn ratio_interval(a: &[f64], b: &[f64]) -> Option<(f64, f64)> {
    if a.is_empty() || a.len() != b.len() {
        return None;
    }
    let r: Vec<f64> = a.iter().zip(b).map(|(x, y)| y / x).collect();
    let s = stats::sorted(&r);
    Some((stats::percentile_sorted(&s, 2.5), stats::percentile_sorted(&s, 97.5)))
}

/// The between-run noise for one figure: the given threshold, or twice the combined relative spread
/// of the process-sample medians when both runs have them (`run --samples K`), whichever is larger.
fn noise_floor(a: &Results, b: &Results, name: &str, threshold_pct: f64) -> f64 {
    let rsd = |r: &Results| {
        r.process_samples.as_ref().and_then(|ps| ps.phases.iter().chain(&ps.suites).find(|s| s.name == name).map(|s| s.rsd_pct))
    };
    match (rsd(a), rsd(b)) {
        (Some(x), Some(y)) => threshold_pct.max(2.0 * (x * x + y * y).sqrt()),
        _ => threshold_pct,
    }
}

/// The default noise floor, percent: back-to-back runs of the same code on this project's shared
/// 2-vCPU machine differed by up to about 4% per phase (smoke/reliability.sh); at 5% two such runs
/// compare as "no change" on all but one or two of 116 figures.
pub const DEFAULT_NOISE_FLOOR_PCT: f64 = 5.0;

fn row(kind: &str, name: String, a_median_ns: f64, b_median_ns: f64, ci: Option<(f64, f64)>, floor: f64) -> Row {
    let ratio = b_median_ns / a_median_ns;
    Row { kind: kind.into(), name, a_median_ns, b_median_ns, ratio, ratio_ci95: ci, noise_floor_pct: floor, verdict: Verdict::judge(ci, ratio, floor) }
}

pub fn compare(a: &Results, b: &Results, threshold_pct: f64) -> Comparison {
    let mut caveats = Vec::new();
    if a.run.host.hostname != b.run.host.hostname || a.run.host.cpu_model != b.run.host.cpu_model || a.run.host.arch != b.run.host.arch {
        caveats.push(format!(
            "different hosts ({} {} vs {} {}): differences include the machine",
            a.run.host.cpu_model, a.run.host.arch, b.run.host.cpu_model, b.run.host.arch
        ));
    }
    if a.run.tool_commit != b.run.tool_commit || a.run.liboqs_version != b.run.liboqs_version || a.run.openssl_version != b.run.openssl_version {
        caveats.push(format!(
            "different tool or library versions ({} / liboqs {} / {} vs {} / liboqs {} / {})",
            a.run.tool_commit, a.run.liboqs_version, a.run.openssl_version, b.run.tool_commit, b.run.liboqs_version, b.run.openssl_version
        ));
    }
    let mut rows = Vec::new();
    for (i, pa) in a.phases.iter().enumerate() {
        let Some(pb) = b.phase(&pa.backend, &pa.algorithm, pa.operation) else { continue };
        let ci = ratio_interval(&boot_medians(&pa.samples_ns, 1 + i as u64), &boot_medians(&pb.samples_ns, 0x1000 + i as u64));
        let name = format!("{} {} {}", pa.backend, pa.algorithm, pa.operation);
        let floor = noise_floor(a, b, &name, threshold_pct);
        rows.push(row("phase", name, pa.stats.median_ns, pb.stats.median_ns, ci, floor));
    }
    let (wa, wb) = (compose::bootstrap_medians(&a.suites, &a.phases), compose::bootstrap_medians(&b.suites, &b.phases));
    for (i, sa) in a.suites.iter().enumerate() {
        let Some(j) = b.suites.iter().position(|s| s.name == sa.name && s.stack == sa.stack) else { continue };
        let sb = &b.suites[j];
        let ci = ratio_interval(&wa[i], &wb[j]);
        let name = format!("{} [{}]", sa.name, sa.stack);
        let floor = noise_floor(a, b, &name, threshold_pct);
        rows.push(row("suite", name, sa.composed.median_ns, sb.composed.median_ns, ci, floor));
    }
    Comparison { a: label(a), b: label(b), caveats, rows }
}

fn ci_text(ci: Option<(f64, f64)>) -> String {
    ci.map_or("n/a".into(), |(lo, hi)| format!("{lo:.3}–{hi:.3}"))
}

pub fn render(c: &Comparison, fmt: Format) -> Result<String> {
    let mut s = String::new();
    match fmt {
        Format::Json => s = serde_json::to_string_pretty(c)? + "\n",
        Format::Md | Format::Table => {
            let md = fmt == Format::Md;
            writeln!(s, "A: {}{}B: {}\n", c.a, if md { "  \n" } else { "\n" }, c.b)?;
            for cv in &c.caveats {
                writeln!(s, "{}{cv}\n", if md { "> Note: " } else { "note: " })?;
            }
            let head = ["", "name", "A median", "B median", "B / A", "95% interval", "noise floor", "verdict"];
            let cells = |r: &Row| {
                [
                    r.kind.clone(),
                    r.name.clone(),
                    format::time(r.a_median_ns),
                    format::time(r.b_median_ns),
                    format!("{:.3}", r.ratio),
                    ci_text(r.ratio_ci95),
                    format!("{:.1}%", r.noise_floor_pct),
                    r.verdict.text().to_string(),
                ]
            };
            if md {
                writeln!(s, "| {} |\n|---|---|---:|---:|---:|---|---:|---|", head.join(" | "))?;
                for r in &c.rows {
                    writeln!(s, "| {} |", cells(r).join(" | "))?;
                }
            } else {
                let line = |c: [String; 8]| format!("{:<6} {:<44} {:>11} {:>11} {:>7} {:>13} {:>11}  {}", c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]);
                writeln!(s, "{}", line(head.map(String::from)))?;
                for r in &c.rows {
                    writeln!(s, "{}", line(cells(r)))?;
                }
            }
        }
    }
    Ok(s)
}

/// Spread of each delta vs baseline over runs, in percentage points (max - min): how well the
/// within-run comparison holds when the whole machine drifts between runs.
pub fn delta_spread(runs: &[Results]) -> Vec<(String, f64)> {
    let Some(first) = runs.first() else { return Vec::new() };
    first
        .suites
        .iter()
        .filter(|s| s.delta_vs_baseline_pct.is_some())
        .filter_map(|s| {
            let d: Vec<f64> = runs
                .iter()
                .filter_map(|r| r.suites.iter().find(|x| x.name == s.name && x.stack == s.stack))
                .filter_map(|x| x.delta_vs_baseline_pct)
                .collect();
            (d.len() == runs.len()).then(|| {
                let (lo, hi) = d.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| (l.min(*x), h.max(*x)));
                (format!("{} [{}]", s.name, s.stack), hi - lo)
            })
        })
        .collect()
}

/// Spread of each composed median over runs of the same measurement: (max - min) / median.
pub fn spread(runs: &[Results]) -> Vec<(String, f64)> {
    let Some(first) = runs.first() else { return Vec::new() };
    first
        .suites
        .iter()
        .filter_map(|s| {
            let m: Vec<f64> = runs
                .iter()
                .filter_map(|r| r.suites.iter().find(|x| x.name == s.name && x.stack == s.stack))
                .map(|x| x.composed.median_ns)
                .collect();
            (m.len() == runs.len()).then(|| {
                let (lo, hi) = m.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| (l.min(*x), h.max(*x)));
                (format!("{} [{}]", s.name, s.stack), (hi - lo) / stats::median(&m) * 100.0)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_follow_the_interval_and_the_floor() {
        assert_eq!(Verdict::judge(Some((0.80, 0.95)), 0.88, 2.0), Verdict::Faster);
        assert_eq!(Verdict::judge(Some((1.02, 1.10)), 1.06, 2.0), Verdict::Slower);
        assert_eq!(Verdict::judge(Some((0.97, 1.03)), 1.0, 2.0), Verdict::NoChange);
        // A tight interval around a 1% change is still within the between-run floor.
        assert_eq!(Verdict::judge(Some((1.008, 1.012)), 1.01, 2.0), Verdict::NoChange);
        assert_eq!(Verdict::judge(Some((1.008, 1.012)), 1.01, 0.5), Verdict::Slower);
        assert_eq!(Verdict::judge(None, 2.0, 2.0), Verdict::NoChange);
    }

    #[test]
    fn ratio_interval_pairs_worlds() {
        assert_eq!(ratio_interval(&[1.0, 2.0], &[2.0, 4.0]), Some((2.0, 2.0)));
        assert_eq!(ratio_interval(&[], &[]), None);
    }
}
