//! The host's drift between the processes of one run: how much faster or slower each process ran
//! every phase it measured, against the run. On a shared host the whole machine speeds up and
//! slows down, for every phase at once, from one minute to the next; a run's processes see
//! some of that, and the next run sees its own share, which this run cannot average. The spread of
//! the processes' speeds is the run's measure of it (`stats::next_run_half_width_pct` adds it).

use crate::results::Phase;
use crate::stats;

/// The fewest phases a process must have measured for its speed to count.
pub(crate) const MIN_PHASES: usize = 5;

/// Each process's speed against the run and their spread.
#[derive(Debug, Clone, PartialEq)]
pub struct HostDrift {
    /// Per process (by its index in the run), the median over the phases it measured of its
    /// median against the median of that phase's process medians; `None` for a process with
    /// fewer than `MIN_PHASES` phases measured in two or more processes.
    pub factors: Vec<Option<f64>>,
    /// The relative standard deviation of the factors, percent.
    pub rsd_pct: f64,
}

/// The drift of the run whose pooled phases are `phases` (each with its `processes` and
/// `process_ids`); `None` without two processes that count.
pub fn host_drift(phases: &[Phase]) -> Option<HostDrift> {
    let mut ratios: Vec<Vec<f64>> = Vec::new();
    for p in phases {
        if p.processes.len() < 2 || p.process_ids.len() != p.processes.len() {
            continue;
        }
        let xs: Vec<f64> = p.samples_ns.iter().map(|&x| x as f64).collect();
        let Some(groups) = stats::groups(&xs, &p.processes) else {
            continue;
        };
        let medians: Vec<f64> = groups.iter().map(|g| stats::median(g)).collect();
        let centre = stats::median(&medians);
        if centre <= 0.0 {
            continue;
        }
        for (&id, m) in p.process_ids.iter().zip(&medians) {
            if ratios.len() <= id {
                ratios.resize(id + 1, Vec::new());
            }
            ratios[id].push(m / centre);
        }
    }
    let factors: Vec<Option<f64>> = ratios
        .iter()
        .map(|r| (r.len() >= MIN_PHASES).then(|| stats::median(r)))
        .collect();
    let counted: Vec<f64> = factors.iter().flatten().copied().collect();
    (counted.len() >= 2).then(|| HostDrift {
        rsd_pct: stats::rsd_pct(&counted),
        factors,
    })
}

/// The 95% half-width of the host's common mode over a run, percent: how far the run's mean speed
/// may sit from the host's, from its processes' factors (the t-interval of their mean: t with
/// n - 1 degrees of freedom, their standard deviation over the square root of n). An absolute
/// figure (a phase's time) carries it; a relative one (a difference, a ratio of two phases
/// measured in the same processes) does not. `None` with fewer than two factors.
pub fn host_half95_pct(factors: &[Option<f64>]) -> Option<f64> {
    let f: Vec<f64> = factors.iter().flatten().copied().collect();
    if f.len() < 2 {
        return None;
    }
    let m = stats::mean(&f);
    Some(stats::t95(f.len() - 1) * stats::stdev(&f) / (f.len() as f64).sqrt() / m * 100.0)
}

