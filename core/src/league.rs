//! Distance from the fastest: for each algorithm and operation, every backend measured in one run
//! against the fastest of them, and against the best published cycle count (references/cycles.toml,
//! compiled in). Nothing here is stored: the table is a pure function of a run's verified phases.
//!
//! Like for like: the primitive form where a backend has one (keys imported and contexts made
//! outside the timed call, as speed tools and published tables time it), else the handshake form,
//! which is then the same call. pqprof's cycles are TSC ticks (a fixed rate); published figures are
//! mostly core cycles with boost off, so a ratio to them is for orientation, and only on the same
//! microarchitecture.

use crate::references::{self, Reference};
use crate::results::{Form, Operation, Phase, PhaseId, Results};

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub(crate) backend: String,
    pub(crate) form: Form,
    pub(crate) median_ns: f64,
    pub(crate) ci95_ns: Option<(f64, f64)>,
    /// Median TSC cycles per call, where recorded.
    pub(crate) cycles: Option<f64>,
    /// Median / the fastest median of this operation in this run (1.0 for the fastest).
    pub(crate) to_fastest: f64,
    /// The two medians' 95% intervals overlap: not distinguishable from the fastest in this run.
    pub(crate) tied_with_fastest: bool,
    /// pqprof's median TSC cycles / the published figure chosen for this operation.
    pub(crate) to_published: Option<f64>,
}

/// The published figure an operation is set against: the lowest for this machine's
/// microarchitecture, else the lowest for any (labelled as another microarchitecture).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Published {
    pub(crate) cycles: f64,
    pub(crate) implementation: String,
    pub(crate) microarchitecture: String,
    pub(crate) machine: String,
    pub(crate) same_microarchitecture: bool,
    pub(crate) source: String,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Operation_ {
    pub(crate) operation: Operation,
    pub(crate) entries: Vec<Entry>,
    pub(crate) published: Option<Published>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct League {
    pub(crate) algorithm: String,
    pub(crate) operations: Vec<Operation_>,
}

/// The phase that stands for a backend's (algorithm, operation): primitive form if there is one.
fn like_for_like<'a>(
    phases: &'a [Phase],
    backend: &str,
    algorithm: &str,
    op: Operation,
) -> Option<&'a Phase> {
    let find =
        |form| crate::results::find_phase(phases, &PhaseId::new(backend, algorithm, op, form));
    find(Form::Primitive).or_else(|| find(Form::Handshake))
}

pub(crate) fn best_published(
    refs: &[Reference],
    algorithm: &str,
    op: Operation,
    here: &str,
) -> Option<Published> {
    let candidates: Vec<&Reference> = refs
        .iter()
        .filter(|r| r.primitive == algorithm && r.operation == op.name() && !r.experimental)
        .collect();
    let lowest = |same: bool| {
        candidates
            .iter()
            .filter(|r| !same || (!here.is_empty() && r.microarchitecture == here))
            .min_by(|a, b| a.cycles.total_cmp(&b.cycles))
            .map(|r| Published {
                cycles: r.cycles,
                implementation: r.implementation.clone(),
                microarchitecture: r.microarchitecture.clone(),
                machine: r.machine.clone(),
                same_microarchitecture: !here.is_empty() && r.microarchitecture == here,
                source: r.source.clone(),
            })
    };
    lowest(true).or_else(|| lowest(false))
}

