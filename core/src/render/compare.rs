//! The compare page's context: one operation across backends, one suite across stacks and hosts.

use super::svg::{self, Bar};
use super::Run;
use crate::results::PhaseId;
use crate::suite::TrackKind;
use minijinja::Value;
use serde::Serialize;

#[derive(Serialize)]
pub(crate) struct Body {
    pub(crate) operations: Vec<Chart>,
    pub(crate) suites: Vec<Chart>,
    pub(crate) legend_backends: Vec<(String, String)>,
    pub(crate) legend_stacks: Vec<(String, String)>,
    /// The baseline run's label, and every other run against it, as `pqprof compare` reports it.
    pub(crate) baseline: String,
    pub(crate) diffs: Vec<Diff>,
    pub(crate) crosschecks: Vec<Cross>,
    pub(crate) leagues: Vec<LeagueRun>,
}

/// One run's league tables (crate::league): per algorithm, backends as rows, operations as columns.
#[derive(Serialize)]
pub(crate) struct LeagueRun {
    pub(crate) label: String,
    pub(crate) tables: Vec<LeagueTable>,
}

#[derive(Serialize)]
pub(crate) struct LeagueTable {
    pub(crate) algorithm: String,
    pub(crate) operations: Vec<String>,
    /// (backend, one cell per operation)
    pub(crate) rows: Vec<(String, Vec<LeagueCell>)>,
    /// One per operation: the published figure, or "".
    pub(crate) published: Vec<String>,
    pub(crate) published_sources: Vec<String>,
}

#[derive(Serialize, Default)]
pub(crate) struct LeagueCell {
    pub(crate) median: String,
    pub(crate) to_fastest: String,
    pub(crate) to_published: String,
    pub(crate) class: String,
}

fn leagues(runs: &[&Run]) -> Vec<LeagueRun> {
    runs.iter()
        .rev()
        .map(|run| {
            let tables = crate::league::league_builtin(&run.results)
                .into_iter()
                .map(|l| {
                    let mut backends: Vec<String> = Vec::new();
                    for o in &l.operations {
                        for e in &o.entries {
                            if !backends.contains(&e.backend) {
                                backends.push(e.backend.clone());
                            }
                        }
                    }
                    let rows = backends
                        .iter()
                        .map(|b| {
                            let cells = l
                                .operations
                                .iter()
                                .map(|o| {
                                    o.entries.iter().find(|e| &e.backend == b).map_or_else(
                                        LeagueCell::default,
                                        |e| LeagueCell {
                                            median: crate::units::time(e.median_ns),
                                            to_fastest: format!(
                                                "{}{}",
                                                crate::units::ratio(e.to_fastest),
                                                if e.tied_with_fastest && e.to_fastest > 1.0 {
                                                    " tie"
                                                } else {
                                                    ""
                                                }
                                            ),
                                            to_published: e
                                                .to_published
                                                .map_or(String::new(), crate::units::ratio),
                                            class: if e.to_fastest == 1.0 || e.tied_with_fastest {
                                                "faster"
                                            } else {
                                                ""
                                            }
                                            .into(),
                                        },
                                    )
                                })
                                .collect();
                            (b.clone(), cells)
                        })
                        .collect();
                    LeagueTable {
                        algorithm: l.algorithm.clone(),
                        operations: l
                            .operations
                            .iter()
                            .map(|o| o.operation.name().to_string())
                            .collect(),
                        rows,
                        published: l
                            .operations
                            .iter()
                            .map(|o| {
                                o.published
                                    .as_ref()
                                    .map_or(String::new(), crate::league::describe)
                            })
                            .collect(),
                        published_sources: l
                            .operations
                            .iter()
                            .map(|o| {
                                o.published
                                    .as_ref()
                                    .map_or(String::new(), |p| p.source.clone())
                            })
                            .collect(),
                    }
                })
                .collect();
            LeagueRun {
                label: run.label.clone(),
                tables,
            }
        })
        .collect()
}

#[derive(Serialize)]
pub(crate) struct Cross {
    pub(crate) host: String,
    pub(crate) date: String,
    pub(crate) tolerance: String,
    pub(crate) wall: String,
    /// How many rounds, in words.
    pub(crate) rounds: String,
    pub(crate) rows: Vec<CrossRow>,
    pub(crate) references: Vec<RefRow>,
}

#[derive(Serialize)]
pub(crate) struct CrossRow {
    pub(crate) tool: String,
    pub(crate) backend: String,
    pub(crate) phase: String,
    pub(crate) statistic: String,
    pub(crate) pqprof: String,
    pub(crate) tool_value: String,
    pub(crate) median: String,
    pub(crate) diff: String,
    pub(crate) verdict: String,
    pub(crate) class: String,
    pub(crate) note: String,
}

