//! `pqprof compare A B`: every phase and suite present in both runs, the ratio of medians B / A
//! with a 95% interval, and a verdict that knows about noise.
//!
//! The interval of B / A comes from the two runs' stored 95% intervals (which `check` recomputes
//! from the raw samples): each is read as a log-normal estimate, se = ln(high / low) / (2 x 1.96),
//! and the two independent runs combine in quadrature. Nothing is resampled here, so comparing
//! many runs with one baseline stays fast.

use crate::results::Results;
use crate::stats;
use crate::units;
use anyhow::Result;
use serde::Serialize;
use std::fmt::Write;

/// How `compare` writes its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Md,
    Json,
}

#[derive(Debug, Serialize)]
pub struct Comparison {
    pub(crate) a: String,
    pub(crate) b: String,
    /// Why the two may differ for reasons other than the code: different host or tool version.
    pub(crate) caveats: Vec<String>,
    pub(crate) rows: Vec<Row>,
}

#[derive(Debug, Serialize)]
pub(crate) struct Row {
    /// "phase", "suite" or "handshake" (a real handshake scenario, from its samples' medians).
    pub(crate) kind: String,
    pub(crate) name: String,
    pub(crate) a_median_ns: f64,
    pub(crate) b_median_ns: f64,
    /// What the ratio and verdict are of: "instructions" where both runs counted them (they do not
    /// move with machine load), else "median ns".
    pub(crate) statistic: String,
    pub(crate) a_instructions: Option<f64>,
    pub(crate) b_instructions: Option<f64>,
    pub(crate) ratio: f64,
    pub(crate) ratio_ci95: Option<(f64, f64)>,
    /// Changes smaller than this, percent, are called noise (see `noise_floor`).
    pub(crate) noise_floor_pct: f64,
    pub(crate) verdict: Verdict,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Verdict {
    Faster,
    Slower,
    NoChange,
}

impl Verdict {
    /// B is faster when the whole interval of B / A lies below 1 and the change is larger than the
    /// noise floor, slower likewise above; otherwise the difference is within the noise. The
    /// bootstrap interval only knows the noise inside one run; the floor stands for the drift
    /// between runs, which on a shared machine is larger.
    pub(crate) fn judge(ci: Option<(f64, f64)>, ratio: f64, floor_pct: f64) -> Verdict {
        let floor = floor_pct / 100.0;
        match ci {
            Some((_, hi)) if hi < 1.0 && ratio < 1.0 - floor => Verdict::Faster,
            Some((lo, _)) if lo > 1.0 && ratio > 1.0 + floor => Verdict::Slower,
            _ => Verdict::NoChange,
        }
    }

    pub(crate) fn text(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoChange => "no change within noise",
        }
    }
}

/// Standard error of ln(median) from a stored 95% interval.
fn log_se(ci: Option<(f64, f64)>) -> Option<f64> {
    let (lo, hi) = ci?;
    (lo > 0.0 && hi >= lo && hi.is_finite()).then(|| (hi / lo).ln() / (2.0 * 1.96))
}

/// 95% interval of B / A from the two medians and their stored intervals.
pub(crate) fn ratio_interval(
    a_median: f64,
    a_ci: Option<(f64, f64)>,
    b_median: f64,
    b_ci: Option<(f64, f64)>,
) -> Option<(f64, f64)> {
    let se = (log_se(a_ci)?.powi(2) + log_se(b_ci)?.powi(2)).sqrt();
    let r = b_median / a_median;
    r.is_finite()
        .then(|| (r * (-1.96 * se).exp(), r * (1.96 * se).exp()))
}

