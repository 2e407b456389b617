//! The overview page's context: a card per suite, a row per host, the phases behind each figure.

use super::svg::{self, Segment};
use super::Run;
use crate::algorithm::Operation;
use crate::results::{PerHandshake, Phase, Results, SuiteResult, SuiteResult as Suite};
use crate::suite::TrackKind;
use crate::units as format;
use minijinja::Value;
use serde::Serialize;

#[derive(Serialize)]
pub(crate) struct Body {
    /// The answer, one table per run shown (one per machine unless `--all`).
    pub(crate) answers: Vec<super::answer::Table>,
    pub(crate) sections: Vec<Section>,
    pub(crate) signatures: Vec<Card>,
    pub(crate) records: Vec<Card>,
    pub(crate) raw: Vec<RawRow>,
    /// Seed 000's table rebuilt from these runs, and the seed's own figures as a reference row.
    pub(crate) seed: Vec<SeedRow>,
    pub(crate) seed_reference: Option<SeedRow>,
    pub(crate) seed_source: String,
    pub(crate) failures: Vec<String>,
    pub(crate) warnings: Vec<RunWarnings>,
    /// `pqprof capacity` sections, one per run that has one.
    pub(crate) auth: Vec<super::auth::View>,
    /// Resumed handshakes and two key shares beside full ones, one per run that has them.
    pub(crate) modes: Vec<super::modes::View>,
    pub(crate) capacity: Vec<super::capacity::View>,
    /// `pqprof memory` sections, one per run that has one.
    pub(crate) memory: Vec<super::memory::View>,
    /// `pqprof network` sections, one per run that has one.
    pub(crate) network: Vec<super::network::View>,
    /// Instructions per phase across architectures (render::arch), set by the caller from every
    /// machine's newest counted run.
    pub(crate) architectures: Option<super::arch::View>,
}

#[derive(Serialize)]
pub(crate) struct Section {
    pub(crate) title: String,
    pub(crate) cards: Vec<Card>,
}

#[derive(Serialize)]
pub(crate) struct Card {
    pub(crate) name: String,
    pub(crate) subtitle: String,
    pub(crate) rows: Vec<Row>,
}

/// One host's figures for a suite.
#[derive(Serialize, Default)]
pub(crate) struct Row {
    pub(crate) host: String,
    /// Anchors of this row's real handshakes and in-situ views (the answer table links to them).
    pub(crate) handshakes_id: String,
    pub(crate) insitu_id: String,
    pub key: String,
    pub(crate) measured: bool,
    pub(crate) mean_ns: f64,
    pub(crate) mean: String,
    pub(crate) median: String,
    pub(crate) p95: String,
    pub(crate) p99: String,
    pub(crate) tail: String,
    pub(crate) ops: String,
    pub(crate) wire: String,
    pub(crate) median_ci: String,
    pub(crate) delta: String,
    pub(crate) delta_ci: String,
    pub(crate) delta_class: String,
    /// The change against the baseline counted in instructions, where both were counted.
    pub(crate) instructions_delta: String,
    /// Composed instructions per handshake, where every phase was counted.
    pub(crate) instructions: String,
    pub(crate) public_key: String,
    pub(crate) signature: String,
    pub(crate) family: String,
    pub(crate) bar: Value,
    pub(crate) phases: Vec<PhaseRow>,
    pub(crate) env: String,
    pub(crate) note: String,
    pub(crate) handshakes: Vec<HandshakeRow>,
    /// Full-handshake cards: where each real stack's handshake time goes, timed in situ.
    pub(crate) insitu: Vec<InSituView>,
}

/// One instrumented real handshake: its time split into the crypto calls, by kind, and the rest.
#[derive(Serialize)]
pub(crate) struct InSituView {
    pub(crate) stack: String,
    pub(crate) total: String,
    pub(crate) crypto: String,
    pub(crate) remainder: String,
    pub(crate) bar: Value,
    pub(crate) rows: Vec<InSituRow>,
    /// The composed full-handshake crypto of the same library against the in-situ crypto.
    pub(crate) explained: String,
    pub(crate) connections: usize,
    /// Key-exchange and signature calls per call, in situ against the phase loop.
    pub(crate) per_call: Vec<PerCallRow>,
}