/// The league tables of one run: algorithms in the registry's order, operations in schema order;
/// only operations two or more backends measured, or that have a published figure.
pub(crate) fn league(all: &[Phase], here: &str, refs: &[Reference]) -> Vec<League> {
    let mut keys: Vec<(String, Operation)> = Vec::new();
    for p in all {
        if !keys
            .iter()
            .any(|(a, o)| *a == p.algorithm && *o == p.operation)
        {
            keys.push((p.algorithm.clone(), p.operation));
        }
    }
    let rank = |a: &str| {
        crate::algorithm::all()
            .iter()
            .position(|x| x.name == a)
            .unwrap_or(usize::MAX)
    };
    keys.sort_by(|(a1, o1), (a2, o2)| (rank(a1), o1).cmp(&(rank(a2), o2)));
    let mut out: Vec<League> = Vec::new();
    for (algorithm, op) in keys {
        let mut backends: Vec<&str> = Vec::new();
        for p in all
            .iter()
            .filter(|p| p.algorithm == algorithm && p.operation == op)
        {
            if !backends.contains(&p.backend.as_str()) {
                backends.push(&p.backend);
            }
        }
        let phases: Vec<&Phase> = backends
            .iter()
            .filter_map(|b| like_for_like(all, b, &algorithm, op))
            .collect();
        let published = best_published(refs, &algorithm, op, here);
        if phases.len() < 2 && published.is_none() {
            continue;
        }
        let Some(fastest) = phases
            .iter()
            .min_by(|a, b| a.stats.median_ns.total_cmp(&b.stats.median_ns))
        else {
            continue;
        };
        let mut entries: Vec<Entry> = phases
            .iter()
            .map(|p| Entry {
                backend: p.backend.clone(),
                form: p.form,
                median_ns: p.stats.median_ns,
                ci95_ns: p.median_ci95_ns,
                cycles: p.cycles.as_ref().map(|c| c.median),
                to_fastest: p.stats.median_ns / fastest.stats.median_ns,
                tied_with_fastest: match (p.median_ci95_ns, fastest.median_ci95_ns) {
                    (Some((lo, _)), Some((_, hi))) => lo <= hi,
                    _ => std::ptr::eq(*p, *fastest),
                },
                to_published: match (&published, &p.cycles) {
                    (Some(pb), Some(c)) if pb.cycles > 0.0 => Some(c.median / pb.cycles),
                    _ => None,
                },
            })
            .collect();
        entries.sort_by(|a, b| a.median_ns.total_cmp(&b.median_ns));
        let row = Operation_ {
            operation: op,
            entries,
            published,
        };
        match out.iter_mut().find(|l| l.algorithm == algorithm) {
            Some(l) => l.operations.push(row),
            None => out.push(League {
                algorithm,
                operations: vec![row],
            }),
        }
    }
    out
}

/// The league tables against the compiled-in references.
pub fn league_builtin(r: &Results) -> Vec<League> {
    let refs = references::builtin()
        .map(|(refs, _)| refs)
        .unwrap_or_default();
    league(&r.phases, &r.run.host.microarchitecture, &refs)
}

/// Text tables, one per algorithm (`pqprof league`).
pub fn render_text(r: &Results, leagues: &[League]) -> String {
    let mut s = format!(
        "League tables: {} · {}; like-for-like form; × fastest = median / the fastest median measured in this run; × published = pqprof median TSC cycles / the best published cycles\n",
        r.run.host.label(),
        r.run.date_utc
    );
    for l in leagues {
        s += &format!("\n{}\n", l.algorithm);
        let mut t = comfy_table::Table::new();
        t.load_preset(comfy_table::presets::NOTHING);
        t.set_header(vec![
            "operation",
            "backend",
            "median",
            "cycles",
            "× fastest",
            "× published",
        ]);
        let mut notes = Vec::new();
        for o in &l.operations {
            for (i, e) in o.entries.iter().enumerate() {
                t.add_row(vec![
                    if i == 0 {
                        o.operation.name().to_string()
                    } else {
                        String::new()
                    },
                    format!(
                        "{}{}",
                        e.backend,
                        if e.form == Form::Primitive {
                            " (primitive)"
                        } else {
                            ""
                        }
                    ),
                    crate::units::time(e.median_ns),
                    e.cycles.map_or("n/a".into(), crate::units::count),
                    format!(
                        "{}{}",
                        crate::units::ratio(e.to_fastest),
                        if e.tied_with_fastest && e.to_fastest > 1.0 {
                            " (tie)"
                        } else {
                            ""
                        }
                    ),
                    e.to_published.map_or(String::new(), crate::units::ratio),
                ]);
            }
            if let Some(p) = &o.published {
                notes.push(format!(
                    "  {} published: {}",
                    o.operation.name(),
                    describe(p)
                ));
            }
        }
        s += &t.to_string();
        s.push('\n');
        for n in notes {
            s += &n;
            s.push('\n');
        }
    }
    s
}

