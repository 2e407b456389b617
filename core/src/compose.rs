//! Suite figures from phase figures, and the identity that ties them together.
//!
//! Composed mean = sum over phases of count x phase mean. That is the identity `check` enforces.
//! Composed median and percentiles cannot be summed, so they come from resampled handshakes: each
//! draw picks, for every occurrence of every phase (count times), one of that phase's recorded
//! samples uniformly at random, and adds them up. With a fixed seed anyone can recompute them from
//! the raw samples in the JSON.

use crate::results::{Composed, Phase, SuitePhase, SuiteResult};
use crate::stats::{self, SplitMix64};
use anyhow::{anyhow, Result};

pub const RESAMPLES: usize = 10_000;
pub const SEED: u64 = 0x7071_7072_6f66; // "pqprof"
/// The identity's tolerance, percent (0.002%).
pub const TOLERANCE_PCT: f64 = 0.002;

/// Composes a suite from its phases (looked up in `phases`).
pub fn compose(parts: &[SuitePhase], phases: &[Phase]) -> Result<Composed> {
    let found: Vec<(&Phase, u32)> = parts
        .iter()
        .map(|p| {
            phases
                .iter()
                .find(|q| q.backend == p.backend && q.algorithm == p.algorithm && q.operation == p.operation)
                .map(|q| (q, p.count))
                .ok_or_else(|| anyhow!("no measured phase {} {} {}", p.backend, p.algorithm, p.operation))
        })
        .collect::<Result<_>>()?;
    let mean_ns = found.iter().map(|(q, c)| f64::from(*c) * q.stats.mean_ns).sum();
    let draws = resample(&found, RESAMPLES, SEED);
    let sorted = stats::sorted(&draws);
    Ok(Composed {
        mean_ns,
        median_ns: stats::percentile_sorted(&sorted, 50.0),
        p95_ns: stats::percentile_sorted(&sorted, 95.0),
        p99_ns: stats::percentile_sorted(&sorted, 99.0),
        resamples: RESAMPLES,
        seed: SEED,
        median_ci95_ns: None,
    })
}

fn resample(parts: &[(&Phase, u32)], n: usize, seed: u64) -> Vec<f64> {
    let mut rng = SplitMix64(seed);
    (0..n)
        .map(|_| {
            let mut sum = 0u64;
            for (phase, count) in parts {
                for _ in 0..*count {
                    let s = &phase.samples_ns;
                    if !s.is_empty() {
                        sum += s[rng.below(s.len())];
                    }
                }
            }
            sum as f64
        })
        .collect()
}

/// Resamples and draws behind the composed intervals (documented on the methodology page).
pub const CI_RESAMPLES: usize = 200;
pub const CI_DRAWS: usize = 2000;

/// Per suite, the composed median of every bootstrap world: in world `b` every phase is
/// resampled with replacement once (shared by all suites, so a suite and its baseline move
/// together), then `CI_DRAWS` handshakes are drawn from the resampled phases.
pub fn bootstrap_medians(suites: &[SuiteResult], phases: &[Phase]) -> Vec<Vec<f64>> {
    let index: Vec<Vec<(usize, u32)>> = suites
        .iter()
        .map(|s| {
            s.phases
                .iter()
                .filter_map(|sp| {
                    phases
                        .iter()
                        .position(|q| q.backend == sp.backend && q.algorithm == sp.algorithm && q.operation == sp.operation)
                        .map(|i| (i, sp.count))
                })
                .collect()
        })
        .collect();
    let mut out = vec![Vec::with_capacity(CI_RESAMPLES); suites.len()];
    let mut world: Vec<Vec<u64>> = phases.iter().map(|p| vec![0; p.samples_ns.len()]).collect();
    let mut draws = vec![0.0; CI_DRAWS];
    for b in 0..CI_RESAMPLES {
        let mut rng = SplitMix64(stats::BOOTSTRAP_SEED ^ (b as u64).wrapping_mul(0x9E37_79B9));
        for (w, p) in world.iter_mut().zip(phases) {
            for x in w.iter_mut() {
                *x = p.samples_ns[rng.below(p.samples_ns.len())];
            }
        }
        for (si, parts) in index.iter().enumerate() {
            for d in draws.iter_mut() {
                let mut sum = 0u64;
                for &(pi, count) in parts {
                    let w = &world[pi];
                    for _ in 0..count {
                        if !w.is_empty() {
                            sum += w[rng.below(w.len())];
                        }
                    }
                }
                *d = sum as f64;
            }
            out[si].push(stats::median_in_place(&mut draws));
        }
    }
    out
}

