//! The questions the front page's answer table asks of a run (`QUESTIONS`), the changes each asks
//! about (`Change`: a protocol, a stack, the changed scenario and its baseline), and every figure
//! of a change (`Figures`), computed from the stored results. The page (`render::answer`), the
//! exporter (`export`) and the site's check (`render::verify`) all read them from here, so the
//! three cannot disagree.

use super::answer::{self as fig, Side, CERTIFICATE, CLASSICAL, HYBRID, POST_QUANTUM};
use super::handshake::PairedDelta;
use crate::results::{Results, Scenario};

/// A change a question asks about: on `stack`, scenario `group` against scenario `baseline`.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub(crate) protocol: String,
    pub stack: String,
    pub group: String,
    pub baseline: String,
}

impl Change {
    /// "data/FILE|protocol|stack|group|baseline": how a row names its run and change on the page.
    pub fn key(&self, json_href: &str) -> String {
        format!(
            "{json_href}|{}|{}|{}|{}",
            self.protocol, self.stack, self.group, self.baseline
        )
    }

    pub(crate) fn from_key(key: &str) -> Option<(String, Change)> {
        let mut p = key.splitn(5, '|');
        let file = p.next()?.to_string();
        Some((
            file,
            Change {
                protocol: p.next()?.into(),
                stack: p.next()?.into(),
                group: p.next()?.into(),
                baseline: p.next()?.into(),
            },
        ))
    }
}

pub struct Question {
    /// The table's group heading for the question's rows, per protocol ("{group} against {baseline}").
    pub(crate) title: &'static str,
    pub changes: fn(&Results) -> Vec<Change>,
}

/// The questions the front page answers, in the order their rows appear.
pub const QUESTIONS: &[Question] = &[
    Question {
        title: "key exchange",
        changes: hybrid_changes,
    },
    Question {
        title: "certificate chain",
        changes: certificate_changes,
    },
    Question {
        title: "post-quantum handshake",
        changes: post_quantum_changes,
    },
];

/// Whether a suite is one the answer's composed figures come from: a hybrid or its baseline.
pub(crate) fn answered_suite(name: &str) -> bool {
    HYBRID
        .iter()
        .any(|(_, group, baseline)| name == *group || name == *baseline)
}

/// The protocols a table groups its rows by, in order.
pub(crate) const PROTOCOLS: [&str; 2] = ["tls13", "ssh"];

fn plain<'a>(r: &'a Results, stack: &str, side: &str) -> Option<&'a Scenario> {
    fig::scenario(r, stack, Side::parse(side), false)
}

fn instrumented<'a>(r: &'a Results, stack: &str, side: &str) -> Option<&'a Scenario> {
    fig::scenario(r, stack, Side::parse(side), true)
}

/// On every TLS stack with both scenarios: `group + auth` against `baseline` (a side of its own).
fn auth_changes(r: &Results, (group, auth): (&str, &str), baseline: &str) -> Vec<Change> {
    let Some(h) = &r.handshakes else {
        return Vec::new();
    };
    let Some(baseline_auth) = r.baseline_auth() else {
        return Vec::new();
    };
    let changed = format!("{group} + {auth}");
    let baseline = format!("{baseline} + {baseline_auth}");
    let mut out: Vec<Change> = Vec::new();
    for s in h
        .scenarios
        .iter()
        .filter(|s| !s.instrumented && s.protocol == "tls13")
    {
        let stack = s.stack.name();
        if s.suite == group
            && s.auth_name() == Some(auth)
            && plain(r, stack, &baseline).is_some()
            && !out.iter().any(|c| c.stack == stack)
        {
            out.push(Change {
                protocol: "tls13".into(),
                stack: stack.into(),
                group: changed.clone(),
                baseline: baseline.clone(),
            });
        }
    }
    out
}

/// The ML-DSA-65 chain against the classical certificate, both on the hybrid group.
fn certificate_changes(r: &Results) -> Vec<Change> {
    auth_changes(r, CERTIFICATE, CERTIFICATE.0)
}