#[derive(Serialize)]
pub(crate) struct RefRow {
    pub(crate) phase: String,
    pub(crate) backend: String,
    pub(crate) pqprof: String,
    pub(crate) reference: String,
    pub(crate) ratio: String,
    pub(crate) implementation: String,
    pub(crate) machine: String,
    pub(crate) comparable: bool,
    pub(crate) source: String,
    pub(crate) date: String,
}

fn crosschecks(runs: &[&Run]) -> Vec<Cross> {
    runs.iter()
        .filter_map(|run| {
            let c = run.results.crosscheck.as_ref()?;
            let fmt = |v: f64, stat: &str| if stat.contains("cycles") { format!("{} cycles", crate::units::count(v)) } else { crate::units::time(v) };
            Some(Cross {
                host: run.label.clone(),
                date: c.date_utc.clone(),
                tolerance: format!("{}%", c.tolerance_pct),
                wall: format!("{:.0} s", c.wall_seconds),
                rounds: match c.max_rounds {
                    Some(max) if max > c.rounds => {
                        let used: Vec<usize> = c.rows.iter().map(|r| r.tool_rounds.len()).filter(|n| *n > 0).collect();
                        format!(
                            "Every tool run made at least {} rounds and went on, up to {max}, while one of its phases was undecided (here {} to {} rounds); stopping on a decision makes a 95% interval slightly optimistic.",
                            c.rounds,
                            used.iter().min().unwrap_or(&0),
                            used.iter().max().unwrap_or(&0)
                        )
                    }
                    _ => format!("{} rounds per tool run.", c.rounds),
                },
                rows: c
                    .rows
                    .iter()
                    .map(|r| CrossRow {
                        tool: r.tool.clone(),
                        backend: r.backend.clone(),
                        phase: format!("{} {}", r.algorithm, r.operation),
                        statistic: r.statistic.clone(),
                        pqprof: fmt(r.pqprof, &r.statistic),
                        tool_value: fmt(r.tool_value, &r.statistic),
                        median: crate::units::time(r.pqprof_median_ns),
                        diff: crate::units::delta(r.diff_pct),
                        verdict: if r.agree { "agree" } else { "disagree" }.into(),
                        class: if r.agree { "faster" } else { "slower" }.into(),
                        note: r.note.clone(),
                    })
                    .collect(),
                references: c
                    .references
                    .iter()
                    .map(|r| RefRow {
                        phase: format!("{} {}", r.algorithm, r.operation),
                        backend: r.backend.clone(),
                        pqprof: if r.per_byte { format!("{:.3} c/B", r.pqprof_cycles) } else { crate::units::count(r.pqprof_cycles) },
                        reference: if r.per_byte { format!("{:.3} c/B", r.reference_cycles) } else { crate::units::count(r.reference_cycles) },
                        ratio: crate::units::ratio(r.ratio),
                        implementation: r.implementation.clone(),
                        machine: r.machine.clone(),
                        comparable: r.comparable,
                        source: r.source.clone(),
                        date: r.source_date.clone(),
                    })
                    .collect(),
            })
        })
        .collect()
}

#[derive(Serialize)]
pub(crate) struct Diff {
    pub(crate) a: String,
    pub(crate) b: String,
    pub(crate) caveats: Vec<String>,
    pub(crate) rows: Vec<DiffRow>,
}

#[derive(Serialize)]
pub(crate) struct DiffRow {
    pub(crate) kind: String,
    pub(crate) name: String,
    pub(crate) a: String,
    pub(crate) b: String,
    pub(crate) ratio: String,
    pub(crate) ci: String,
    pub(crate) verdict: String,
    pub(crate) class: String,
}

/// Run `b` against the baseline run `a`.
fn diff(a: &Run, b: &Run) -> Diff {
    let c = crate::comparison::compare(
        &a.results,
        &b.results,
        crate::comparison::DEFAULT_NOISE_FLOOR_PCT,
    );
    let rows = c
        .rows
        .iter()
        .map(|r| DiffRow {
            kind: r.kind.clone(),
            name: r.name.clone(),
            a: crate::units::time(r.a_median_ns),
            b: crate::units::time(r.b_median_ns),
            ratio: format!(
                "{:.3}{}",
                r.ratio,
                if r.statistic == "instructions" {
                    " (instructions)"
                } else {
                    ""
                }
            ),
            ci: r
                .ratio_ci95
                .map_or("n/a".into(), |(lo, hi)| format!("{lo:.3} – {hi:.3}")),
            verdict: r.verdict.text().into(),
            class: match r.verdict {
                crate::comparison::Verdict::Faster => "faster",
                crate::comparison::Verdict::Slower => "slower",
                crate::comparison::Verdict::NoChange => "baseline",
            }
            .into(),
        })
        .collect();
    Diff {
        a: a.label.clone(),
        b: b.label.clone(),
        caveats: c.caveats,
        rows,
    }
}