/// A median's 95% interval as the per-call table prints it beneath the median: "5.7–5.9 µs".
fn interval((lo, hi): (f64, f64)) -> String {
    let hi = format::time(hi);
    match hi.split_once(' ') {
        // One unit for both ends where they share it.
        Some((_, unit)) if format::time(lo).ends_with(&format!(" {unit}")) => {
            format!(
                "{}–{hi}",
                format::time(lo).trim_end_matches(&format!(" {unit}"))
            )
        }
        _ => format!("{}–{hi}", format::time(lo)),
    }
}

#[derive(Serialize)]
pub(crate) struct PerCallRow {
    pub(crate) label: String,
    pub(crate) algorithm: String,
    pub(crate) insitu: String,
    pub(crate) phase_loop: String,
    pub(crate) ratio: String,
    /// The in-situ median's 95% interval ("5.7–5.9 µs"; empty without one).
    pub(crate) insitu_ci: String,
    /// The same calls timed in a handshake's state, and in situ over them ("–" where not timed so),
    /// with the median's interval where it is one phase's.
    pub(crate) situ: String,
    pub(crate) situ_ci: String,
    pub(crate) situ_ratio: String,
}

#[derive(Serialize)]
pub(crate) struct InSituRow {
    pub(crate) label: String,
    pub(crate) client: String,
    pub(crate) server: String,
    pub(crate) calls: String,
}

/// A real loopback handshake of this suite, beside the composed figure.
#[derive(Serialize)]
pub(crate) struct HandshakeRow {
    pub(crate) stack: String,
    pub(crate) median: String,
    /// The median's 95% half-width and why its rounds stopped.
    pub(crate) precision: String,
    pub(crate) rsd: String,
    pub(crate) ready: String,
    pub(crate) vs_baseline: String,
    pub(crate) measured_delta: String,
    pub(crate) composed_delta: String,
    pub(crate) composed_stack: String,
    pub(crate) insitu_crypto_delta: String,
    pub(crate) remainder_delta: String,
    pub(crate) overhead: String,
    pub(crate) bytes: String,
    pub(crate) client_cpu: String,
    pub(crate) server_cpu: String,
    pub(crate) client_mem: String,
    pub(crate) server_mem: String,
    pub(crate) evidence: String,
}

/// The real handshakes of a suite, a row each; a stack with rows of several chains names each row's
/// chain ("rustls · ML-DSA-65"), so the page's headline tells them apart.
fn handshake_rows(r: &Results, suite: &str) -> Vec<HandshakeRow> {
    let Some(h) = &r.handshakes else {
        return Vec::new();
    };
    let scenarios: Vec<_> = h
        .scenarios
        .iter()
        .filter(|s| s.suite == suite && !s.instrumented)
        .collect();
    let mut rows = rows_of(r, h, &scenarios);
    for (row, s) in rows.iter_mut().zip(&scenarios) {
        let same_stack = scenarios.iter().filter(|x| x.stack == s.stack).count();
        if let (true, Some(a)) = (same_stack > 1, &s.auth) {
            row.stack = format!("{} · {}", row.stack, a.name);
        }
    }
    rows
}