/// A phase's median interval with the host's common mode taken out: the samples of each process
/// divided by that process's factor (`HostDrift::factors`; a process without one keeps 1), then
/// the phase's own interval method (`stats::grouped_median_ci95`), scaled back to the phase's
/// median. What is left is the phase's own spread between processes, which does not cancel in a
/// difference; the common mode does, and is stated once for the run (`host_half95_pct`). `None`
/// for a phase of one process, or where its processes do not make its samples.
pub fn own_interval(p: &Phase, factors: &[Option<f64>]) -> Option<(f64, f64)> {
    if p.processes.len() < 2 || p.process_ids.len() != p.processes.len() {
        return None;
    }
    let mut xs = Vec::with_capacity(p.samples_ns.len());
    let groups = stats::groups(&p.samples_ns, &p.processes)?;
    for (g, &id) in groups.iter().zip(&p.process_ids) {
        let f = factors.get(id).copied().flatten().unwrap_or(1.0);
        xs.extend(g.iter().map(|&x| x as f64 / f));
    }
    let adjusted = stats::groups(&xs, &p.processes)?;
    let m = stats::median(&xs);
    let (lo, hi) = stats::grouped_median_ci95(&adjusted, m)?;
    let scale = p.stats.median_ns / m;
    Some((lo * scale, hi * scale))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Phase;

    /// A phase measured in processes `ids`, each giving one sample of `base` times its factor.
    fn phase(base: f64, ids: &[usize], factors: &[f64]) -> Phase {
        let mut p = crate::figures::measured_phase(
            crate::results::PhaseId {
                backend: "b".into(),
                algorithm: format!("a{base}"),
                operation: crate::results::Operation::KemKeygen,
                form: crate::results::Form::Primitive,
            },
            ids.iter()
                .map(|&i| (base * factors[i]).round() as u64)
                .collect(),
            crate::figures::Measured::bare(),
        );
        p.processes = vec![1; ids.len()];
        p.process_ids = ids.to_vec();
        p
    }

    #[test]
    fn each_process_is_as_fast_as_the_phases_it_measured_say() {
        // Processes 0, 1, 2 at 1.00, 1.02, 0.98 of the run for every phase; process 3 measured
        // only four phases (below MIN_PHASES), so it does not count.
        let f = [1.00, 1.02, 0.98, 1.10];
        let mut phases: Vec<Phase> = (1..=6)
            .map(|i| phase(10_000.0 * i as f64, &[0, 1, 2], &f))
            .collect();
        for p in phases.iter_mut().take(4) {
            *p = phase(p.stats.median_ns, &[0, 1, 2, 3], &f);
        }
        let d = host_drift(&phases).unwrap();
        // Each phase's median of process medians is its 1.00 process (1.02 for the four with
        // the 1.10 process: median of 0.98, 1.00, 1.02, 1.10 is 1.01).
        assert_eq!(d.factors.len(), 4);
        assert_eq!(d.factors[3], None);
        let f0 = d.factors[0].unwrap();
        // Process 0: four phases at 1.00/1.01, two at 1.00/1.00: median of the six ratios.
        assert!((f0 - 1.0 / 1.01).abs() < 1e-3, "{f0}");
        // Relative spread of about 2% (1.00, 1.02, 0.98 scaled alike).
        assert!((d.rsd_pct - 2.0).abs() < 0.1, "{}", d.rsd_pct);
        // One process: no drift.
        let one: Vec<Phase> = (1..=6).map(|i| phase(1e4 * i as f64, &[0], &f)).collect();
        assert_eq!(host_drift(&one), None);
    }

    #[test]
    fn the_common_mode_comes_out_of_a_phase_and_is_stated_once() {
        // Three processes at 0.9, 1.0 and 1.1 of the host's speed; the phase itself has no spread
        // of its own: every sample of process i is 1,000 x its factor.
        let f = [0.9, 1.0, 1.1];
        let mut p = phase(1000.0, &[0, 1, 2], &f);
        crate::figures::set_sample_figures(&mut p);
        let with = p.median_ci95_ns.unwrap();
        assert!(with.1 - with.0 > 100.0, "{with:?}");
        let factors: Vec<Option<f64>> = f.iter().map(|&x| Some(x)).collect();
        // Taken out, nothing is left: the interval closes on the median.
        let (lo, hi) = own_interval(&p, &factors).unwrap();
        assert!(
            (lo - 1000.0).abs() < 1e-9 && (hi - 1000.0).abs() < 1e-9,
            "{lo} {hi}"
        );
        // Without factors the phase keeps its interval.
        assert_eq!(own_interval(&p, &[]), p.median_ci95_ns);
        // The common mode: mean 1.0, sd 0.1, t(2) = 4.303, over sqrt 3.
        let h = host_half95_pct(&factors).unwrap();
        assert!((h - 4.303 * 0.1 / 3f64.sqrt() * 100.0).abs() < 1e-9, "{h}");
        assert_eq!(host_half95_pct(&[Some(1.0), None]), None);
        // One process: no interval of its own.
        let one = phase(1000.0, &[0], &f);
        assert_eq!(own_interval(&one, &factors), None);
    }
}
