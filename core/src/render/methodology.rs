//! The methodology page's context: the policy and timer of each run, what every phase includes,
//! and the sources of every size.

use super::Run;
use crate::algorithm;
use crate::compose;
use serde::Serialize;

#[derive(Serialize)]
pub(crate) struct Body {
    pub(crate) policies: Vec<Policy>,
    /// Per run: every phase's iterations, batch, timed time against the budget, run delay.
    pub(crate) budgets: Vec<Budget>,
    pub(crate) components: Vec<ComponentRow>,
    pub(crate) worlds: String,
    /// Draws behind each composed difference's median shift (`shift::DRAWS`).
    pub(crate) shift_draws: String,
    pub(crate) batch_threshold: f64,
    pub(crate) includes: Vec<Include>,
    pub(crate) algorithms: Vec<AlgorithmRow>,
    pub(crate) names: Vec<(String, String, String)>,
    /// The newest run's backends: library and version, build and dispatch, phases covered.
    pub(crate) backends: Vec<BackendRow>,
    /// The newest run's stacks: (name, description).
    pub(crate) stacks: Vec<(String, String)>,
    pub(crate) resamples: usize,
    pub(crate) seed: String,
    pub(crate) tolerance_pct: f64,
    /// Per run with a `memory` section: (host, heap method, stack method, the empty call's stack).
    pub(crate) memory: Vec<(String, String, String, String)>,
    /// The identity worked through on one suite of the newest run, for the page's first screen.
    pub(crate) identity: Option<IdentityExample>,
}

/// One suite's composed mean term by term (`compose::identity_terms`), as `check` adds it.
#[derive(Serialize)]
pub(crate) struct IdentityExample {
    pub(crate) host: String,
    pub(crate) suite: String,
    pub(crate) stack: String,
    /// Operation, algorithm, backend, count, phase mean, count × mean, share of the sum.
    pub(crate) rows: Vec<[String; 7]>,
    pub(crate) sum: String,
    /// Where the stored composed mean differs from the sum by more than `check` allows: the
    /// stored mean and its difference.
    pub(crate) stored_off: Option<String>,
}

/// The suite the page works through: the hybrid TLS 1.3 key exchange, rustls's composition where
/// the run has it (the first stack's otherwise), else the run's first suite.
fn identity_example(run: &Run) -> Option<IdentityExample> {
    let r = &run.results;
    let hybrid = |s: &&crate::results::SuiteResult| {
        s.name == crate::figures::probe::HYBRID && s.protocol == "tls13"
    };
    let suite = r
        .suites
        .iter()
        .filter(hybrid)
        .find(|s| s.stack == "rustls")
        .or_else(|| r.suites.iter().find(hybrid))
        .or_else(|| r.suites.first())?;
    let terms = compose::identity_terms(&suite.phases, &r.phases)?;
    let sum: f64 = terms
        .iter()
        .map(|(part, phase)| compose::identity_term(part, phase))
        .sum();
    let rows = terms
        .iter()
        .map(|(part, phase)| {
            let term = compose::identity_term(part, phase);
            [
                part.operation.label().to_string(),
                part.algorithm.clone(),
                part.backend.clone(),
                part.count.to_string(),
                crate::units::time(phase.stats.mean_ns),
                crate::units::time(term),
                format!("{:.1}%", term / sum * 100.0),
            ]
        })
        .collect();
    Some(IdentityExample {
        host: run.label.clone(),
        suite: suite.name.clone(),
        stack: suite.stack.clone(),
        rows,
        sum: crate::units::time(sum),
        // As `check` holds them (`stats::agrees`).
        stored_off: (!crate::stats::agrees(
            suite.composed.mean_ns,
            sum,
            crate::check::TOLERANCE_PCT,
        ))
        .then(|| {
            format!(
                "{}, {:+.3}%",
                crate::units::time(suite.composed.mean_ns),
                (suite.composed.mean_ns / sum - 1.0) * 100.0
            )
        }),
    })
}

#[derive(Serialize)]
pub(crate) struct BackendRow {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) build: String,
    /// "ML-KEM-768: kem.keygen, kem.encaps, kem.decaps", one line per algorithm.
    pub(crate) covers: Vec<String>,
}

/// "ML-KEM-768 kem.keygen", "ML-KEM-768 kem.encaps" -> "ML-KEM-768: kem.keygen, kem.encaps".
fn by_algorithm(covers: &[String]) -> Vec<String> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for c in covers {
        let (alg, op) = c.rsplit_once(' ').unwrap_or((c.as_str(), ""));
        match out.iter_mut().find(|(a, _)| a == alg) {
            Some((_, ops)) => ops.push(op.to_string()),
            None => out.push((alg.to_string(), vec![op.to_string()])),
        }
    }
    out.into_iter()
        .map(|(a, ops)| format!("{a}: {}", ops.join(", ")))
        .collect()
}

