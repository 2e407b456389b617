//! The overview page's context: a card per suite, a row per host, the phases behind each figure.

use crate::units as format;
use super::svg::{self, Segment};
use super::Run;
use crate::algorithm::Operation;
use crate::results::{PerHandshake, Phase, Results, SuiteResult as Suite};
use crate::suite::TrackKind;
use minijinja::Value;
use serde::Serialize;

#[derive(Serialize)]
pub struct Body {
    pub sections: Vec<Section>,
    pub signatures: Vec<Card>,
    pub records: Vec<Card>,
    pub raw: Vec<RawRow>,
    pub failures: Vec<String>,
    pub warnings: Vec<String>,
}

#[derive(Serialize)]
pub struct Section {
    pub title: String,
    pub cards: Vec<Card>,
}

#[derive(Serialize)]
pub struct Card {
    pub name: String,
    pub subtitle: String,
    pub rows: Vec<Row>,
}

/// One host's figures for a suite.
#[derive(Serialize)]
pub struct Row {
    pub host: String,
    pub key: String,
    pub measured: bool,
    pub mean_ns: f64,
    pub mean: String,
    pub median: String,
    pub p95: String,
    pub p99: String,
    pub tail: String,
    pub ops: String,
    pub wire: String,
    pub median_ci: String,
    pub delta: String,
    pub delta_ci: String,
    pub delta_class: String,
    pub public_key: String,
    pub signature: String,
    pub family: String,
    pub bar: Value,
    pub phases: Vec<PhaseRow>,
    pub env: String,
    pub note: String,
    pub handshakes: Vec<HandshakeRow>,
}

/// A real loopback handshake of this suite, beside the composed figure.
#[derive(Serialize)]
pub struct HandshakeRow {
    pub stack: String,
    pub median: String,
    pub rsd: String,
    pub ready: String,
    pub vs_baseline: String,
    pub measured_delta: String,
    pub composed_delta: String,
    pub bytes: String,
    pub client_cpu: String,
    pub server_cpu: String,
    pub client_mem: String,
    pub server_mem: String,
    pub evidence: String,
}

fn handshake_rows(r: &Results, suite: &str) -> Vec<HandshakeRow> {
    let Some(h) = &r.handshakes else { return Vec::new() };
    h.scenarios
        .iter()
        .filter(|s| s.suite == suite)
        .map(|s| {
            let mem = |m: &PerHandshake| {
                format!("{} allocs, {}", format::count(m.rust_allocs + m.c_allocs), format::bytes((m.rust_bytes + m.c_bytes) as usize))
            };
            let e = &s.evidence;
            let shares = match (e.client_share, e.server_share) {
                (Some(c), Some(v)) => format!(" · key_share {} / {} B", format::count(c.1 as f64), format::count(v.1 as f64)),
                _ => String::new(),
            };
            HandshakeRow {
                stack: s.stack.name().into(),
                median: format::time(s.median_ns),
                rsd: format!("{:.1}%", s.rsd_pct),
                ready: format::time(s.ready_median_ns),
                vs_baseline: s.vs_baseline_ratio.map_or("baseline".into(), format::ratio),
                measured_delta: s.measured_delta_ns.map(format::signed_time).unwrap_or_default(),
                composed_delta: s.composed_delta_ns.map(format::signed_time).unwrap_or_default(),
                bytes: format!("{} / {}", format::bytes(s.client_to_server_bytes as usize), format::bytes(s.server_to_client_bytes as usize)),
                client_cpu: format::time(s.client_cpu_ns),
                server_cpu: format::time(s.server_cpu_ns),
                client_mem: mem(&s.client_mem),
                server_mem: mem(&s.server_mem),
                evidence: format!("{} · {} · {} · {}{}{}", e.version, e.group, e.cipher, e.cert_key, if e.resumed { " · resumed" } else { " · full handshake" }, shares),
            }
        })
        .collect()
}

#[derive(Serialize)]
pub struct PhaseRow {
    pub label: String,
    pub backend: String,
    pub count: u32,
    pub count_label: String,
    pub contribution_ns: f64,
    pub contribution: String,
    pub share_pct: f64,
    pub mean: String,
    pub median: String,
    pub p95: String,
    pub p99: String,
    pub stdev: String,
    pub min: String,
    pub max: String,
    pub iterations: String,
}

#[derive(Serialize)]
pub struct RawRow {
    pub host: String,
    pub stack: String,
    pub mlkem: String,
    pub ecdh: String,
    pub ratio: String,
}