/// The between-run noise for one figure. Where both runs measured their phases in several
/// processes with a precision target (files from 2026-12-01 on), the intervals already hold the
/// spread between processes: the floor is the larger of the two targets (a change smaller than
/// the precision asked for is not called). Otherwise the given threshold, or twice the combined
/// relative spread of the process-sample medians when both runs have them, whichever is larger.
fn noise_floor(a: &Results, b: &Results, name: &str, threshold_pct: f64) -> f64 {
    let target = |r: &Results| {
        let p = &r.run.iterations_policy;
        p.target_pct.filter(|_| p.processes.is_some_and(|k| k > 1))
    };
    if let (Some(x), Some(y)) = (target(a), target(b)) {
        return x.max(y);
    }
    let rsd = |r: &Results| {
        r.process_samples.as_ref().and_then(|ps| {
            ps.phases
                .iter()
                .chain(&ps.suites)
                .find(|s| s.name == name)
                .map(|s| s.rsd_pct)
        })
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

/// A change in instructions per call beyond this, percent, is a change in the code path: counts
/// repeat to within 0.1% where the randomness is seeded, and a little more where it cannot be.
pub(crate) const INSTRUCTION_FLOOR_PCT: f64 = 0.5;

/// Instructions per call (or composed) of each run, with the 95% half-width from per-call counts
/// where the run has them.
type Counted = (Option<f64>, Option<f64>, Option<f64>, Option<f64>);

fn row(
    kind: &str,
    name: String,
    a_median_ns: f64,
    b_median_ns: f64,
    ci: Option<(f64, f64)>,
    floor: f64,
    ins: Counted,
) -> Row {
    if let (Some(ai), Some(bi)) = (ins.0, ins.1) {
        // Counts repeat exactly where a call's work does not depend on its input: the interval is
        // the ratio itself. Where it does (a rejection loop), the per-call counts give each mean an
        // interval, and the ratio's interval combines the two.
        let ratio = bi / ai;
        let around = |m: f64, h: Option<f64>| h.map(|h| ((m - h).max(f64::MIN_POSITIVE), m + h));
        let ci = match (around(ai, ins.2), around(bi, ins.3)) {
            (Some(a), Some(b)) => {
                ratio_interval(ai, Some(a), bi, Some(b)).unwrap_or((ratio, ratio))
            }
            _ => (ratio, ratio),
        };
        return Row {
            kind: kind.into(),
            name,
            a_median_ns,
            b_median_ns,
            statistic: "instructions".into(),
            a_instructions: Some(ai),
            b_instructions: Some(bi),
            ratio,
            ratio_ci95: Some(ci),
            noise_floor_pct: INSTRUCTION_FLOOR_PCT,
            verdict: Verdict::judge(Some(ci), ratio, INSTRUCTION_FLOOR_PCT),
        };
    }
    let ratio = b_median_ns / a_median_ns;
    Row {
        kind: kind.into(),
        name,
        a_median_ns,
        b_median_ns,
        statistic: "median ns".into(),
        a_instructions: ins.0,
        b_instructions: ins.1,
        ratio,
        ratio_ci95: ci,
        noise_floor_pct: floor,
        verdict: Verdict::judge(ci, ratio, floor),
    }
}

/// Why two runs may differ for reasons other than the code.
pub(crate) fn caveats(a: &Results, b: &Results) -> Vec<String> {
    let (ha, hb) = (&a.run.host, &b.run.host);
    let mut caveats = Vec::new();
    let other_machine = if !ha.fingerprint.is_empty() && !hb.fingerprint.is_empty() {
        ha.fingerprint != hb.fingerprint
    } else {
        ha.hostname != hb.hostname
    };
    if other_machine
        || ha.cpu_model != hb.cpu_model
        || ha.arch != hb.arch
        || ha.microarchitecture != hb.microarchitecture
    {
        caveats.push(format!(
            "different hosts ({} vs {}): differences include the machine",
            ha.label(),
            hb.label()
        ));
    }
    // x86-64 against aarch64, or a real core against an emulated one: named apart, since neither
    // instructions nor times of one architecture are the other's.
    if ha.architecture() != hb.architecture() {
        caveats.push(format!(
            "different architectures ({} vs {}): instructions count each one's own instruction set{}",
            ha.architecture(),
            hb.architecture(),
            if ha.is_emulated() || hb.is_emulated() {
                "; an emulated run has instructions and no times"
            } else {
                ""
            }
        ));
    }
    if a.run.tool_commit != b.run.tool_commit
        || a.run.liboqs_version != b.run.liboqs_version
        || a.run.openssl_version != b.run.openssl_version
    {
        caveats.push(format!(
            "different tool or library versions ({} / liboqs {} / {} vs {} / liboqs {} / {})",
            a.run.tool_commit,
            a.run.liboqs_version,
            a.run.openssl_version,
            b.run.tool_commit,
            b.run.liboqs_version,
            b.run.openssl_version
        ));
    }
    caveats
}

pub fn compare(a: &Results, b: &Results, threshold_pct: f64) -> Comparison {
    let mut rows = Vec::new();
    for pa in &a.phases {
        let Some(pb) = b.phase(&pa.id()) else {
            continue;
        };
        let ci = ratio_interval(
            pa.stats.median_ns,
            pa.median_ci95_ns,
            pb.stats.median_ns,
            pb.median_ci95_ns,
        );
        let name = pa.name();
        let floor = noise_floor(a, b, &name, threshold_pct);
        let ir = |p: &crate::results::Phase| p.instructions.as_ref().and_then(|i| i.ir());
        let half = |p: &crate::results::Phase| {
            crate::compose::phase_instructions_half95(p).map(|(_, h)| h)
        };
        rows.push(row(
            "phase",
            name,
            pa.stats.median_ns,
            pb.stats.median_ns,
            ci,
            floor,
            (ir(pa), ir(pb), half(pa), half(pb)),
        ));
    }
    for sa in &a.suites {
        let Some(sb) = b.suite(&sa.name, &sa.stack) else {
            continue;
        };
        let ci = ratio_interval(
            sa.composed.median_ns,
            sa.composed.median_ci95_ns,
            sb.composed.median_ns,
            sb.composed.median_ci95_ns,
        );
        let name = format!("{} [{}]", sa.name, sa.stack);
        let floor = noise_floor(a, b, &name, threshold_pct);
        let half = |s: &crate::results::SuiteResult, r: &Results| {
            crate::compose::instructions_half95(&s.phases, &r.phases)
        };
        rows.push(row(
            "suite",
            name,
            sa.composed.median_ns,
            sb.composed.median_ns,
            ci,
            floor,
            (sa.instructions, sb.instructions, half(sa, a), half(sb, b)),
        ));
    }
    if let (Some(ha), Some(hb)) = (&a.handshakes, &b.handshakes) {
        for sa in &ha.scenarios {
            let auth = |x: &crate::results::Scenario| x.auth.as_ref().map(|a| a.name.clone());
            // The same scenario: protocol, group, stack, form and certificate chain (without the
            // chain, the ML-DSA-65 one was set against ECDSA's).
            let same = |x: &&crate::results::Scenario| {
                x.protocol == sa.protocol
                    && x.suite == sa.suite
                    && x.stack == sa.stack
                    && x.instrumented == sa.instrumented
                    && auth(x) == auth(sa)
            };
            let Some(sb) = hb.scenarios.iter().find(same) else {
                continue;
            };
            let ci = ratio_interval(
                sa.median_ns,
                sample_interval(&sa.sample_medians_ns),
                sb.median_ns,
                sample_interval(&sb.sample_medians_ns),
            );
            let name = format!(
                "{} {}{} on {}{}",
                sa.protocol,
                sa.suite,
                auth(sa).map_or(String::new(), |a| format!(" + {a}")),
                sa.stack.name(),
                if sa.instrumented { " (in situ)" } else { "" }
            );
            // Handshake medians drift between runs about as much as between a run's own samples
            // (back to back here: 755 and 885 us for the same scenario): a change smaller than
            // either run's sample-to-sample spread is not called.
            let floor = threshold_pct.max(sa.rsd_pct).max(sb.rsd_pct);
            rows.push(row(
                "handshake",
                name,
                sa.median_ns,
                sb.median_ns,
                ci,
                floor,
                (None, None, None, None),
            ));
        }
    }
    Comparison {
        a: a.label(),
        b: b.label(),
        caveats: caveats(a, b),
        rows,
    }
}

/// A real handshake scenario's 95% interval from its independent samples' medians: the t-interval
/// of their mean log, back on the original scale (its width is what `ratio_interval` uses).
pub(crate) fn sample_interval(sample_medians: &[f64]) -> Option<(f64, f64)> {
    if sample_medians.len() < 2 || sample_medians.iter().any(|&x| x <= 0.0) {
        return None;
    }
    let logs: Vec<f64> = sample_medians.iter().map(|x| x.ln()).collect();
    let (m, half) = stats::mean_half95(&logs)?;
    Some(((m - half).exp(), (m + half).exp()))
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
            writeln!(
                s,
                "A: {}{}B: {}\n",
                c.a,
                if md { "  \n" } else { "\n" },
                c.b
            )?;
            for cv in &c.caveats {
                writeln!(s, "{}{cv}\n", if md { "> Note: " } else { "note: " })?;
            }
            let head = [
                "",
                "name",
                "A median",
                "B median",
                "B / A of",
                "B / A",
                "95% interval",
                "noise floor",
                "verdict",
            ];
            let cells = |r: &Row| {
                vec![
                    r.kind.clone(),
                    r.name.clone(),
                    units::time(r.a_median_ns),
                    units::time(r.b_median_ns),
                    r.statistic.clone(),
                    format!("{:.3}", r.ratio),
                    ci_text(r.ratio_ci95),
                    format!("{:.1}%", r.noise_floor_pct),
                    r.verdict.text().to_string(),
                ]
            };
            if md {
                writeln!(
                    s,
                    "| {} |\n|---|---|---:|---:|---|---:|---|---:|---|",
                    head.join(" | ")
                )?;
                for r in &c.rows {
                    writeln!(s, "| {} |", cells(r).join(" | "))?;
                }
            } else {
                let rows: Vec<Vec<String>> = c.rows.iter().map(cells).collect();
                writeln!(s, "{}", units::text_table(&head, &rows, &[2, 3, 5, 7]))?;
            }
        }
    }
    Ok(s)
}

