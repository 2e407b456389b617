//! Architectures side by side: per phase, instructions per call on each architecture (x86-64 under
//! callgrind, aarch64 under qemu's plugin or callgrind on a real host), and the wall time where a
//! run on real hardware has one; the ratio of each column's instructions to the first x86-64
//! column's. Computed once here for the site and the text table; an emulated run is a column of
//! counts alone.

use crate::results::{Form, Phase, PhaseId, Reason, Results};

/// A phase of an emulated run: built and verified, never timed (no samples, no statistics), its
/// instructions added by the counter.
pub fn counted_phase(id: PhaseId, verified: usize, includes: String) -> Phase {
    Phase {
        backend: id.backend,
        algorithm: id.algorithm,
        operation: id.operation,
        form: id.form,
        stats: Default::default(),
        ops_per_sec: 0.0,
        steal_pct: None,
        iterations_reason: Reason::Default,
        warmup: 0,
        verified,
        includes,
        samples_ns: Vec::new(),
        cycles: None,
        median_ci95_ns: None,
        median_ci95_own_ns: None,
        processes: Vec::new(),
        process_ids: Vec::new(),
        precision: None,
        rsd_pct: 0.0,
        outliers: Default::default(),
        batch: 1,
        run_delay_pct: None,
        timed_ms: None,
        instructions: None,
        situ: None,
    }
}

/// One column: one run, of one architecture.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Column {
    /// Index into the runs given.
    pub(crate) run: usize,
    /// "x86_64", "aarch64 (emulated: neoverse-n1)" (`Host::architecture`).
    pub(crate) architecture: String,
    pub(crate) emulated: bool,
    /// The counter ("callgrind", "qemu plugin"), when the run counted instructions.
    pub(crate) counter: Option<&'static str>,
    /// Whether the run's phases were timed: a run on real hardware.
    pub(crate) timed: bool,
}

/// One phase across the columns.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    pub(crate) phase: PhaseId,
    /// Instructions per call, one per column.
    pub(crate) instructions: Vec<Option<f64>>,
    /// Median nanoseconds per call, one per column; always `None` for an emulated one.
    pub(crate) median_ns: Vec<Option<f64>>,
    /// Each column's instructions / the reference column's.
    pub(crate) ratio: Vec<Option<f64>>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SideBySide {
    pub(crate) columns: Vec<Column>,
    /// The column the ratios are to: the first x86-64 one that counted instructions.
    pub(crate) reference: Option<usize>,
    pub(crate) rows: Vec<Row>,
}

/// Whether a run belongs in the table: it counted instructions, or it was timed on a real aarch64
/// host (whose wall time is what the emulated counts cannot give).
pub(crate) fn is_column(r: &Results) -> bool {
    r.run.counter.is_some() || (r.run.host.arch == "aarch64" && !r.run.host.is_emulated())
}