pub fn build(runs: &[Run]) -> Body {
    let mut sections = Vec::new();
    for (protocol, title) in [("tls13", "TLS 1.3 key exchange"), ("ssh", "SSH key exchange")] {
        let cards = cards(runs, |s| s.kind == TrackKind::Kex && s.protocol == protocol);
        if !cards.is_empty() {
            sections.push(Section { title: title.into(), cards });
        }
    }
    let failures = runs
        .iter()
        .flat_map(|r| r.results.failures.iter().map(move |f| format!("{}: {} {} {}: {}", r.label, f.backend, f.algorithm, f.operation, f.error)))
        .collect();
    Body {
        sections,
        signatures: cards(runs, |s| s.kind == TrackKind::Signature),
        records: cards(runs, |s| s.kind == TrackKind::Record),
        raw: raw_rows(runs),
        failures,
        warnings: runs.iter().flat_map(|r| r.results.warnings.iter().map(move |w| format!("{}: {w}", r.label))).collect(),
    }
}

/// The suite shown for a run: the default stack, else the first stack that composed it.
pub fn shown<'a>(r: &'a Results, name: &str) -> Option<&'a Suite> {
    let all = || r.suites.iter().filter(|s| s.name == name);
    all().find(|s| s.stack == "default").or_else(|| all().next())
}

fn cards(runs: &[Run], pick: impl Fn(&Suite) -> bool) -> Vec<Card> {
    let mut names: Vec<String> = Vec::new();
    for run in runs {
        for s in run.results.suites.iter().filter(|s| pick(s)) {
            if !names.contains(&s.name) {
                names.push(s.name.clone());
            }
        }
    }
    names
        .iter()
        .map(|name| {
            let first = runs.iter().find_map(|r| shown(&r.results, name));
            let subtitle = match first {
                Some(s) if s.baseline.as_deref() == Some(name.as_str()) => "classical baseline".to_string(),
                Some(Suite { baseline: Some(b), .. }) => format!("vs {b}"),
                Some(s) if s.kind == TrackKind::Record => s.payload_bytes.map_or(String::new(), |p| format!("{} payload", format::bytes(p))),
                Some(s) => s.family.clone().unwrap_or_default(),
                None => String::new(),
            };
            let rows = runs.iter().map(|run| row(run, name)).collect();
            Card { name: name.clone(), subtitle, rows }
        })
        .collect()
}

fn phase_of<'a>(r: &'a Results, backend: &str, algorithm: &str, op: Operation) -> Option<&'a Phase> {
    r.phase(backend, algorithm, op)
}

fn count_label(count: u32, kind: TrackKind) -> String {
    match (count, kind) {
        (0, _) => "not counted: certificate keys are long-lived".into(),
        (1, _) => String::new(),
        (2, TrackKind::Kex) => "× 2 — client and server".into(),
        (n, _) => format!("× {n}"),
    }
}