/// Spread of each delta vs baseline over runs, in percentage points (max - min): how well the
/// within-run comparison holds when the whole machine drifts between runs.
pub fn delta_spread(runs: &[Results]) -> Vec<(String, f64)> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    first
        .suites
        .iter()
        .filter(|s| s.delta_vs_baseline_pct.is_some())
        .filter_map(|s| {
            let d: Vec<f64> = runs
                .iter()
                .filter_map(|r| {
                    r.suites
                        .iter()
                        .find(|x| x.name == s.name && x.stack == s.stack)
                })
                .filter_map(|x| x.delta_vs_baseline_pct)
                .collect();
            (d.len() == runs.len()).then(|| {
                let (lo, hi) = d
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| {
                        (l.min(*x), h.max(*x))
                    });
                (format!("{} [{}]", s.name, s.stack), hi - lo)
            })
        })
        .collect()
}

/// The same spread for the calibrated composed medians (composed median x the run's calibration
/// factor), where every run has a calibration.
pub fn calibrated_spread(runs: &[Results]) -> Vec<(String, f64)> {
    let factors: Option<Vec<f64>> = runs
        .iter()
        .map(|r| r.run.calibration.as_ref().map(|c| c.factor))
        .collect();
    let Some(factors) = factors else {
        return Vec::new();
    };
    let scaled: Vec<Results> = runs
        .iter()
        .zip(&factors)
        .map(|(r, f)| {
            let mut r = r.clone();
            for s in &mut r.suites {
                s.composed.median_ns *= f;
            }
            r
        })
        .collect();
    spread(&scaled)
}

