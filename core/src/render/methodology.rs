//! The methodology page's context: the policy and timer of each run, what every phase includes,
//! and the sources of every size.

use super::Run;
use crate::algorithm;
use crate::compose;
use serde::Serialize;

#[derive(Serialize)]
pub struct Body {
    pub policies: Vec<Policy>,
    pub includes: Vec<Include>,
    pub algorithms: Vec<AlgorithmRow>,
    pub names: Vec<(String, String, String)>,
    pub resamples: usize,
    pub seed: String,
    pub tolerance_pct: f64,
}

#[derive(Serialize)]
pub struct Policy {
    pub host: String,
    /// The run's iteration policy, as recorded.
    pub settings: crate::results::Settings,
    pub clock: String,
    pub tsc: String,
    pub overhead_ns: f64,
    pub pinned_core: String,
    pub rustc: String,
    pub profile: String,
    pub wall: String,
}

#[derive(Serialize)]
pub struct Include {
    pub backend: String,
    pub operation: String,
    pub includes: String,
}

#[derive(Serialize)]
pub struct AlgorithmRow {
    pub name: String,
    pub sizes: String,
    pub source: String,
}

pub fn build(runs: &[Run]) -> Body {
    let policies = runs
        .iter()
        .map(|run| {
            let r = &run.results.run;
            Policy {
                host: run.label.clone(),
                settings: r.iterations_policy.clone(),
                clock: r.timer.clock.clone(),
                tsc: match (r.timer.tsc_invariant, r.timer.tsc_hz) {
                    (true, Some(hz)) => format!("invariant, {:.3} GHz measured", hz / 1e9),
                    _ => "not used (no invariant TSC)".into(),
                },
                overhead_ns: r.timer.overhead_ns,
                pinned_core: r.pinned_core.map_or("not pinned".into(), |c| format!("core {c}")),
                rustc: r.rustc_version.clone(),
                profile: r.build_profile.clone(),
                wall: format!("{:.0} s", r.wall_seconds),
            }
        })
        .collect();
    let mut includes: Vec<Include> = Vec::new();
    for run in runs {
        for p in &run.results.phases {
            let op = p.operation.name().to_string();
            if !includes.iter().any(|i| i.backend == p.backend && i.operation == op) {
                includes.push(Include { backend: p.backend.clone(), operation: op, includes: p.includes.clone() });
            }
        }
    }
    includes.sort_by(|a, b| (&a.operation, &a.backend).cmp(&(&b.operation, &b.backend)));
    let algorithms = algorithm::all()
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
            AlgorithmRow { name: a.name.clone(), sizes: sizes.join(", "), source: a.source.clone() }
        })
        .collect();
    let mut names = Vec::new();
    if let Some(run) = runs.first() {
        for b in &run.results.backends {
            for (std, native) in &b.names {
                names.push((b.name.clone(), std.clone(), native.clone()));
            }
        }
    }
    Body {
        policies,
        includes,
        algorithms,
        names,
        resamples: compose::RESAMPLES,
        seed: format!("{:#x}", compose::SEED),
        tolerance_pct: crate::check::TOLERANCE_PCT,
    }
}