/// ML-KEM-768 with an ML-DSA-65 chain against X25519 with the classical certificate: the whole
/// migration of one handshake.
fn post_quantum_changes(r: &Results) -> Vec<Change> {
    auth_changes(r, POST_QUANTUM, CLASSICAL)
}

/// Every stack's hybrid against its baseline, where the run has both scenarios on that stack.
fn hybrid_changes(r: &Results) -> Vec<Change> {
    let Some(h) = &r.handshakes else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (protocol, group, baseline) in HYBRID {
        for s in h
            .scenarios
            .iter()
            .filter(|s| !s.instrumented && s.protocol == protocol && s.suite == group)
        {
            let stack = s.stack.name();
            if plain(r, stack, baseline).is_some()
                && !out
                    .iter()
                    .any(|c: &Change| c.stack == stack && c.group == group)
            {
                out.push(Change {
                    protocol: protocol.into(),
                    stack: stack.into(),
                    group: group.into(),
                    baseline: baseline.into(),
                });
            }
        }
    }
    out
}

/// The RTTs the network columns show (the default grid's), milliseconds.
pub(crate) const RTTS_MS: [f64; 2] = [5.6, 78.7];

/// Every figure of one change, unformatted: what a row shows and what `verify` reads back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    pub composed_ns: Option<f64>,
    /// Whether `composed_ns` is what the flows predict of the median connection
    /// (`figures::composition::predicted_delta`), or the sum of both sides' calls (suites without
    /// a flow, older files).
    pub(crate) composed_is_latency: bool,
    /// Whether the stack runs two segments of the flows at once (`Flow::overlap`).
    pub(crate) composed_overlap: bool,
    /// The difference of the sums of both sides' calls (the composed medians).
    pub(crate) composed_cpu_ns: Option<f64>,
    /// Where the real handshakes were timed in situ: the call whose cost in situ, beyond what the
    /// flow composes it at, sets the two scenarios furthest apart (`figures::answer::largest_gap`).
    pub gap: Option<fig::Gap>,
    /// Its 95% half-width from the phases that differ (`compose::delta_half95_ns`).
    pub composed_half95_ns: Option<f64>,
    /// The same difference in instructions, where the run counted them.
    pub(crate) composed_instructions: Option<f64>,
    pub(crate) composed_stack: String,
    pub real_ns: Option<f64>,
    pub real_interval: Option<PairedDelta>,
    /// The host's part of `real_ns` in the relative form (`figures::answer::host_part_ns`).
    pub(crate) real_host_half_ns: Option<f64>,
    pub(crate) explained_pct: Option<f64>,
    /// Whether both terms of the share are resolved (`figures::answer::explained_terms`); `None`
    /// where the records give no interval.
    pub explained_resolved: Option<bool>,
    pub capacity_ratio: Option<f64>,
    /// The server's own CPU per handshake, the changed scenario's against the baseline's over the
    /// rounds of the real handshakes both ran in (`figures::server_cpu::change`): the capacity a
    /// server that runs no harness (nginx, HAProxy, sshd) has in the handshake step.
    pub server_cpu: Option<crate::figures::server_cpu::CpuChange>,
    pub(crate) memory_bytes: Option<f64>,
    /// Bytes client to server and server to client, the changed scenario's and their change.
    pub(crate) wire: Option<(f64, f64)>,
    pub(crate) wire_delta: Option<(f64, f64)>,
    pub rtt_extra_ns: Vec<Option<f64>>,
    /// Their 95% intervals (`figures::answer::network_extra_interval_ns`).
    pub rtt_extra_interval_ns: Vec<Option<(f64, f64)>>,
}

/// Every figure of a change, computed from both of its scenarios (for a key-exchange row these are
/// what the producers stored against the same baseline, but the composed difference along the
/// flows, which the producers store as the paths' difference; a test holds them to both).
pub fn figures(r: &Results, c: &Change) -> Figures {
    super::memo::within(|| figures_of(r, c))
}

