//! An emulated run (`run.host.emulated`): instruction counts only. An emulator's clock is the
//! host's time stretched by translation, so any timed figure in such a file would be read as a
//! measurement of the emulated CPU and mean nothing: every one is refused, and every phase must
//! carry counts that hold (`instructions::check`).

use super::problem::Problem;
use crate::results::{Outliers, Results, Summary};

pub(crate) fn check(results: &Results) -> Vec<Problem> {
    let mut problems = Vec::new();
    let Some(e) = &results.run.host.emulated else {
        return problems;
    };
    // What holds a timed figure; each becomes a problem below.
    let mut timed_parts: Vec<String> = Vec::new();
    let mut timed = |what: String| timed_parts.push(what);
    let t = &results.run.timer;
    if t.overhead_ns != 0.0
        || t.tsc_hz.is_some()
        || t.counter_hz.is_some()
        || t.overhead_cycles.is_some()
    {
        timed("run.timer".into());
    }
    if results.run.calibration.is_some() {
        timed("run.calibration".into());
    }
    for (has, section) in [
        (!results.suites.is_empty(), "suites (composed times)"),
        (!results.components.is_empty(), "components"),
        (results.process_samples.is_some(), "process_samples"),
        (results.handshakes.is_some(), "handshakes"),
        (results.capacity.is_some(), "capacity"),
        (results.network.is_some(), "network"),
        (results.crosscheck.is_some(), "crosscheck"),
        (results.go.is_some(), "go"),
    ] {
        if has {
            timed(section.into());
        }
    }
    let mut counted = Vec::new();
    for p in &results.phases {
        let name = format!("phase {}", p.id());
        if !p.samples_ns.is_empty()
            || p.stats != Summary::default()
            || p.ops_per_sec != 0.0
            || p.cycles.is_some()
            || p.median_ci95_ns.is_some()
            || p.rsd_pct != 0.0
            || p.outliers != Outliers::default()
            || p.timed_ms.is_some()
            || p.run_delay_pct.is_some()
            || p.steal_pct.is_some()
        {
            timed(name.clone());
        }
        match &p.instructions {
            Some(ins) if ins.ir().is_some() => counted.push((name, ins)),
            _ => problems.push(Problem::incomplete(format!(
                "{name}: no instruction count, and an emulated run has nothing else"
            ))),
        }
    }
    for what in timed_parts {
        problems.push(Problem::evidence(format!(
            "{what}: a wall-time figure in a run emulated by {} (-cpu {}), which carries instruction counts only",
            e.emulator, e.cpu
        )));
    }
    if results.run.counter.is_none() {
        problems.push(Problem::incomplete(
            "run.counter: an emulated run without a counter",
        ));
    }
    for (name, ins) in counted {
        problems.extend(super::instructions::check(&name, ins));
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::super::problem::{Kind, Problem};
    use crate::results::{
        CounterMethod, CounterRun, Emulation, Instructions, Operation, PhaseId, Results,
    };

    /// An emulated run of one counted phase, as `run --emulator` writes it.
    fn emulated() -> Results {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../results/vm-2026-11-30.json");
        let mut r = crate::results::read(std::path::Path::new(path)).unwrap();
        let id = PhaseId::handshake("liboqs", "ML-KEM-768", Operation::KemKeygen);
        let mut p = crate::figures::arch::counted_phase(id, 2, String::new());
        p.instructions = Some(Instructions::new(
            vec!["Ir".into()],
            vec![374_000],
            2,
            String::new(),
            vec![187_000, 187_000],
        ));
        r.phases = vec![p];
        r.suites.clear();
        r.components.clear();
        r.handshakes = None;
        r.crosscheck = None;
        r.capacity = None;
        r.network = None;
        r.process_samples = None;
        r.go = None;
        r.run.calibration = None;
        r.run.timer.overhead_ns = 0.0;
        r.run.timer.tsc_hz = None;
        r.run.timer.overhead_cycles = None;
        r.run.host.emulated = Some(Emulation {
            emulator: "qemu-aarch64 version 10.2.2".into(),
            cpu: "neoverse-n1".into(),
            host_arch: "x86_64".into(),
        });
        r.run.counter = Some(CounterRun {
            tool: "qemu".into(),
            wall_seconds: 1.0,
            skipped: Vec::new(),
            seed: 1,
            method: CounterMethod::QemuPlugin,
        });
        r
    }

    #[test]
    fn an_emulated_run_holds_counts_and_no_time() {
        let r = emulated();
        assert_eq!(super::check(&r), Vec::<Problem>::new());
        // A time in it is refused, and so is a phase without its count, or counts that do not add up.
        let mut timed = r.clone();
        timed.phases[0].samples_ns = vec![1000];
        timed.phases[0].stats.median_ns = 1000.0;
        let problems = super::check(&timed);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].is(Kind::Evidence, "a wall-time figure"),
            "{problems:?}"
        );
        let mut clock = r.clone();
        clock.run.timer.tsc_hz = Some(3e9);
        assert!(super::check(&clock)[0].is(Kind::Evidence, "run.timer: a wall-time figure"));
        let mut uncounted = r.clone();
        uncounted.phases[0].instructions = None;
        assert!(super::check(&uncounted)[0].is(Kind::Incomplete, "no instruction count"));
        let mut wrong = r;
        wrong.phases[0].instructions.as_mut().unwrap().ir_calls = vec![187_000, 187_001];
        assert!(super::check(&wrong)[0].is(Kind::Recomputed, "add up to 374001"));
    }
}