#[derive(Serialize)]
pub(crate) struct Policy {
    pub(crate) host: String,
    /// The run's iteration policy, as recorded.
    pub(crate) settings: crate::results::Settings,
    pub(crate) clock: String,
    pub(crate) tsc: String,
    pub(crate) overhead_ns: String,
    pub(crate) overhead_cycles: String,
    pub(crate) randomness: String,
    pub(crate) pinned_core: String,
    pub(crate) rustc: String,
    pub(crate) profile: String,
    pub(crate) wall: String,
}

#[derive(Serialize)]
pub(crate) struct Budget {
    pub(crate) host: String,
    pub(crate) budget_ms: u64,
    pub(crate) rows: Vec<BudgetRow>,
}

#[derive(Serialize)]
pub(crate) struct BudgetRow {
    pub(crate) phase: String,
    pub(crate) iterations: String,
    pub(crate) reason: String,
    pub(crate) batch: usize,
    pub(crate) timed: String,
    pub(crate) use_pct: String,
    pub(crate) over: bool,
    pub(crate) run_delay: String,
    /// Processes per phase (how many samples each gave) and the precision they reached.
    pub(crate) processes: String,
    pub(crate) precision: String,
}

#[derive(Serialize)]
pub(crate) struct ComponentRow {
    pub(crate) host: String,
    pub(crate) phase: String,
    pub(crate) handshake: String,
    pub(crate) primitive: String,
    pub(crate) setup: String,
    pub(crate) share: String,
    pub(crate) name: String,
}

#[derive(Serialize)]
pub(crate) struct Include {
    pub(crate) backend: String,
    pub(crate) operation: String,
    pub(crate) includes: String,
}

#[derive(Serialize)]
pub(crate) struct AlgorithmRow {
    pub(crate) name: String,
    pub(crate) sizes: String,
    pub(crate) source: String,
}

/// A run's timing policy: its clock, timer cost, randomness, pinning and build.
fn policy(run: &Run) -> Policy {
    let r = &run.results.run;
    Policy {
        host: run.label.clone(),
        settings: r.iterations_policy.clone(),
        clock: r.timer.clock.clone(),
        tsc: match (r.timer.tsc_invariant, r.timer.tsc_hz) {
            (true, Some(hz)) => format!("invariant, {:.3} GHz measured", hz / 1e9),
            _ => "not used (no invariant TSC)".into(),
        },
        overhead_ns: format!("{:.1} ns", r.timer.overhead_ns),
        overhead_cycles: r
            .timer
            .overhead_cycles
            .map_or("not counted".into(), |c| format!("{c:.0} cycles")),
        randomness: if r.timer.randomness.is_empty() {
            "not recorded (before schema 2: RustCrypto drew from getrandom on every call)".into()
        } else {
            r.timer.randomness.clone()
        },
        pinned_core: r
            .pinned_core
            .map_or("not pinned".into(), |c| format!("core {c}")),
        rustc: r.rustc_version.clone(),
        profile: r.build_profile.clone(),
        wall: format!("{:.0} s", r.wall_seconds),
    }
}

/// The run's phases against its time budget: iterations, why, timed share and precision.
fn budget(run: &Run) -> Budget {
    let r = &run.results;
    let budget_ms = r.run.iterations_policy.budget_ms;
    let rows = r
        .phases
        .iter()
        .map(|p| {
            let use_pct = p.timed_ms.map(|ms| ms / budget_ms as f64 * 100.0);
            BudgetRow {
                phase: p.name(),
                iterations: crate::units::count(p.stats.iterations as f64),
                reason: format!("{:?}", p.iterations_reason).to_lowercase(),
                batch: p.batch,
                timed: p.timed_ms.map_or("–".into(), |ms| format!("{ms:.0} ms")),
                use_pct: use_pct.map_or("–".into(), |u| format!("{u:.0}%")),
                // A floor phase is over its budget by design (the minimum samples).
                over: p.iterations_reason != crate::results::Reason::Floor
                    && use_pct.is_some_and(|u| u > 120.0),
                run_delay: p.run_delay_pct.map_or("–".into(), |d| format!("{d:.2}%")),
                processes: if p.processes.is_empty() {
                    "1".into()
                } else {
                    format!(
                        "{} ({})",
                        p.processes.len(),
                        p.processes
                            .iter()
                            .map(|n| n.to_string())
                            .collect::<Vec<_>>()
                            .join(" + ")
                    )
                },
                precision: crate::figures::precision_label(p.precision.as_ref()),
            }
        })
        .collect();
    Budget {
        host: run.label.clone(),
        budget_ms,
        rows,
    }
}