fn rows_of(
    r: &Results,
    h: &crate::results::Handshakes,
    scenarios: &[&crate::results::Scenario],
) -> Vec<HandshakeRow> {
    scenarios
        .iter()
        .map(|s| {
            let instrumented = h.scenarios.iter().find(|x| x.suite == s.suite && x.stack == s.stack && x.instrumented).and_then(|x| x.insitu.as_ref());
            let mem = |m: &PerHandshake| {
                format!("{} allocs, {}", format::count(m.allocs()), format::bytes(m.bytes() as usize))
            };
            let e = &s.evidence;
            let shares = match (e.client_share, e.server_share) {
                (Some(c), Some(v)) => format!(" · key_share {} / {} B", format::count(c.1 as f64), format::count(v.1 as f64)),
                _ => String::new(),
            };
            HandshakeRow {
                stack: r.stack_label(s.stack.name()),
                median: format::time(s.median_ns),
                precision: crate::figures::precision_label(s.precision.as_ref()),
                rsd: format!("{:.1}%", s.rsd_pct),
                ready: format::time(s.ready_median_ns),
                vs_baseline: s.vs_baseline_ratio.map_or("baseline".into(), format::ratio),
                measured_delta: s.measured_delta_ns.map(format::signed_time).unwrap_or_default(),
                composed_delta: s.composed_delta_ns.map(format::signed_time).unwrap_or_default(),
                composed_stack: if s.composed_stack.is_empty() { "default".into() } else { s.composed_stack.clone() },
                insitu_crypto_delta: instrumented.and_then(|i| i.crypto_delta_ns).map(format::signed_time).unwrap_or_else(|| "–".into()),
                remainder_delta: instrumented.and_then(|i| i.remainder_delta_ns).map(format::signed_time).unwrap_or_else(|| "–".into()),
                overhead: match (&s.insitu_overhead_paired, s.insitu_overhead_pct, s.insitu_overhead_est_pct) {
                    (Some(p), Some(m), Some(e)) => {
                        // The median of the paired block differences where stored, else their mean.
                        let pct = |o: &crate::results::PairedOverhead| o.median.as_ref().map_or((o.pct, o.pct_hi95), |m| (m.pct, m.pct_hi95));
                        let (mem, mem_hi) = pct(p);
                        format!(
                            "{} paired in memory (95% ≤ {}){}; two loopback medians {}, calls × cost {}",
                            format::delta(mem),
                            format::delta(mem_hi),
                            s.insitu_overhead_paired_loopback.as_ref().map_or(String::new(), |l| {
                                let (d, hi) = pct(l);
                                let mean = if l.median.is_some() { format!("; mean {}", format::delta(l.pct)) } else { String::new() };
                                format!(", {} paired on loopback (95% ≤ {}{mean})", format::delta(d), format::delta(hi))
                            }),
                            format::delta(m),
                            format::delta(e)
                        )
                    }
                    (None, Some(m), Some(e)) => format!("{} (calls × cost {})", format::delta(m), format::delta(e)),
                    (None, Some(m), None) => format::delta(m),
                    _ => "–".into(),
                },
                bytes: format!("{} / {}", format::bytes(s.client_to_server_bytes as usize), format::bytes(s.server_to_client_bytes as usize)),
                client_cpu: format::time(s.client_cpu_ns),
                // Over every connection; where the server's CPU was read every sample, the mean
                // over the samples' with its interval, and what a core of it serves a second.
                server_cpu: match crate::figures::server_cpu::of(s) {
                    Some(c) => format!(
                        "{} ({}{} over {} samples; {}/core·s)",
                        format::time(s.server_cpu_ns),
                        format::time(c.per_handshake_ns),
                        c.half95_ns.map_or(String::new(), |h| format!(" ±{}", format::time(h))),
                        c.samples,
                        format::count(c.per_core_second().0)
                    ),
                    None => format::time(s.server_cpu_ns),
                },
                client_mem: mem(&s.client_mem),
                server_mem: mem(&s.server_mem),
                evidence: format!("{}{}{}", [e.version.as_str(), &e.group, &e.cipher, &e.cert_key, if e.resumed { "resumed" } else { "full handshake" }].iter().filter(|x| !x.is_empty()).copied().collect::<Vec<_>>().join(" · "), shares, e.quic.as_ref().map_or(String::new(), quic_flights)),
            }
        })
        .collect()
}

/// A QUIC handshake's first flights, and whether the server's was over the anti-amplification
/// budget (RFC 9000 section 8.1).
fn quic_flights(q: &crate::results::QuicEvidence) -> String {
    format!(
        " · Initial {} datagrams, {} B · server {} datagrams, {} B{}",
        q.client_initial_datagrams,
        format::count(q.client_initial_bytes as f64),
        q.server_datagrams,
        format::count(q.server_bytes as f64),
        if q.token {
            ", a token validated the address".to_string()
        } else if q.amplification_limited() {
            format!(
                ", over the {} B budget: the rest waits a round trip",
                format::count(q.amplification_budget() as f64)
            )
        } else {
            String::new()
        }
    )
}