/// `figures`, computed.
fn figures_of(r: &Results, c: &Change) -> Figures {
    let s = plain(r, &c.stack, &c.group);
    let b = plain(r, &c.stack, &c.baseline);
    let i = instrumented(r, &c.stack, &c.group);
    let bi = instrumented(r, &c.stack, &c.baseline);
    let baseline_auth = r.baseline_auth();
    let sides = (Side::parse(&c.group), Side::parse(&c.baseline));
    let certificates = sides.0.auth.is_some() || sides.1.auth.is_some();
    // Both terms from the in-situ identity (mean connection = both sides' calls + the rest), so
    // a tail-heavy call (ML-DSA signing's rejection loop) weighs the same in each; a median of the
    // whole would set a mean of the parts against a median.
    let explained = i.zip(bi).and_then(|(i, bi)| {
        let (x, y) = (i.insitu.as_ref()?, bi.insitu.as_ref()?);
        fig::share_pct(
            x.crypto_ns - y.crypto_ns,
            (x.crypto_ns + x.remainder_ns) - (y.crypto_ns + y.remainder_ns),
        )
    });
    // Along the critical path where both scenarios' full handshakes have a flow
    // (suites/flights.toml): what the composition page composes for them (`composition::flow_of`,
    // `predicted_delta`, the bytes' own cost from the stack's size controls included), so that
    // the table and that page show one figure. Without flows, the key exchange's composed
    // suites: the sum of both sides' calls.
    let flows = s.zip(b).and_then(|(s, b)| {
        let (name_s, flow_s) = crate::figures::composition::flow_of(r, s)?;
        let (name_b, flow_b) = crate::figures::composition::flow_of(r, b)?;
        let suites = (
            r.suite(&name_s, &s.composed_stack)?,
            r.suite(&name_b, &b.composed_stack)?,
        );
        Some((suites, (flow_s, flow_b), (s, b)))
    });
    let suites = flows.map(|(suites, ..)| suites).or_else(|| {
        let s = s?;
        let suite = |side: &str| {
            r.suite(
                &fig::composed_suite(Side::parse(side), certificates, baseline_auth),
                &s.composed_stack,
            )
        };
        Some((suite(&c.group)?, suite(&c.baseline)?))
    });
    let composed_cpu = suites.map(|(a, b)| a.composed.median_ns - b.composed.median_ns);
    let composed_latency = flows
        .map(|(_, flows, (s, b))| crate::figures::composition::predicted_delta(r, flows, s, b).0);
    let composed = composed_latency.or(composed_cpu);
    // Instructions do not move with the host: where the run counted them (`run --counter
    // instructions`), the composed difference in instructions stands beside the time.
    let composed_instructions = suites.and_then(|(a, b)| Some(a.instructions? - b.instructions?));
    let composed_half = suites.and_then(|(a, b)| {
        crate::compose::delta_half95_ns(&a.phases, &b.phases, &r.phases, composed_latency.is_some())
    });
    // Along the flows, what the bytes cost the stack (its size controls) widens it too.
    let composed_half = match flows {
        Some((_, _, (s, b))) => crate::figures::composition::with_bytes_half(
            composed_half,
            crate::figures::composition::bytes_term(r, s, b).as_ref(),
        ),
        None => composed_half,
    };
    let capacity = r.capacity.as_ref();
    let pairing = crate::figures::handshake::DeltaPairing::of_run(r);
    let real = fig::real_delta(s, b, pairing);
    Figures {
        composed_ns: composed,
        composed_is_latency: composed_latency.is_some(),
        composed_overlap: suites.is_some_and(|(a, b)| {
            [a, b]
                .iter()
                .any(|x| x.flow.as_ref().is_some_and(|f| !f.overlap.is_empty()))
        }),
        gap: i.zip(bi).and_then(|(i, bi)| fig::largest_gap(r, i, bi)),
        composed_cpu_ns: composed_cpu,
        composed_half95_ns: composed_half,
        composed_instructions,
        composed_stack: s.map_or(String::new(), |s| s.composed_stack.clone()),
        real_ns: real.0,
        real_interval: real.1,
        real_host_half_ns: real
            .1
            .filter(|i| !i.form.is_absolute())
            .zip(b)
            .and_then(|(i, b)| fig::host_part_ns(i.median_ns, b)),
        explained_pct: explained,
        explained_resolved: i.zip(bi).and_then(|(i, bi)| {
            let (c, t) =
                fig::explained_terms(i.insitu.as_ref()?, bi.insitu.as_ref()?, pairing.is_some())?;
            Some(c.resolved() && t.resolved())
        }),
        capacity_ratio: capacity
            .and_then(|cap| fig::capacity_ratio(cap, &c.stack, sides.0, sides.1, baseline_auth)),
        server_cpu: s
            .zip(b)
            .and_then(|(s, b)| crate::figures::server_cpu::change(s, b)),
        memory_bytes: capacity.and_then(|cap| {
            fig::memory_delta_bytes(cap, &c.stack, sides.0, sides.1, baseline_auth).or_else(|| {
                // A lab server's, held by the capacity step's servers part.
                crate::figures::server_load::held_delta_bytes(
                    cap,
                    &c.stack,
                    (sides.0.group, sides.0.auth.or(baseline_auth)),
                    (sides.1.group, sides.1.auth.or(baseline_auth)),
                )
            })
        }),
        wire: s.map(|s| (s.client_to_server_bytes, s.server_to_client_bytes)),
        wire_delta: s.zip(b).map(|(s, b)| {
            fig::wire_delta(
                (s.client_to_server_bytes, s.server_to_client_bytes),
                (b.client_to_server_bytes, b.server_to_client_bytes),
            )
        }),
        rtt_extra_ns: RTTS_MS
            .iter()
            .map(|ms| {
                r.network.as_ref().and_then(|n| {
                    fig::network_extra_ns(n, &c.stack, sides, baseline_auth, ms * 1e6, 0.0)
                })
            })
            .collect(),
        rtt_extra_interval_ns: RTTS_MS
            .iter()
            .map(|ms| {
                r.network.as_ref().and_then(|n| {
                    fig::network_extra_interval_ns(n, &c.stack, sides, baseline_auth, ms * 1e6, 0.0)
                })
            })
            .collect(),
    }
}