fn row(run: &Run, name: &str) -> Row {
    let r = &run.results;
    let Some(s) = shown(r, name) else {
        return Row {
            host: run.label.clone(),
            key: String::new(),
            measured: false,
            mean_ns: 0.0,
            mean: String::new(),
            median: String::new(),
            p95: String::new(),
            p99: String::new(),
            tail: String::new(),
            ops: String::new(),
            wire: String::new(),
            median_ci: String::new(),
            delta: String::new(),
            delta_ci: String::new(),
            delta_class: String::new(),
            public_key: String::new(),
            signature: String::new(),
            family: String::new(),
            bar: Value::from(""),
            phases: Vec::new(),
            env: String::new(),
            note: "not measured in this run".into(),
            handshakes: Vec::new(),
        };
    };
    let algorithms: Vec<&str> = s.phases.iter().map(|p| p.algorithm.as_str()).collect();
    let several = algorithms.iter().any(|a| *a != algorithms[0]);
    let mut phases = Vec::new();
    let mut segments = Vec::new();
    let mut steal: f64 = 0.0;
    let mut notes = Vec::new();
    for sp in &s.phases {
        let Some(p) = phase_of(r, &sp.backend, &sp.algorithm, sp.operation) else { continue };
        let contribution = f64::from(sp.count) * p.stats.mean_ns;
        let share = contribution / s.composed.mean_ns * 100.0;
        let label = if several && sp.operation.kind() != crate::algorithm::Kind::Kem {
            format!("{} ({})", sp.operation.label(), sp.algorithm)
        } else {
            sp.operation.label().to_string()
        };
        steal = steal.max(p.steal_pct.unwrap_or(0.0));
        if sp.backend == "liboqs" && sp.algorithm.starts_with("SLH-DSA") && !notes.iter().any(|n: &String| n.contains("SPHINCS")) {
            notes.push("liboqs 0.13 runs SPHINCS+ (round 3.1) under this name, not FIPS 205 SLH-DSA".to_string());
        }
        if sp.count > 0 {
            segments.push(Segment { label: label.clone(), value_ns: contribution, share_pct: share });
        }
        phases.push(PhaseRow {
            label,
            backend: sp.backend.clone(),
            count: sp.count,
            count_label: count_label(sp.count, s.kind),
            contribution_ns: contribution,
            contribution: format::time(contribution),
            share_pct: share,
            mean: format::time(p.stats.mean_ns),
            median: format::time(p.stats.median_ns),
            p95: format::time(p.stats.p95_ns),
            p99: format::time(p.stats.p99_ns),
            stdev: format::time(p.stats.stdev_ns),
            min: format::time(p.stats.min_ns),
            max: format::time(p.stats.max_ns),
            iterations: format::count(p.stats.iterations as f64),
        });
    }
    let (delta, delta_class) = match (s.delta_vs_baseline_pct, &s.baseline) {
        (Some(d), _) => (format::delta(d), if d > 0.0 { "slower" } else { "faster" }.to_string()),
        (None, Some(b)) if b == &s.name => ("baseline".into(), "baseline".into()),
        _ => (String::new(), String::new()),
    };
    let backends: Vec<&str> = {
        let mut b: Vec<&str> = s.phases.iter().map(|p| p.backend.as_str()).collect();
        b.sort();
        b.dedup();
        b
    };
    let dispatch = if backends.contains(&"liboqs") && r.run.liboqs_dist_build { "liboqs OQS_DIST_BUILD dispatch · " } else { "" };
    let samples = r.run_spread(&format!("{} [{}]", s.name, s.stack));
    let env = format!(
        "{dispatch}stack {} ({}) · {} {} · CPU extensions {} · CPU steal {:.2}%{samples} · run {}",
        s.stack,
        backends.join(" + "),
        r.run.host.cpu_model,
        r.run.host.arch,
        if r.run.host.cpu_extensions.is_empty() { "none listed".to_string() } else { r.run.host.cpu_extensions.join(" ") },
        steal,
        r.run.tool_commit
    );
    Row {
        host: run.label.clone(),
        key: format!("{}|{}|{}", run.json_href, s.name, s.stack),
        measured: true,
        mean_ns: s.composed.mean_ns,
        mean: format::time(s.composed.mean_ns),
        median: format::time(s.composed.median_ns),
        p95: format::time(s.composed.p95_ns),
        p99: format::time(s.composed.p99_ns),
        tail: format::ratio(s.tail),
        ops: format::count(s.ops_per_sec),
        wire: s.wire_bytes.map(format::bytes).unwrap_or_default(),
        median_ci: s.composed.median_ci95_ns.map_or(String::new(), |(a, b)| format!("{} – {}", format::time(a), format::time(b))),
        delta,
        delta_ci: s.delta_ci95_pct.map_or(String::new(), |(a, b)| format!("{} to {}", format::delta(a), format::delta(b))),
        delta_class,
        public_key: s.public_key_bytes.map(format::bytes).unwrap_or_default(),
        signature: s.signature_bytes.map(format::bytes).unwrap_or_default(),
        family: s.family.clone().unwrap_or_default(),
        bar: Value::from_safe_string(svg::stacked_bar(&format!("{} phases on {}", s.name, run.label), &segments)),
        phases,
        env,
        note: notes.join("; "),
        handshakes: handshake_rows(r, &s.name),
    }
}

fn raw_rows(runs: &[Run]) -> Vec<RawRow> {
    let mut rows = Vec::new();
    for run in runs {
        let raw: Vec<&Suite> = run.results.suites.iter().filter(|s| s.kind == TrackKind::Raw).collect();
        let mut stacks: Vec<&str> = Vec::new();
        for s in &raw {
            if !stacks.contains(&s.stack.as_str()) {
                stacks.push(&s.stack);
            }
        }
        for stack in stacks {
            let find = |prefix: &str| raw.iter().find(|s| s.stack == stack && s.name.starts_with(prefix));
            if let (Some(k), Some(e)) = (find("ML-KEM"), find("P-256")) {
                rows.push(RawRow {
                    host: run.label.clone(),
                    stack: stack.into(),
                    mlkem: format::time(k.composed.median_ns),
                    ecdh: format::time(e.composed.median_ns),
                    ratio: format::ratio(k.composed.median_ns / e.composed.median_ns),
                });
            }
        }
    }
    rows
}