/// "16,376 cycles, mlkem-native … (sapphirerapids, another microarchitecture)".
pub(crate) fn describe(p: &Published) -> String {
    format!(
        "{} cycles, {} ({}{})",
        crate::units::count(p.cycles),
        p.implementation,
        p.microarchitecture,
        if p.same_microarchitecture {
            ", this machine's microarchitecture"
        } else {
            ", another microarchitecture: for orientation only"
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(alg: &str, op: &str, cycles: f64, uarch: &str) -> Reference {
        Reference {
            primitive: alg.into(),
            operation: op.into(),
            implementation: format!("impl-{cycles}"),
            cycles,
            statistic: "median".into(),
            machine: uarch.into(),
            microarchitecture: uarch.into(),
            source: "s".into(),
            source_date: "d".into(),
            quote: String::new(),
            experimental: false,
        }
    }

    #[test]
    fn the_same_microarchitecture_wins_over_a_lower_figure_elsewhere() {
        let mut experimental = reference("X25519", "dh.derive", 50_000.0, "zen4");
        experimental.experimental = true;
        let refs = [
            reference("X25519", "dh.derive", 70_000.0, "zen3"),
            reference("X25519", "dh.derive", 90_000.0, "zen4"),
            reference("X25519", "dh.derive", 80_000.0, "zen4"),
            experimental,
        ];
        let p = best_published(&refs, "X25519", Operation::DhDerive, "zen4").unwrap();
        assert_eq!(p.cycles, 80_000.0);
        assert!(p.same_microarchitecture);
        let other = best_published(&refs, "X25519", Operation::DhDerive, "zen5").unwrap();
        assert_eq!(other.cycles, 70_000.0);
        assert!(!other.same_microarchitecture);
        assert!(best_published(&refs, "X25519", Operation::DhKeygen, "zen4").is_none());
    }

    fn phase(backend: &str, form: Form, median: f64, ci: (f64, f64), cycles: f64) -> Phase {
        let form = if form == Form::Primitive {
            r#""form": "primitive","#
        } else {
            ""
        };
        serde_json::from_str(&format!(
            r#"{{"backend": "{backend}", "algorithm": "ML-KEM-768", "operation": "kem.encaps", {form}
            "stats": {{"mean_ns": {median}, "median_ns": {median}, "p95_ns": {median}, "p99_ns": {median}, "stdev_ns": 0, "min_ns": {median}, "max_ns": {median}, "iterations": 1}},
            "ops_per_sec": 1, "iterations_reason": "default", "warmup": 0, "verified": 1, "includes": "", "samples_ns": [{median}],
            "cycles": {{"mean": {cycles}, "median": {cycles}}}, "median_ci95_ns": [{}, {}]}}"#,
            ci.0, ci.1
        ))
        .unwrap()
    }

    #[test]
    fn ratios_use_the_primitive_form_and_intervals_decide_ties() {
        let phases = vec![
            phase(
                "a",
                Form::Handshake,
                30_000.0,
                (29_000.0, 31_000.0),
                78_000.0,
            ),
            phase(
                "a",
                Form::Primitive,
                20_000.0,
                (19_500.0, 20_500.0),
                52_000.0,
            ),
            phase(
                "b",
                Form::Handshake,
                20_400.0,
                (20_300.0, 20_600.0),
                53_000.0,
            ),
            phase(
                "c",
                Form::Handshake,
                40_000.0,
                (39_000.0, 41_000.0),
                104_000.0,
            ),
        ];
        let refs = [reference("ML-KEM-768", "kem.encaps", 26_000.0, "zen4")];
        let l = league(&phases, "zen4", &refs);
        assert_eq!(l.len(), 1);
        let o = &l[0].operations[0];
        let names: Vec<&str> = o.entries.iter().map(|e| e.backend.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(o.entries[0].form, Form::Primitive);
        assert_eq!(o.entries[0].to_fastest, 1.0);
        assert!((o.entries[1].to_fastest - 1.02).abs() < 1e-12);
        assert!(
            o.entries[1].tied_with_fastest,
            "20.3-20.6 overlaps 19.5-20.5"
        );
        assert!((o.entries[2].to_fastest - 2.0).abs() < 1e-12);
        assert!(!o.entries[2].tied_with_fastest);
        assert!((o.entries[0].to_published.unwrap() - 2.0).abs() < 1e-12);
        assert!((o.entries[2].to_published.unwrap() - 4.0).abs() < 1e-12);
    }

    #[test]
    fn a_lone_backend_without_a_published_figure_has_no_table() {
        let phases = vec![phase("a", Form::Handshake, 10.0, (9.0, 11.0), 26.0)];
        assert!(league(&phases, "zen4", &[]).is_empty());
    }
}