/// The in-situ views of the real handshakes of the kex group a full-handshake suite is about.
fn insitu_views(r: &Results, full: &SuiteResult) -> Vec<InSituView> {
    let Some(h) = &r.handshakes else {
        return Vec::new();
    };
    let group = full
        .name
        .trim_end_matches(" full handshake")
        .trim_end_matches(" full key exchange");
    h.scenarios
        .iter()
        .filter(|s| s.suite == group && s.instrumented)
        .filter_map(|s| {
            let i = s.insitu.as_ref()?;
            let mut segments = Vec::new();
            let mut rows = Vec::new();
            for (k, label) in i.labels.iter().enumerate() {
                let both = i.client_ns[k] + i.server_ns[k];
                let calls = i.client_calls.get(k).copied().unwrap_or(0.0)
                    + i.server_calls.get(k).copied().unwrap_or(0.0);
                if both <= 0.0 && calls <= 0.0 {
                    continue;
                }
                segments.push(svg::Segment {
                    label: label.clone(),
                    value_ns: both,
                    share_pct: both / i.total_ns * 100.0,
                });
                rows.push(InSituRow {
                    label: label.clone(),
                    client: format::time(i.client_ns[k]),
                    server: format::time(i.server_ns[k]),
                    calls: format!(
                        "{:.1} + {:.1}",
                        i.client_calls.get(k).copied().unwrap_or(0.0),
                        i.server_calls.get(k).copied().unwrap_or(0.0)
                    ),
                });
            }
            segments.push(svg::Segment {
                label: "remainder: I/O, system calls, protocol logic, scheduling".into(),
                value_ns: i.remainder_ns,
                share_pct: i.remainder_ns / i.total_ns * 100.0,
            });
            let composed = r
                .suite(&full.name, &s.composed_stack)
                .map(|c| c.composed.mean_ns);
            Some(InSituView {
                stack: s.stack.name().into(),
                total: format::time(i.total_ns),
                crypto: format::time(i.crypto_ns),
                remainder: format::time(i.remainder_ns),
                bar: Value::from_safe_string(svg::stacked_figure(
                    &format!("{} {} handshake, timed in situ", s.stack.name(), s.suite),
                    &segments,
                )),
                rows,
                explained: composed.map_or(String::new(), |c| {
                    format!(
                        "composed from {}'s phases: {} of crypto, {:.0}% of the {} timed in situ",
                        s.composed_stack,
                        format::time(c),
                        c / i.crypto_ns * 100.0,
                        format::time(i.crypto_ns)
                    )
                }),
                connections: i.connections.len(),
                per_call: crate::incontext::per_call(r, s)
                    .into_iter()
                    .map(|p| PerCallRow {
                        ratio: format::ratio(p.ratio()),
                        algorithm: p.implementation(),
                        insitu: format!("{} ({} calls)", format::time(p.insitu_ns), p.values),
                        insitu_ci: p.insitu_ci95_ns.map_or(String::new(), interval),
                        phase_loop: format::time(p.loop_ns),
                        situ: p.situ_ns.map_or("–".into(), format::time),
                        situ_ci: p.situ_ci95_ns.map_or(String::new(), interval),
                        situ_ratio: p
                            .situ_ns
                            .map_or("–".into(), |_| format::ratio(p.composed_ratio())),
                        label: p.label,
                    })
                    .collect(),
            })
        })
        .collect()
}

#[derive(Serialize)]
pub(crate) struct PhaseRow {
    pub(crate) label: String,
    pub(crate) backend: String,
    pub(crate) count: u32,
    pub(crate) count_label: String,
    pub(crate) contribution_ns: f64,
    pub(crate) contribution: String,
    pub(crate) share_pct: f64,
    pub(crate) mean: String,
    pub(crate) median: String,
    /// The median's 95% half-width and why its processes stopped.
    pub(crate) precision: String,
    pub(crate) p95: String,
    pub(crate) p99: String,
    pub(crate) stdev: String,
    pub(crate) min: String,
    pub(crate) max: String,
    pub(crate) iterations: String,
    /// Instructions per call under valgrind, where counted.
    pub(crate) instructions: String,
}

/// One stack in seed 000's shape: TLS (or SSH) classical vs hybrid, and the raw round trips.
#[derive(Serialize)]
pub(crate) struct SeedRow {
    pub(crate) host: String,
    pub(crate) stack: String,
    pub(crate) protocol: String,
    pub(crate) classical: String,
    pub(crate) hybrid: String,
    pub(crate) ratio: String,
    pub(crate) mlkem: String,
    pub(crate) ecdh: String,
    pub(crate) raw_ratio: String,
    pub(crate) raw_how: String,
    pub(crate) allocs: String,
}