/// How often one run's intervals of a phase median held another run's median.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Coverage {
    /// (run, other run, phase) triples with an interval in the first and the phase in both.
    pub(crate) pairs: usize,
    /// The other run's median inside the first run's 95% interval (a calibrated interval: about
    /// 83%, see `stats::next_run_half_width_pct`).
    pub(crate) in_interval: usize,
    /// Inside the first run's next-run interval (about 95% when the intervals are honest).
    pub(crate) in_next_run: usize,
}

impl Coverage {
    pub(crate) fn pct(n: usize, of: usize) -> f64 {
        n as f64 / of.max(1) as f64 * 100.0
    }

    /// "coverage, consecutive runs: of 34 phase medians, 19 (55.9%) inside ...", `None` where
    /// nothing was set beside anything.
    pub fn sentence(&self, pairs_of: &str, of_what: &str) -> Option<String> {
        (self.pairs > 0).then(|| {
            format!(
                "coverage, {pairs_of}: of {} {of_what}, {} ({:.1}%) inside the other run's 95% interval, {} ({:.1}%) inside its next-run interval",
                self.pairs,
                self.in_interval,
                Self::pct(self.in_interval, self.pairs),
                self.in_next_run,
                Self::pct(self.in_next_run, self.pairs)
            )
        })
    }
}

/// A phase's next-run half-width, percent: its record's, or for a file before them sqrt 2 times
/// its interval's (no drift).
pub(crate) fn next_run_pct(p: &crate::results::Phase) -> f64 {
    p.precision
        .as_ref()
        .and_then(|pr| pr.next_run_pct)
        .or_else(|| {
            let hw = stats::half_width_pct(p.median_ci95_ns?, p.stats.median_ns)?;
            Some(stats::next_run_half_width_pct(hw, 0.0))
        })
        .unwrap_or(0.0)
}