/// The handshake-form phases of `runs` that an aarch64 column has, each across every column, in
/// the order the first aarch64 run lists them. Runs that are no column (`is_column`) are left out.
pub(crate) fn side_by_side(runs: &[&Results]) -> SideBySide {
    let columns: Vec<Column> = runs
        .iter()
        .enumerate()
        .filter(|(_, r)| is_column(r))
        .map(|(i, r)| Column {
            run: i,
            architecture: r.run.host.architecture(),
            emulated: r.run.host.is_emulated(),
            counter: r.run.counter.as_ref().map(|c| c.method.name()),
            timed: !r.run.host.is_emulated(),
        })
        .collect();
    let reference = columns
        .iter()
        .position(|c| runs[c.run].run.host.arch == "x86_64" && c.counter.is_some());
    let mut ids: Vec<PhaseId> = Vec::new();
    for c in columns
        .iter()
        .filter(|c| runs[c.run].run.host.arch == "aarch64")
    {
        for p in runs[c.run]
            .phases
            .iter()
            .filter(|p| p.form == Form::Handshake)
        {
            let id = p.id();
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    let rows = ids
        .into_iter()
        .map(|id| {
            let phase = |c: &Column| runs[c.run].phase(&id);
            let instructions: Vec<Option<f64>> = columns
                .iter()
                .map(|c| phase(c).and_then(|p| p.instructions.as_ref()?.ir()))
                .collect();
            let median_ns = columns
                .iter()
                .map(|c| {
                    phase(c)
                        .filter(|p| c.timed && !p.samples_ns.is_empty())
                        .map(|p| p.stats.median_ns)
                })
                .collect();
            let base = reference.and_then(|k| instructions[k]);
            let ratio = instructions
                .iter()
                .map(|i| Some(i.as_ref()? / base.filter(|b| *b > 0.0)?))
                .collect();
            Row {
                phase: id,
                instructions,
                median_ns,
                ratio,
            }
        })
        .collect();
    SideBySide {
        columns,
        reference,
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{CounterMethod, CounterRun, Emulation, Instructions, Operation};

    /// A committed x86-64 run (72 timed phases, no counts).
    fn x86() -> Results {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../results/vm-2026-11-30.json");
        crate::results::read(std::path::Path::new(path)).unwrap()
    }

    fn counter(method: CounterMethod) -> CounterRun {
        CounterRun {
            tool: String::new(),
            wall_seconds: 1.0,
            skipped: Vec::new(),
            seed: 1,
            method,
        }
    }

    fn counted(calls: Vec<u64>) -> Instructions {
        let total = calls.iter().sum();
        Instructions::new(
            vec!["Ir".into()],
            vec![total],
            calls.len(),
            String::new(),
            calls,
        )
    }

    #[test]
    fn instructions_side_by_side_with_times_only_where_timed() {
        let keygen = PhaseId::handshake("liboqs", "ML-KEM-768", Operation::KemKeygen);
        let encaps = PhaseId::handshake("liboqs", "ML-KEM-768", Operation::KemEncaps);
        // x86-64: 100,000 and 120,000 per call (two calls each), under callgrind.
        let mut a = x86();
        a.run.counter = Some(counter(CounterMethod::Callgrind));
        let median = a.phase(&keygen).unwrap().stats.median_ns;
        for p in &mut a.phases {
            if p.is(&keygen) {
                p.instructions = Some(counted(vec![99_000, 101_000]));
            } else if p.is(&encaps) {
                p.instructions = Some(counted(vec![120_000, 120_000]));
            }
        }
        // aarch64 emulated: keygen 187,000 (hand: 187,000 / 100,000 = 1.87), encaps not counted.
        let mut b = x86();
        b.run.host.arch = "aarch64".into();
        b.run.host.emulated = Some(Emulation {
            emulator: "qemu-aarch64 version 10.2.2".into(),
            cpu: "neoverse-n1".into(),
            host_arch: "x86_64".into(),
        });
        b.run.counter = Some(counter(CounterMethod::QemuPlugin));
        b.phases = vec![counted_phase(keygen.clone(), 2, String::new())];
        b.phases[0].instructions = Some(counted(vec![187_000, 187_000]));
        // An x86-64 run without counts is no column.
        let c = x86();
        let t = side_by_side(&[&a, &c, &b]);
        assert_eq!(t.columns.len(), 2);
        assert_eq!(t.columns[0].architecture, "x86_64");
        assert_eq!(t.columns[1].architecture, "aarch64 (emulated: neoverse-n1)");
        assert_eq!(t.columns[1].run, 2);
        assert_eq!(t.columns[1].counter, Some("qemu plugin"));
        assert_eq!(t.reference, Some(0));
        // Only the phases an aarch64 column has.
        assert_eq!(t.rows.len(), 1);
        let r = &t.rows[0];
        assert_eq!(r.phase, keygen);
        assert_eq!(r.instructions, vec![Some(100_000.0), Some(187_000.0)]);
        assert_eq!(r.ratio, vec![Some(1.0), Some(1.87)]);
        assert_eq!(r.median_ns, vec![Some(median), None]);
        // No aarch64 run: no rows.
        assert!(side_by_side(&[&a]).rows.is_empty());
    }
}