fn seed_rows(runs: &[&Run]) -> Vec<SeedRow> {
    let mut rows = Vec::new();
    for run in runs {
        let r = &run.results;
        let Some(h) = &r.handshakes else { continue };
        let mut stacks: Vec<&crate::results::RealStack> = Vec::new();
        for s in h.scenarios.iter().filter(|s| !s.instrumented) {
            if !stacks.contains(&&s.stack) {
                stacks.push(&s.stack);
            }
        }
        for stack in stacks {
            let plain = || {
                h.scenarios
                    .iter()
                    .filter(|s| &s.stack == stack && !s.instrumented)
            };
            // Seed 000's pair: the hybrid of ML-KEM-768 and X25519 against its classical baseline.
            let hybrid = |name: &str| {
                let n = name.to_ascii_lowercase();
                n.contains("mlkem768") && n.contains("x25519")
            };
            let Some(y) = plain().find(|s| hybrid(&s.suite) && s.measured_delta_ns.is_some())
            else {
                continue;
            };
            // The scenario the hybrid names as its baseline; files before `against` only say it
            // through the difference of the medians (a paired difference is not that).
            let Some(c) = plain().find(|s| match &y.against {
                Some(a) => s.is(a, stack, false),
                None => {
                    s.protocol == y.protocol
                        && s.vs_baseline_ratio.is_none()
                        && y.measured_delta_ns.is_some_and(|d| {
                            crate::stats::agrees(s.median_ns, y.median_ns - d, 1e-6)
                        })
                }
            }) else {
                continue;
            };
            let proto = crate::suite::protocol_label(&y.protocol);
            // Raw round trips: Go's are timed in Go as the seed did; the others are composed from the
            // library the stack runs.
            let go_raw = |prefix: &str| {
                r.go.as_ref()
                    .and_then(|g| g.raw.iter().find(|x| x.name.starts_with(prefix)))
                    .map(|x| x.median_ns)
            };
            let composed = |prefix: &str| {
                r.suites
                    .iter()
                    .find(|s| {
                        s.kind == TrackKind::Raw
                            && s.stack == c.composed_stack
                            && s.name.starts_with(prefix)
                    })
                    .map(|s| s.composed.median_ns)
            };
            let (mlkem, ecdh, how) =
                if r.go.is_some() && stack.name() == crate::results::GoPeer::STACK {
                    (go_raw("ML-KEM"), go_raw("P-256"), "timed in Go".to_string())
                } else {
                    (
                        composed("ML-KEM"),
                        composed("P-256"),
                        format!("composed ({})", c.composed_stack),
                    )
                };
            let t = |x: Option<f64>| x.map_or("–".into(), format::time);
            rows.push(SeedRow {
                host: run.label.clone(),
                stack: stack.name().into(),
                protocol: proto,
                classical: format::time(c.median_ns),
                hybrid: format::time(y.median_ns),
                ratio: format::ratio(y.median_ns / c.median_ns),
                mlkem: t(mlkem),
                ecdh: t(ecdh),
                raw_ratio: match (mlkem, ecdh) {
                    (Some(a), Some(b)) => format::ratio(a / b),
                    _ => "–".into(),
                },
                raw_how: if mlkem.is_some() || ecdh.is_some() {
                    how
                } else {
                    "–".into()
                },
                allocs: format!(
                    "{} B / {} → {} B / {}",
                    format::count(c.client_mem.bytes()),
                    format::count(c.client_mem.allocs()),
                    format::count(y.client_mem.bytes()),
                    format::count(y.client_mem.allocs())
                ),
            });
        }
    }
    rows
}

fn seed_reference() -> (Option<SeedRow>, String) {
    let Ok(s) = crate::references::seed000() else {
        return (None, String::new());
    };
    let row = SeedRow {
        host: format!("seed 000: {}", s.machine),
        stack: format!("go ({})", s.runtime),
        protocol: "TLS 1.3".into(),
        classical: format::time(s.tls_classical_ms * 1e6),
        hybrid: format::time(s.tls_hybrid_ms * 1e6),
        ratio: format::ratio(s.tls_hybrid_ms / s.tls_classical_ms),
        mlkem: format::time(s.raw_mlkem768_ms * 1e6),
        ecdh: format::time(s.raw_ecdh_p256_ms * 1e6),
        raw_ratio: format::ratio(s.raw_mlkem768_ms / s.raw_ecdh_p256_ms),
        raw_how: "timed in Go (published)".into(),
        allocs: format!(
            "{} B / {} → {} B / {}",
            format::count(s.client_bytes_classical),
            format::count(s.client_allocs_classical),
            format::count(s.client_bytes_hybrid),
            format::count(s.client_allocs_hybrid)
        ),
    };
    (Some(row), format!("{}; {}", s.source, s.statistic))
}