/// The check from outside that an interval describes what a user sees on the next run: over
/// consecutive pairs of `runs` (`all_pairs`: every ordered pair), how often one run's interval of
/// a phase median, and its next-run interval, held the other run's median.
pub fn coverage(runs: &[Results], all_pairs: bool) -> Coverage {
    let mut c = Coverage::default();
    for (i, a) in runs.iter().enumerate() {
        for (j, b) in runs.iter().enumerate() {
            if i == j || (!all_pairs && j != i + 1) {
                continue;
            }
            for p in &a.phases {
                let (Some(ci), Some(q)) = (p.median_ci95_ns, b.phase(&p.id())) else {
                    continue;
                };
                let m = q.stats.median_ns;
                c.pairs += 1;
                c.in_interval += usize::from(ci.0 <= m && m <= ci.1);
                c.in_next_run += usize::from(
                    (m - p.stats.median_ns).abs() <= next_run_pct(p) / 100.0 * p.stats.median_ns,
                );
            }
        }
    }
    c
}

/// The same check for the real handshakes' paired differences (`Scenario::measured_delta_ns` with
/// its interval, files of the paired design): how often one run's interval of a scenario's
/// difference, and its next-run interval (sqrt 2 times as wide: the next run has an error of its
/// own; the host's common mode cancels in a difference measured paired), held the other run's. In
/// the relative form a difference in microseconds is a share times the baseline's median, which
/// moves with the host's speed from one run to the next beyond the interval; runs of different
/// forms are compared all the same.
pub fn delta_coverage(runs: &[Results], all_pairs: bool) -> Coverage {
    let mut c = Coverage::default();
    for (i, a) in runs.iter().enumerate() {
        for (j, b) in runs.iter().enumerate() {
            if i == j || (!all_pairs && j != i + 1) {
                continue;
            }
            let (Some(ha), Some(hb)) = (&a.handshakes, &b.handshakes) else {
                continue;
            };
            for s in &ha.scenarios {
                let (Some(d), Some((lo, hi))) = (s.measured_delta_ns, s.measured_delta_ci95_ns)
                else {
                    continue;
                };
                let Some(other) = hb
                    .scenarios
                    .iter()
                    .filter(|x| x.stack == s.stack && x.instrumented == s.instrumented)
                    .find(|x| x.suite == s.suite && x.auth_name() == s.auth_name())
                    .and_then(|x| x.measured_delta_ns)
                else {
                    continue;
                };
                c.pairs += 1;
                c.in_interval += usize::from(lo <= other && other <= hi);
                let next = std::f64::consts::SQRT_2 * (hi - lo) / 2.0;
                c.in_next_run += usize::from((other - d).abs() <= next);
            }
        }
    }
    c
}

/// `delta_coverage` in the relative form: each paired difference as its median share of the
/// baseline (`PairedDelta::share`: the stored difference over the baseline's median in the shared rounds,
/// or recomputed from the stored connections where none is stored), whose interval the
/// host's speed cancels in, against the other run's share. Scenarios of a file without the
/// relative form are left out.
pub fn share_coverage(runs: &[Results], all_pairs: bool) -> Coverage {
    let shares = |r: &Results| -> Vec<(String, (f64, f64, f64))> {
        let Some(h) = &r.handshakes else {
            return Vec::new();
        };
        let pairing = crate::figures::handshake::DeltaPairing::of_run(r);
        h.scenarios
            .iter()
            .filter_map(|s| {
                let a = s.against.as_ref()?;
                let b = h
                    .scenarios
                    .iter()
                    .find(|x| !std::ptr::eq(*x, s) && x.is(a, &s.stack, s.instrumented))?;
                let d = crate::figures::answer::paired_scenarios(s, b, pairing)?;
                Some((s.name(), d.share?))
            })
            .collect()
    };
    let all: Vec<_> = runs.iter().map(shares).collect();
    let mut c = Coverage::default();
    for (i, a) in all.iter().enumerate() {
        for (j, b) in all.iter().enumerate() {
            if i == j || (!all_pairs && j != i + 1) {
                continue;
            }
            for (name, (m, lo, hi)) in a {
                let Some((_, (other, _, _))) = b.iter().find(|(n, _)| n == name) else {
                    continue;
                };
                c.pairs += 1;
                c.in_interval += usize::from(*lo <= *other && *other <= *hi);
                let next = std::f64::consts::SQRT_2 * (hi - lo) / 2.0;
                c.in_next_run += usize::from((other - m).abs() <= next);
            }
        }
    }
    c
}