/// What each backend's operation includes in its timed region, once per backend and operation.
fn includes(runs: &[&Run]) -> Vec<Include> {
    let mut includes: Vec<Include> = Vec::new();
    for run in runs {
        for p in &run.results.phases {
            let op = format!(
                "{}{}",
                p.operation.name(),
                if p.form == crate::results::Form::Primitive {
                    " (primitive)"
                } else {
                    ""
                }
            );
            if !includes
                .iter()
                .any(|i| i.backend == p.backend && i.operation == op)
            {
                includes.push(Include {
                    backend: p.backend.clone(),
                    operation: op,
                    includes: p.includes.clone(),
                });
            }
        }
    }
    includes.sort_by(|a, b| (&a.operation, &a.backend).cmp(&(&b.operation, &b.backend)));
    includes
}

/// Every algorithm's sizes with their source.
fn algorithms() -> Vec<AlgorithmRow> {
    algorithm::all()
        .iter()
        .map(|a| {
            let mut sizes = Vec::new();
            let mut add = |what: &str, v: Option<usize>| {
                if let Some(v) = v {
                    sizes.push(format!("{what} {}", crate::units::bytes(v)));
                }
            };
            add("public key", a.public_key);
            add("ciphertext", a.ciphertext);
            add("signature", a.signature);
            add("shared secret", a.shared_secret);
            add("key", a.key);
            add("nonce", a.nonce);
            add("tag", a.tag);
            AlgorithmRow {
                name: a.name.clone(),
                sizes: sizes.join(", "),
                source: a.source.clone(),
            }
        })
        .collect()
}

pub(crate) fn build(runs: &[&Run]) -> Body {
    let policies = runs.iter().map(|run| policy(run)).collect();
    let budgets = runs.iter().map(|run| budget(run)).collect();
    let components = runs
        .iter()
        .flat_map(|run| {
            run.results.components.iter().map(move |c| ComponentRow {
                host: run.label.clone(),
                phase: c.id().to_string(),
                handshake: crate::units::time(c.handshake_median_ns),
                primitive: crate::units::time(c.primitive_median_ns),
                setup: crate::units::signed_time(c.setup_ns),
                share: format!("{:.0}%", c.setup_ns / c.handshake_median_ns * 100.0),
                name: c.name.clone(),
            })
        })
        .collect();
    let worlds = runs.first().and_then(|r| r.results.suites.first()).map_or(
        format!(
            "{} bootstrap worlds × {} draws",
            compose::CI_RESAMPLES,
            compose::CI_DRAWS
        ),
        |s| {
            format!(
                "{} bootstrap worlds × {} draws",
                crate::units::count(s.composed.ci_worlds as f64),
                crate::units::count(s.composed.ci_draws as f64)
            )
        },
    );
    let includes = includes(runs);
    let algorithms = algorithms();
    let mut names = Vec::new();
    if let Some(run) = runs.first() {
        for b in &run.results.backends {
            for (std, native) in &b.names {
                names.push((b.name.clone(), std.clone(), native.clone()));
            }
        }
    }
    let newest = runs
        .iter()
        .max_by(|a, b| a.results.run.date_utc.cmp(&b.results.run.date_utc));
    let backends = newest.map_or_else(Vec::new, |run| {
        run.results
            .backends
            .iter()
            .map(|b| BackendRow {
                name: b.name.clone(),
                version: b.version.clone(),
                build: if b.build.is_empty() {
                    "not recorded (schema 1)".into()
                } else {
                    b.build.clone()
                },
                covers: by_algorithm(&b.covers),
            })
            .collect()
    });
    let stacks = newest.map_or_else(Vec::new, |run| {
        run.results
            .stacks
            .iter()
            .map(|s| (s.name.clone(), s.description.clone()))
            .collect()
    });
    let memory = runs
        .iter()
        .filter_map(|run| {
            let m = run.results.memory.as_ref()?;
            Some((
                run.label.clone(),
                m.heap_method.clone(),
                m.stack_method.clone(),
                crate::units::bytes(m.harness_stack_bytes as usize),
            ))
        })
        .collect();
    Body {
        identity: newest.and_then(|run| identity_example(run)),
        memory,
        backends,
        stacks,
        policies,
        budgets,
        components,
        worlds,
        shift_draws: crate::units::count(crate::shift::DRAWS as f64),
        batch_threshold: 100.0,
        includes,
        algorithms,
        names,
        resamples: compose::RESAMPLES,
        seed: format!("{:#x}", compose::SEED),
        tolerance_pct: crate::check::TOLERANCE_PCT,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn coverage_is_grouped_by_algorithm_in_order() {
        let c = [
            "ML-KEM-768 kem.keygen",
            "ML-KEM-768 kem.encaps",
            "X25519 dh.derive",
            "ML-KEM-768 kem.decaps",
        ]
        .map(String::from);
        assert_eq!(
            super::by_algorithm(&c),
            [
                "ML-KEM-768: kem.keygen, kem.encaps, kem.decaps",
                "X25519: dh.derive"
            ]
        );
    }
}