#[derive(Serialize)]
pub(crate) struct RawRow {
    pub(crate) host: String,
    pub(crate) stack: String,
    pub(crate) mlkem: String,
    pub(crate) ecdh: String,
    pub(crate) ratio: String,
}

/// One run's warnings, grouped by kind (each kind's heaviest few first, at most `REST_SHOWN` of the
/// rest behind an expander: the JSON holds every one).
#[derive(Serialize)]
pub(crate) struct RunWarnings {
    pub(crate) host: String,
    pub(crate) machine_id: String,
    pub(crate) count: usize,
    pub(crate) groups: Vec<crate::results::WarningGroup>,
}

/// Warnings of a kind shown first, and behind the expander.
const TOP_SHOWN: usize = 3;
const REST_SHOWN: usize = 20;

fn warnings(run: &Run) -> RunWarnings {
    let r = &run.results;
    let all = r
        .warnings
        .iter()
        .chain(r.handshakes.iter().flat_map(|h| &h.notes))
        .chain(r.capacity.iter().flat_map(|c| &c.notes))
        .chain(r.network.iter().flat_map(|n| &n.notes));
    // The phases the answer table's composed figures are made of: their warnings first.
    let answered: Vec<crate::results::PhaseId> = r
        .suites
        .iter()
        .filter(|s| super::answer::answered_suite(&s.name))
        .flat_map(|s| &s.phases)
        .map(|p| p.id())
        .collect();
    let mut groups = crate::results::group_warnings_by(all, TOP_SHOWN, |w| {
        w.phase().is_some_and(|p| answered.contains(p))
    });
    for g in &mut groups {
        let hidden = g.rest.len().saturating_sub(REST_SHOWN);
        g.rest.truncate(REST_SHOWN);
        if hidden > 0 {
            g.rest.push(format!(
                "… and {hidden} more of this kind in the run's JSON"
            ));
        }
    }
    RunWarnings {
        host: run.label.clone(),
        machine_id: run.anchor.clone(),
        count: groups.iter().map(|g| g.count).sum(),
        groups,
    }
}

pub(crate) fn build(runs: &[&Run]) -> Body {
    let mut sections = Vec::new();
    for (kind, protocol, title) in [
        (TrackKind::Kex, "tls13", "TLS 1.3 key exchange"),
        (TrackKind::Kex, "ssh", "SSH key exchange"),
        (
            TrackKind::Full,
            "tls13",
            "TLS 1.3 full handshake: every cryptographic phase",
        ),
        (
            TrackKind::Resumed,
            "tls13",
            "TLS 1.3 resumed handshake: every cryptographic phase",
        ),
        (
            TrackKind::Full,
            "ssh",
            "SSH key exchange with host authentication: every cryptographic phase",
        ),
    ] {
        let cards = cards(runs, |s| s.kind == kind && s.protocol == protocol);
        if !cards.is_empty() {
            sections.push(Section {
                title: title.into(),
                cards,
            });
        }
    }
    let failures = runs
        .iter()
        .flat_map(|r| {
            r.results.failures.iter().map(move |f| {
                format!(
                    "{}: {} {} {}: {}",
                    r.label, f.backend, f.algorithm, f.operation, f.error
                )
            })
        })
        .collect();
    let (seed_reference, seed_source) = seed_reference();
    Body {
        answers: super::answer::build(runs),
        sections,
        signatures: cards(runs, |s| s.kind == TrackKind::Signature),
        records: cards(runs, |s| s.kind == TrackKind::Record),
        raw: raw_rows(runs),
        seed: seed_rows(runs),
        seed_reference,
        seed_source,
        failures,
        warnings: runs
            .iter()
            .map(|r| warnings(r))
            .filter(|w| w.count > 0)
            .collect(),
        auth: super::auth::build(runs),
        modes: super::modes::build(runs),
        capacity: super::capacity::build(runs),
        memory: super::memory::build(runs),
        network: super::network::build(runs),
        architectures: None,
    }
}

/// The suite shown for a run: the default stack, else the first stack that composed it.
pub(crate) fn shown<'a>(r: &'a Results, name: &str) -> Option<&'a Suite> {
    let all = || r.suites.iter().filter(|s| s.name == name);
    all()
        .find(|s| s.stack == "default")
        .or_else(|| all().next())
}