/// Spread of each composed median over runs of the same measurement: (max - min) / median.
pub fn spread(runs: &[Results]) -> Vec<(String, f64)> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    first
        .suites
        .iter()
        .filter_map(|s| {
            let m: Vec<f64> = runs
                .iter()
                .filter_map(|r| {
                    r.suites
                        .iter()
                        .find(|x| x.name == s.name && x.stack == s.stack)
                })
                .map(|x| x.composed.median_ns)
                .collect();
            (m.len() == runs.len()).then(|| {
                let (lo, hi) = m
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| {
                        (l.min(*x), h.max(*x))
                    });
                (
                    format!("{} [{}]", s.name, s.stack),
                    (hi - lo) / stats::median(&m) * 100.0,
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A committed timed run (an emulated one has no intervals).
    /// The newest committed run (by name: the UTC time) with phase intervals and paired handshake
    /// differences; by name, not the folder's order, which differs from one checkout to another.
    fn timed_committed_run() -> Results {
        crate::results::committed(false)
            .iter()
            .rev()
            .filter_map(|p| crate::results::read(p).ok())
            .find(|r| {
                r.phases
                    .iter()
                    .filter(|p| p.median_ci95_ns.is_some())
                    .count()
                    > 1
                    && r.handshakes.as_ref().is_some_and(|h| {
                        h.scenarios
                            .iter()
                            .filter(|s| s.measured_delta_ns.is_some())
                            .count()
                            >= 3
                    })
            })
            .unwrap()
    }

    #[test]
    fn runs_with_process_level_intervals_compare_against_their_target() {
        let mut a = timed_committed_run();
        a.process_samples = None;
        a.run.iterations_policy.target_pct = None;
        a.run.iterations_policy.processes = None;
        let mut b = a.clone();
        // Older files: the given threshold.
        assert_eq!(noise_floor(&a, &b, "x", 5.0), 5.0);
        a.run.iterations_policy.target_pct = Some(1.0);
        a.run.iterations_policy.processes = Some(3);
        assert_eq!(noise_floor(&a, &b, "x", 5.0), 5.0);
        b.run.iterations_policy.target_pct = Some(2.0);
        b.run.iterations_policy.processes = Some(3);
        assert_eq!(noise_floor(&a, &b, "x", 5.0), 2.0);
        // One process is an interval of that process only: the threshold again.
        b.run.iterations_policy.processes = Some(1);
        assert_eq!(noise_floor(&a, &b, "x", 5.0), 5.0);
    }

    #[test]
    fn delta_coverage_counts_the_next_differences_inside_the_intervals() {
        // The committed run's scenarios with a difference, each given one of 100 +- 10 ns; the
        // next run's: 105 (inside), 113 (outside, inside sqrt 2 x 10), 120 (outside both).
        let mut a = timed_committed_run();
        let h = a.handshakes.as_mut().unwrap();
        h.scenarios.retain(|s| s.measured_delta_ns.is_some());
        for s in &mut h.scenarios {
            s.measured_delta_ns = Some(100.0);
            s.measured_delta_ci95_ns = Some((90.0, 110.0));
        }
        let n = h.scenarios.len();
        assert!(n >= 3);
        let mut b = a.clone();
        for (i, s) in b
            .handshakes
            .as_mut()
            .unwrap()
            .scenarios
            .iter_mut()
            .enumerate()
        {
            s.measured_delta_ns = Some(match i {
                0 => 105.0,
                1 => 113.0,
                _ => 120.0,
            });
        }
        let c = delta_coverage(&[a.clone(), b.clone()], false);
        assert_eq!((c.pairs, c.in_interval, c.in_next_run), (n, 1, 2));
        // A file before the paired design has no intervals to cover with.
        let mut old = a;
        for s in &mut old.handshakes.as_mut().unwrap().scenarios {
            s.measured_delta_ci95_ns = None;
        }
        assert_eq!(delta_coverage(&[old, b], false).pairs, 0);
    }

    #[test]
    fn shares_of_the_baseline_cancel_a_host_that_slowed_between_runs() {
        // A committed run of the relative form against itself, and against a copy whose every
        // connection took 20% longer (a slower host): the shares hold in both, while the stored
        // differences in nanoseconds would have moved by 20%.
        let a = crate::results::committed(false)
            .iter()
            .filter_map(|p| crate::results::read(p).ok())
            .find(|r| share_coverage(&[r.clone(), r.clone()], false).pairs >= 10)
            .expect("a committed run of the relative form");
        let same = share_coverage(&[a.clone(), a.clone()], false);
        assert_eq!(same.in_interval, same.pairs);
        let mut slow = a.clone();
        for s in &mut slow.handshakes.as_mut().unwrap().scenarios {
            for t in &mut s.totals_ns {
                *t = *t * 6 / 5;
            }
            // The stored differences no longer hold for the changed connections: without them the
            // figures come from the connections.
            s.measured_delta_ns = None;
        }
        let c = share_coverage(&[a.clone(), slow.clone()], false);
        assert_eq!((c.pairs, c.in_interval), (same.pairs, same.pairs));
        // Each connection moved by an integer rounding at most: the shares within 1e-6.
        let pairing = crate::figures::handshake::DeltaPairing::of_run(&a);
        let s = &a.handshakes.as_ref().unwrap().scenarios;
        let t = &slow.handshakes.as_ref().unwrap().scenarios;
        let k = s
            .iter()
            .position(|x| x.against.is_some() && x.measured_delta_ns.is_some());
        let k = k.unwrap();
        let base = |v: &[crate::results::Scenario]| {
            let g = v[k].against.clone().unwrap();
            v.iter()
                .position(|x| x.is(&g, &v[k].stack, v[k].instrumented))
                .unwrap()
        };
        let (da, db) = (
            crate::figures::answer::paired_scenarios(&s[k], &s[base(s)], pairing).unwrap(),
            crate::figures::answer::paired_scenarios(&t[k], &t[base(t)], pairing).unwrap(),
        );
        assert!((da.share.unwrap().0 - db.share.unwrap().0).abs() < 1e-6);
        assert!((db.median_ns / da.median_ns - 1.2).abs() < 1e-3);
    }

    #[test]
    fn coverage_counts_the_next_medians_inside_the_intervals() {
        // Every phase with an interval gets one of 1% either side and no precision record, so
        // its next-run half-width is sqrt 2 % (no drift).
        let mut a = timed_committed_run();
        a.phases.retain(|p| p.median_ci95_ns.is_some());
        for p in &mut a.phases {
            let m = p.stats.median_ns;
            p.median_ci95_ns = Some((0.99 * m, 1.01 * m));
            p.precision = None;
        }
        let n = a.phases.len();
        assert!(n > 2);
        assert!((next_run_pct(&a.phases[0]) - 2f64.sqrt()).abs() < 1e-9);
        // The next run: the first phase lands inside its interval, the second 1.2% below (outside
        // the interval, inside the next-run one), every other one 1.5% below (outside both).
        let mut b = a.clone();
        for (i, q) in b.phases.iter_mut().enumerate() {
            q.stats.median_ns *= match i {
                0 => 1.005,
                1 => 0.988,
                _ => 0.985,
            };
        }
        let want = |pairs, in_interval, in_next_run| Coverage {
            pairs,
            in_interval,
            in_next_run,
        };
        assert_eq!(coverage(&[a.clone(), b.clone()], false), want(n, 1, 2));
        // Three runs make two consecutive pairs; a run against itself is covered everywhere.
        let three = [a.clone(), a.clone(), b.clone()];
        assert_eq!(coverage(&three, false), want(2 * n, n + 1, n + 2));
        // Every ordered pair adds b -> a: b carries a's intervals (around a's medians).
        let ab = coverage(&[a.clone(), b.clone()], true);
        let ba = coverage(&[b, a], false);
        assert_eq!(ab.pairs, 2 * n);
        assert_eq!(
            (ab.in_interval, ab.in_next_run),
            (1 + ba.in_interval, 2 + ba.in_next_run)
        );
    }

    #[test]
    fn a_sample_interval_is_the_t_interval_of_the_logs() {
        // ln 100 and ln 400 average to ln 200; sd of the logs = ln 4 / sqrt 2; t(1) = 12.706.
        let (lo, hi) = sample_interval(&[100.0, 400.0]).unwrap();
        let half = 12.706 * (4f64.ln() / 2f64.sqrt()) / 2f64.sqrt();
        assert!((lo - 200.0 * (-half).exp()).abs() < 1e-6 * lo, "{lo}");
        assert!((hi - 200.0 * half.exp()).abs() < 1e-6 * hi, "{hi}");
        assert!(sample_interval(&[100.0]).is_none());
        assert!(sample_interval(&[100.0, 0.0]).is_none());
    }

    #[test]
    fn verdicts_follow_the_interval_and_the_floor() {
        assert_eq!(
            Verdict::judge(Some((0.80, 0.95)), 0.88, 2.0),
            Verdict::Faster
        );
        assert_eq!(
            Verdict::judge(Some((1.02, 1.10)), 1.06, 2.0),
            Verdict::Slower
        );
        assert_eq!(
            Verdict::judge(Some((0.97, 1.03)), 1.0, 2.0),
            Verdict::NoChange
        );
        // A tight interval around a 1% change is still within the between-run floor.
        assert_eq!(
            Verdict::judge(Some((1.008, 1.012)), 1.01, 2.0),
            Verdict::NoChange
        );
        assert_eq!(
            Verdict::judge(Some((1.008, 1.012)), 1.01, 0.5),
            Verdict::Slower
        );
        assert_eq!(Verdict::judge(None, 2.0, 2.0), Verdict::NoChange);
    }

    #[test]
    fn instruction_rows_use_the_per_call_spread() {
        // Exact counts on both sides: a 1% change beyond the 0.5% floor is real.
        let r = row(
            "phase",
            "x".into(),
            1.0,
            1.0,
            None,
            5.0,
            (Some(1000.0), Some(1010.0), Some(0.0), Some(0.0)),
        );
        assert_eq!(
            (r.statistic.as_str(), r.ratio_ci95, r.verdict),
            ("instructions", Some((1.01, 1.01)), Verdict::Slower)
        );
        // A rejection loop: means 1,000 and 1,100, each +-100 (95%): ratio 1.1 with an interval that
        // holds 1, so no change is called.
        let r = row(
            "phase",
            "x".into(),
            1.0,
            1.0,
            None,
            5.0,
            (Some(1000.0), Some(1100.0), Some(100.0), Some(100.0)),
        );
        let (lo, hi) = r.ratio_ci95.unwrap();
        assert!(
            lo < 1.0 && hi > 1.1 && (r.ratio - 1.1).abs() < 1e-12,
            "{lo} {hi}"
        );
        assert_eq!(r.verdict, Verdict::NoChange);
        // Without per-call counts (older files) the counts are taken as exact.
        let r = row(
            "phase",
            "x".into(),
            1.0,
            1.0,
            None,
            5.0,
            (Some(1000.0), Some(1100.0), None, Some(100.0)),
        );
        assert_eq!(
            (r.ratio_ci95, r.verdict),
            (Some((1.1, 1.1)), Verdict::Slower)
        );
    }

    #[test]
    fn ratio_interval_combines_the_two_intervals() {
        // Two exact figures: the interval collapses on the ratio.
        assert_eq!(
            ratio_interval(10.0, Some((10.0, 10.0)), 20.0, Some((20.0, 20.0))),
            Some((2.0, 2.0))
        );
        // A has ln(high/low) = 2 x 1.96 x 0.1 (se 0.1), B is exact: the ratio 2 spreads by e^(+-0.196).
        let w = (2.0f64 * 1.96 * 0.1).exp();
        let (lo, hi) =
            ratio_interval(10.0, Some((10.0, 10.0 * w)), 20.0, Some((20.0, 20.0))).unwrap();
        assert!(
            (lo - 2.0 * (-0.196f64).exp()).abs() < 1e-9 && (hi - 2.0 * 0.196f64.exp()).abs() < 1e-9,
            "{lo} {hi}"
        );
        // Two equal se: sqrt(2) wider. No interval stored: none.
        let (lo2, _) =
            ratio_interval(10.0, Some((10.0, 10.0 * w)), 20.0, Some((20.0, 20.0 * w))).unwrap();
        assert!((lo2 - 2.0 * (-0.196 * 2f64.sqrt()).exp()).abs() < 1e-9);
        assert_eq!(ratio_interval(1.0, None, 1.0, Some((1.0, 1.0))), None);
    }

    #[test]
    fn every_committed_run_compared_with_itself_changes_nothing() {
        // Every handshake scenario pairs with itself (protocol, group, stack, form and chain),
        // every phase and suite too: no row may call a change.
        let mut files = 0;
        for p in crate::results::committed(true) {
            let Ok(r) = crate::results::read(&p) else {
                continue;
            };
            files += 1;
            let c = compare(&r, &r, 5.0);
            let changed: Vec<&Row> = c
                .rows
                .iter()
                .filter(|x| x.verdict != Verdict::NoChange)
                .collect();
            assert!(
                changed.is_empty(),
                "{}: {:?}",
                p.display(),
                changed.iter().map(|x| &x.name).collect::<Vec<_>>()
            );
            let handshakes = r.handshakes.as_ref().map_or(0, |h| h.scenarios.len());
            assert_eq!(
                c.rows.iter().filter(|x| x.kind == "handshake").count(),
                handshakes,
                "{}",
                p.display()
            );
        }
        assert!(files > 1);
    }
}