#[derive(Serialize)]
pub(crate) struct Chart {
    pub(crate) title: String,
    pub(crate) svg: Value,
}

/// Names in the order the runs list them, each once (backends or stacks): they choose the colours.
fn union(runs: &[&Run], names: impl Fn(&Run) -> Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for run in runs {
        for n in names(run) {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out
}

fn legend(names: &[String]) -> Vec<(String, String)> {
    names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.clone(), svg::PALETTE[i % svg::PALETTE.len()].to_string()))
        .collect()
}

pub(crate) fn build(runs: &[&Run], baseline: usize) -> Body {
    let several_hosts = runs.len() > 1;
    let backends = union(runs, |r| {
        r.results.backends.iter().map(|b| b.name.clone()).collect()
    });
    let stacks = union(runs, |r| {
        r.results.stacks.iter().map(|s| s.name.clone()).collect()
    });
    let who = |run: &Run, what: &str| {
        if several_hosts {
            format!("{what} · {}", run.label)
        } else {
            what.to_string()
        }
    };

    let mut ops: Vec<(String, crate::algorithm::Operation)> = Vec::new();
    for run in runs {
        for p in &run.results.phases {
            if !ops
                .iter()
                .any(|(a, o)| *a == p.algorithm && *o == p.operation)
            {
                ops.push((p.algorithm.clone(), p.operation));
            }
        }
    }
    // Grouped by algorithm (in the registry's order), then by operation.
    let rank = |a: &str| {
        crate::algorithm::all()
            .iter()
            .position(|x| x.name == a)
            .unwrap_or(usize::MAX)
    };
    ops.sort_by(|(a1, o1), (a2, o2)| (rank(a1), o1).cmp(&(rank(a2), o2)));
    let operations = ops
        .iter()
        .map(|(alg, op)| {
            let mut bars = Vec::new();
            for run in runs {
                for b in &backends {
                    if let Some(p) = run.results.phase(&PhaseId::handshake(b, alg, *op)) {
                        bars.push(Bar {
                            label: who(run, b),
                            value_ns: p.stats.median_ns,
                            key: b.clone(),
                            note: format!(" (p95 {})", crate::units::time(p.stats.p95_ns)),
                        });
                    }
                }
            }
            let title = format!("{alg} {op}");
            Chart {
                svg: Value::from_safe_string(svg::bars(
                    &title,
                    "median per operation",
                    &bars,
                    &backends,
                )),
                title,
            }
        })
        .collect();

    let mut names: Vec<String> = Vec::new();
    for run in runs {
        for s in run
            .results
            .suites
            .iter()
            .filter(|s| s.kind != TrackKind::Record)
        {
            if !names.contains(&s.name) {
                names.push(s.name.clone());
            }
        }
    }
    let suites = names
        .iter()
        .map(|name| {
            let mut bars = Vec::new();
            for run in runs {
                for stack in &stacks {
                    if let Some(s) = run
                        .results
                        .suites
                        .iter()
                        .find(|s| &s.name == name && &s.stack == stack)
                    {
                        bars.push(Bar {
                            label: who(run, stack),
                            value_ns: s.composed.median_ns,
                            key: stack.clone(),
                            note: s.delta_vs_baseline_pct.map_or(String::new(), |d| {
                                format!(
                                    " ({} vs {})",
                                    crate::units::delta(d),
                                    s.baseline.as_deref().unwrap_or("")
                                )
                            }),
                        });
                    }
                }
            }
            Chart {
                svg: Value::from_safe_string(svg::bars(
                    name,
                    "composed median per handshake",
                    &bars,
                    &stacks,
                )),
                title: name.clone(),
            }
        })
        .collect();
    let base = &runs[baseline];
    let diffs = runs
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != baseline)
        .map(|(_, r)| diff(base, r))
        .collect();
    Body {
        operations,
        suites,
        legend_backends: legend(&backends),
        legend_stacks: legend(&stacks),
        baseline: base.label.clone(),
        diffs,
        crosschecks: crosschecks(runs),
        leagues: leagues(runs),
    }
}