fn cards(runs: &[&Run], pick: impl Fn(&Suite) -> bool) -> Vec<Card> {
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
                Some(s) if s.baseline.as_deref() == Some(name.as_str()) => {
                    "classical baseline".to_string()
                }
                Some(Suite {
                    baseline: Some(b), ..
                }) => format!("vs {b}"),
                Some(s) if s.kind == TrackKind::Record => s
                    .payload_bytes
                    .map_or(String::new(), |p| format!("{} payload", format::bytes(p))),
                Some(s) => s.family.clone().unwrap_or_default(),
                None => String::new(),
            };
            let rows = runs.iter().map(|run| row(run, name)).collect();
            Card {
                name: name.clone(),
                subtitle,
                rows,
            }
        })
        .collect()
}

fn phase_of<'a>(
    r: &'a Results,
    backend: &str,
    algorithm: &str,
    op: Operation,
) -> Option<&'a Phase> {
    r.phase(&crate::results::PhaseId::handshake(backend, algorithm, op))
}

fn count_label(count: u32, kind: TrackKind) -> String {
    match (count, kind) {
        (0, _) => "not counted: certificate keys are long-lived".into(),
        (1, _) => String::new(),
        (2, TrackKind::Kex) => "× 2 — client and server".into(),
        (n, _) => format!("× {n}"),
    }
}

/// A suite's phase rows, its bar's segments, the worst CPU steal among its phases and the notes
/// its backends need.
struct Phases {
    phases: Vec<PhaseRow>,
    segments: Vec<Segment>,
    steal: f64,
    notes: Vec<String>,
}

fn phase_rows(r: &Results, s: &Suite) -> Phases {
    let algorithms: Vec<&str> = s.phases.iter().map(|p| p.algorithm.as_str()).collect();
    let several = algorithms.iter().any(|a| *a != algorithms[0]);
    let mut phases = Vec::new();
    let mut segments = Vec::new();
    let mut steal: f64 = 0.0;
    let mut notes = Vec::new();
    for sp in &s.phases {
        let Some(p) = phase_of(r, &sp.backend, &sp.algorithm, sp.operation) else {
            continue;
        };
        let contribution = f64::from(sp.count) * p.stats.mean_ns;
        let share = contribution / s.composed.mean_ns * 100.0;
        let label = if several && sp.operation.kind() != crate::algorithm::Kind::Kem {
            format!("{} ({})", sp.operation.label(), sp.algorithm)
        } else {
            sp.operation.label().to_string()
        };
        steal = steal.max(p.steal_pct.unwrap_or(0.0));
        if sp.backend == "liboqs"
            && sp.algorithm.starts_with("SLH-DSA")
            && !notes.iter().any(|n: &String| n.contains("SPHINCS"))
        {
            notes.push(
                "liboqs 0.13 runs SPHINCS+ (round 3.1) under this name, not FIPS 205 SLH-DSA"
                    .to_string(),
            );
        }
        if sp.count > 0 {
            segments.push(Segment {
                label: label.clone(),
                value_ns: contribution,
                share_pct: share,
            });
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
            precision: crate::figures::precision_label(p.precision.as_ref()),
            p95: format::time(p.stats.p95_ns),
            p99: format::time(p.stats.p99_ns),
            stdev: format::time(p.stats.stdev_ns),
            min: format::time(p.stats.min_ns),
            max: format::time(p.stats.max_ns),
            iterations: format::count(p.stats.iterations as f64),
            instructions: p
                .instructions
                .as_ref()
                .and_then(|i| i.ir())
                .map_or("–".into(), format::count),
        });
    }
    Phases {
        phases,
        segments,
        steal,
        notes,
    }
}

/// The same change counted in instructions (run --counter instructions), beside the wall-time one.
fn instructions_delta(r: &Results, s: &Suite) -> String {
    match (&s.baseline, s.instructions) {
        (Some(b), Some(mine)) if b != &s.name => r
            .suites
            .iter()
            .find(|x| &x.name == b && x.stack == s.stack)
            .and_then(|x| x.instructions)
            .map_or(String::new(), |base| {
                format!(
                    "{} in instructions",
                    format::delta((mine / base - 1.0) * 100.0)
                )
            }),
        _ => String::new(),
    }
}