/// The figures by the names the page stores them under (`data-figure`), for `verify`.
pub(crate) fn values(f: &Figures) -> Vec<(String, Option<f64>)> {
    let mut v = vec![
        ("composed".to_string(), f.composed_ns),
        ("real".into(), f.real_ns),
        // The interval is shown beside the difference, never alone.
        (
            "real-lo".into(),
            f.real_interval
                .filter(|_| f.real_ns.is_some())
                .map(|d| d.lo95_ns),
        ),
        (
            "real-hi".into(),
            f.real_interval
                .filter(|_| f.real_ns.is_some())
                .map(|d| d.hi95_ns),
        ),
        ("explained".into(), f.explained_pct),
        ("capacity".into(), f.capacity_ratio),
        (
            "server-cpu".into(),
            f.server_cpu.as_ref().map(|c| c.delta_ns),
        ),
        (
            "server-cpu-lo".into(),
            f.server_cpu
                .as_ref()
                .and_then(|c| Some(c.delta_ns - c.delta_half95_ns?)),
        ),
        (
            "server-cpu-hi".into(),
            f.server_cpu
                .as_ref()
                .and_then(|c| Some(c.delta_ns + c.delta_half95_ns?)),
        ),
        (
            "server-cpu-capacity".into(),
            f.server_cpu.as_ref().map(|c| c.capacity_ratio),
        ),
        ("memory".into(), f.memory_bytes),
        ("wire-cs".into(), f.wire.map(|w| w.0)),
        ("wire-sc".into(), f.wire.map(|w| w.1)),
    ];
    for ((ms, x), i) in RTTS_MS
        .iter()
        .zip(&f.rtt_extra_ns)
        .zip(&f.rtt_extra_interval_ns)
    {
        v.push((format!("rtt-{ms}"), *x));
        let i = i.filter(|_| x.is_some());
        v.push((format!("rtt-{ms}-lo"), i.map(|i| i.0)));
        v.push((format!("rtt-{ms}-hi"), i.map(|i| i.1)));
    }
    v
}