/// 95% intervals per suite: (composed median, delta vs baseline in the same stack).
pub fn intervals(suites: &[SuiteResult], phases: &[Phase]) -> Vec<(Option<(f64, f64)>, Option<(f64, f64)>)> {
    let worlds = bootstrap_medians(suites, phases);
    suites
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let base = s
                .baseline
                .as_ref()
                .filter(|b| **b != s.name)
                .and_then(|b| suites.iter().position(|x| &x.name == b && x.stack == s.stack));
            let delta = base.and_then(|j| {
                let d: Vec<f64> = worlds[i].iter().zip(&worlds[j]).map(|(a, b)| delta_pct(*a, *b)).collect();
                stats::interval95(&d)
            });
            (stats::interval95(&worlds[i]), delta)
        })
        .collect()
}

/// Percent difference of `value` against `baseline`.
pub fn delta_pct(value: f64, baseline: f64) -> f64 {
    (value / baseline - 1.0) * 100.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithm::Operation;

    fn phase(op: Operation, samples: &[u64]) -> Phase {
        let xs: Vec<f64> = samples.iter().map(|&x| x as f64).collect();
        let s = stats::summarize(&xs).unwrap();
        Phase {
            backend: "b".into(),
            algorithm: "X25519".into(),
            operation: op,
            ops_per_sec: stats::ops_per_sec(s.mean_ns),
            stats: s,
            steal_pct: None,
            iterations_reason: crate::results::Reason::Default,
            warmup: 0,
            verified: 1,
            includes: String::new(),
            samples_ns: samples.to_vec(),
            cycles: None,
            median_ci95_ns: None,
            rsd_pct: 0.0,
            outliers: Default::default(),
        }
    }

    #[test]
    fn composed_mean_is_count_times_phase_means() {
        let phases = [phase(Operation::DhKeygen, &[10, 20, 30]), phase(Operation::DhDerive, &[100, 100, 100])];
        let parts = [
            SuitePhase { backend: "b".into(), algorithm: "X25519".into(), operation: Operation::DhKeygen, count: 2 },
            SuitePhase { backend: "b".into(), algorithm: "X25519".into(), operation: Operation::DhDerive, count: 2 },
        ];
        let c = compose(&parts, &phases).unwrap();
        assert_eq!(c.mean_ns, 2.0 * 20.0 + 2.0 * 100.0);
        // Every draw is two keygen samples (20..60) plus 200: the percentiles lie in 220..=260.
        assert!((220.0..=260.0).contains(&c.median_ns) && c.p99_ns <= 260.0 && c.p95_ns >= c.median_ns);
        // Deterministic: the same seed gives the same figures.
        assert_eq!(compose(&parts, &phases).unwrap().median_ns, c.median_ns);
    }

    #[test]
    fn a_missing_phase_is_an_error() {
        let parts = [SuitePhase { backend: "x".into(), algorithm: "X25519".into(), operation: Operation::DhKeygen, count: 1 }];
        assert!(compose(&parts, &[]).is_err());
    }

    #[test]
    fn delta() {
        assert!((delta_pct(133.0, 100.0) - 33.0).abs() < 1e-9);
        assert!((delta_pct(50.0, 100.0) + 50.0).abs() < 1e-9);
    }
}