/// The line under a suite's figures: stack, backends, CPU, extensions, steal, spread and commit.
fn env_line(r: &Results, s: &Suite, steal: f64) -> String {
    let backends: Vec<&str> = {
        let mut b: Vec<&str> = s.phases.iter().map(|p| p.backend.as_str()).collect();
        b.sort();
        b.dedup();
        b
    };
    let dispatch = if backends.contains(&"liboqs") && r.run.liboqs_dist_build {
        "liboqs OQS_DIST_BUILD dispatch · "
    } else {
        ""
    };
    let samples = r.run_spread(&format!("{} [{}]", s.name, s.stack));
    format!(
        "{dispatch}stack {} ({}) · {} {} · CPU extensions {} · CPU steal {:.2}%{samples} · run {}",
        s.stack,
        backends.join(" + "),
        r.run.host.cpu_model,
        r.run.host.arch,
        if r.run.host.cpu_extensions.is_empty() {
            "none listed".to_string()
        } else {
            r.run.host.cpu_extensions.join(" ")
        },
        steal,
        r.run.tool_commit
    )
}

fn row(run: &Run, name: &str) -> Row {
    let r = &run.results;
    let Some(s) = shown(r, name) else {
        return Row {
            host: run.label.clone(),
            bar: Value::from(""),
            note: "not measured in this run".into(),
            ..Row::default()
        };
    };
    let Phases {
        phases,
        segments,
        steal,
        notes,
    } = phase_rows(r, s);
    let instructions_delta = instructions_delta(r, s);
    let (delta, delta_class) = match (s.delta_vs_baseline_pct, &s.baseline) {
        (Some(d), _) => (
            format::delta(d),
            if d > 0.0 { "slower" } else { "faster" }.to_string(),
        ),
        (None, Some(b)) if b == &s.name => ("baseline".into(), "baseline".into()),
        _ => (String::new(), String::new()),
    };
    let env = env_line(r, s, steal);
    let machine_id = run.anchor.clone();
    let group = s
        .name
        .trim_end_matches(" full handshake")
        .trim_end_matches(" full key exchange");
    Row {
        host: run.label.clone(),
        handshakes_id: super::answer::handshakes_id(&machine_id, &s.name),
        insitu_id: super::answer::insitu_id(&machine_id, group),
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
        median_ci: s.composed.median_ci95_ns.map_or(String::new(), |(a, b)| {
            format!("{} – {}", format::time(a), format::time(b))
        }),
        delta,
        delta_ci: s.delta_ci95_pct.map_or(String::new(), |(a, b)| {
            format!("{} to {}", format::delta(a), format::delta(b))
        }),
        delta_class,
        instructions_delta,
        instructions: s.instructions.map_or(String::new(), |i| {
            format!("{} instructions", format::count(i))
        }),
        public_key: s.public_key_bytes.map(format::bytes).unwrap_or_default(),
        signature: s.signature_bytes.map(format::bytes).unwrap_or_default(),
        family: s.family.clone().unwrap_or_default(),
        bar: Value::from_safe_string(svg::stacked_figure(
            &format!("{} phases on {}", s.name, run.label),
            &segments,
        )),
        phases,
        env,
        note: notes.join("; "),
        handshakes: handshake_rows(r, &s.name),
        insitu: if s.kind == TrackKind::Full {
            insitu_views(r, s)
        } else {
            Vec::new()
        },
    }
}

fn raw_rows(runs: &[&Run]) -> Vec<RawRow> {
    let mut rows = Vec::new();
    for run in runs {
        let raw: Vec<&Suite> = run
            .results
            .suites
            .iter()
            .filter(|s| s.kind == TrackKind::Raw)
            .collect();
        let mut stacks: Vec<&str> = Vec::new();
        for s in &raw {
            if !stacks.contains(&s.stack.as_str()) {
                stacks.push(&s.stack);
            }
        }
        for stack in stacks {
            let find = |prefix: &str| {
                raw.iter()
                    .find(|s| s.stack == stack && s.name.starts_with(prefix))
            };
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

#[cfg(test)]
mod tests {
    #[test]
    fn an_interval_states_its_unit_once_where_both_ends_share_it() {
        assert_eq!(super::interval((5_700.0, 5_900.0)), "5.7–5.9 µs");
        assert_eq!(super::interval((900.0, 1_100.0)), "900 ns–1.1 µs");
        assert_eq!(super::interval((84_100.0, 96_300.0)), "84.1–96.3 µs");
    }
}
