//! The `handshakes` section: each scenario's spread and baseline comparison from its per-sample
//! medians; for instrumented scenarios, the in-situ identity per connection (wall time = the
//! client's crypto calls + the server's + the remainder, exactly, in nanoseconds) and every
//! aggregate from the connections; the evidence of each scenario's first connection held to what
//! the scenario declares (group, key shares, certificate key, signature scheme, certificates).

use super::differs;
use super::problem::Problem;
use crate::figures::evidence::{contradictions, software_contradiction, Declared};
use crate::figures::handshake::{median_figures, paired_connections, Connections, DeltaPairing};
use crate::results::{
    Against, Handshakes, InSitu, InSituConnection, Mode, PairedOverhead, Results, Scenario,
};
use crate::stats;

/// Where the connections are stored (files from 2026-12-01 on): the median, its interval, the
/// sample medians and the precision recomputed from them, and a round for every sample.
fn medians(problems: &mut Vec<Problem>, name: &str, s: &Scenario) {
    if s.totals_ns.is_empty() {
        if s.precision.is_some() {
            problems.push(Problem::incomplete(format!(
                "{name}: a precision without the connections"
            )));
        }
        return;
    }
    let Some(f) = median_figures(&s.totals_ns, &s.sample_sizes) else {
        problems.push(Problem::incomplete(format!(
            "{name}: {} connections do not make samples of {:?}",
            s.totals_ns.len(),
            s.sample_sizes
        )));
        return;
    };
    differs(
        problems,
        format!("{name}: median_ns"),
        s.median_ns,
        f.median_ns,
    );
    if f.sample_medians_ns.len() != s.sample_medians_ns.len() {
        problems.push(Problem::incomplete(format!(
            "{name}: {} sample medians stored, the connections make {}",
            s.sample_medians_ns.len(),
            f.sample_medians_ns.len()
        )));
    } else {
        for (k, (a, b)) in s
            .sample_medians_ns
            .iter()
            .zip(&f.sample_medians_ns)
            .enumerate()
        {
            differs(problems, format!("{name}: sample_medians_ns[{k}]"), *a, *b);
        }
    }
    if s.sample_rounds.len() != s.sample_sizes.len() {
        problems.push(Problem::incomplete(format!(
            "{name}: {} rounds for {} samples",
            s.sample_rounds.len(),
            s.sample_sizes.len()
        )));
    }
    match (s.median_ci95_ns, f.ci95_ns) {
        (Some(a), Some(b)) => {
            differs(problems, format!("{name}: median_ci95_ns low"), a.0, b.0);
            differs(problems, format!("{name}: median_ci95_ns high"), a.1, b.1);
        }
        (None, None) => {}
        _ => problems.push(Problem::recomputed(format!(
            "{name}: median_ci95_ns stored and recomputed differ"
        ))),
    }
    if let Some(pr) = &s.precision {
        super::precision::check(
            problems,
            name,
            pr,
            f.ci95_ns,
            f.median_ns,
            super::precision::Batches {
                count: s.sample_sizes.len(),
                what: "rounds",
                confirm: 0,
            },
        );
    }
}

pub(crate) fn check(results: &Results) -> Vec<Problem> {
    let mut problems = Vec::new();
    let Some(h) = &results.handshakes else {
        return problems;
    };
    // Full handshakes and the other modes are stored apart, each list paired within itself.
    for s in h.scenarios.iter().filter(|s| !s.mode.is_full()) {
        problems.push(Problem::evidence(format!(
            "handshake {}: among the full handshakes",
            s.name()
        )));
    }
    for s in h.other_modes.iter().filter(|s| s.mode.is_full()) {
        problems.push(Problem::evidence(format!(
            "handshake {}: a full handshake among the other modes",
            s.name()
        )));
    }
    for s in h.scenarios.iter().chain(&h.other_modes) {
        resumptions(&mut problems, s);
        composed_delta(&mut problems, results, s);
    }
    if h.pair_block.is_none() && !h.delta_form.is_absolute() {
        problems.push(Problem::incomplete(
            "handshakes: a delta_form without the paired design's pair_block it is taken over",
        ));
    }
    scenarios(&mut problems, results, h, &h.scenarios);
    scenarios(&mut problems, results, h, &h.other_modes);
    problems
}

/// A scenario's composed difference from the one it is against, recomputed from the run's suites
/// by the rule the handshake step used (`figures::handshake::composed_delta`).
fn composed_delta(problems: &mut Vec<Problem>, results: &Results, s: &Scenario) {
    let (Some(stored), Some(a)) = (s.composed_delta_ns, &s.against) else {
        return;
    };
    let baseline = results.baseline_auth().unwrap_or("");
    match crate::figures::handshake::composed_delta(results, s, a, baseline) {
        Some(fresh) => differs(
            problems,
            format!("handshake {} composed_delta_ns", s.name()),
            stored,
            fresh,
        ),
        // A stored figure the run's suites cannot give (a suite missing, or a difference the rule
        // composes none of) is not one check can vouch for.
        None => problems.push(Problem::incomplete(format!(
            "handshake {}: a composed_delta_ns the run's suites do not recompute",
            s.name()
        ))),
    }
}

/// The server's CPU in each sample (`figures::server_cpu`'s raw figures): one a sample, each
/// grown (a server that served a sample's connections spent CPU on them), and together no more
/// than its CPU over every connection, which is read after the last sample.
fn server_cpu(problems: &mut Vec<Problem>, name: &str, s: &Scenario) {
    let cpu = &s.server_cpu_samples_ns;
    if cpu.is_empty() {
        return;
    }
    if cpu.len() != s.sample_sizes.len() {
        problems.push(Problem::incomplete(format!(
            "{name}: server CPU for {} sample(s), {} samples",
            cpu.len(),
            s.sample_sizes.len()
        )));
        return;
    }
    if let Some(k) = cpu.iter().position(|&c| c == 0) {
        problems.push(Problem::evidence(format!(
            "{name}: the server's CPU did not grow over sample {k}'s {} connection(s)",
            s.sample_sizes[k]
        )));
    }
    // Summed as reals: a file's counts may be anything, and a sum of them must not wrap.
    let connections: f64 = s.sample_sizes.iter().map(|&n| n as f64).sum();
    let samples: f64 = cpu.iter().map(|&c| c as f64).sum();
    // Each sample is rounded to the nanosecond: the sum may exceed the total by one a sample.
    let total = s.server_cpu_ns * connections;
    if samples > total * (1.0 + 1e-9) + cpu.len() as f64 {
        problems.push(Problem::bound(format!(
            "{name}: the server's CPU over its samples, {samples} ns, exceeds its CPU over every connection, {total:.0} ns"
        )));
    }
}

/// A resumed scenario's server saw every measured connection resume; no other scenario counts
/// resumptions.
fn resumptions(problems: &mut Vec<Problem>, s: &Scenario) {
    let made = s.totals_ns.len() as u64;
    match (s.mode, s.server_resumed) {
        (Mode::Resumed, Some(n)) if made == 0 || n == made => {}
        (Mode::Resumed, n) => problems.push(Problem::evidence(format!(
            "handshake {}: the server saw {n:?} of {made} connections resume",
            s.name()
        ))),
        (_, None) => {}
        (_, Some(_)) => problems.push(Problem::evidence(format!(
            "handshake {}: resumptions counted for a scenario that does not resume",
            s.name()
        ))),
    }
}

/// One list of scenarios (the full handshakes, or the resumed ones), each against the scenarios
/// of its own list.
fn scenarios(problems: &mut Vec<Problem>, results: &Results, h: &Handshakes, list: &[Scenario]) {
    // The same group and authentication on the same stack, plain or instrumented.
    let twin = |s: &Scenario, instrumented: bool| {
        let own = Against {
            suite: s.suite.clone(),
            auth: s.auth_name().map(String::from),
        };
        list.iter()
            .find(|x| x.is(&own, &s.stack, instrumented) && x.mode == s.mode)
    };
    for s in list {
        let name = format!("handshake {}", s.name());
        let declared = Declared {
            protocol: &s.protocol,
            group: &s.suite,
            shares: s.declared_shares,
            auth: s.auth.as_ref(),
            mode: s.mode,
            transport: s.transport,
        };
        for c in contradictions(&declared, &s.evidence) {
            problems.push(Problem::evidence(format!(
                "{name}: its evidence contradicts the scenario: {c}"
            )));
        }
        if let Some(why) = software_contradiction(s.stack.name(), &s.evidence) {
            problems.push(Problem::evidence(format!("{name}: {why}")));
        }
        if let (Some(a), Some(shares)) = (&s.auth, s.declared_shares) {
            // The declared shares are the group's: the kex suite of that name says so too.
            let kex = results
                .suites
                .iter()
                .find(|x| x.name == s.suite && x.wire_bytes.is_some());
            if let Some(w) = kex.and_then(|x| x.wire_bytes) {
                if w != shares.0 + shares.1 {
                    problems.push(Problem::evidence(format!(
                        "{name} ({}): declares {} + {} share bytes, the suite {} has {w}",
                        a.name, shares.0, shares.1, s.suite
                    )));
                }
            }
        }
        server_cpu(problems, &name, s);
        if s.sample_medians_ns.is_empty() {
            problems.push(Problem::incomplete(format!("{name}: no sample medians")));
            continue;
        }
        differs(
            problems,
            format!("{name}: rsd_pct"),
            s.rsd_pct,
            stats::rsd_pct(&s.sample_medians_ns),
        );
        medians(problems, &name, s);
        match DeltaPairing::of(h) {
            Some(pairing) => paired_delta(problems, &name, list, s, pairing),
            None => unpaired(problems, &name, list, s),
        }
        if let Some(o) = s.insitu_overhead_pct {
            match twin(s, true) {
                Some(i) => differs(
                    problems,
                    format!("{name}: insitu_overhead_pct"),
                    o,
                    (i.median_ns / s.median_ns - 1.0) * 100.0,
                ),
                None => problems.push(Problem::incomplete(format!(
                    "{name}: an overhead without its instrumented scenario"
                ))),
            }
        }
        for (what, p) in [
            ("in memory", &s.insitu_overhead_paired),
            ("on loopback", &s.insitu_overhead_paired_loopback),
        ] {
            if let Some(p) = p {
                paired(
                    problems,
                    &format!("{name}: paired overhead {what}"),
                    p,
                    s.median_ns,
                );
            }
        }
        if let Some(o) = s.insitu_overhead_est_pct {
            match (twin(s, true).and_then(|i| i.insitu.as_ref()), h.insitu_call_cost_ns) {
                (Some(i), Some(cost)) => differs(problems, format!("{name}: insitu_overhead_est_pct"), o, i.calls_per_handshake() * cost / s.median_ns * 100.0),
                _ => problems.push(Problem::incomplete(format!("{name}: an estimated overhead without its instrumented scenario or the cost per call"))),
            }
        }
        if let Some(i) = &s.insitu {
            problems.extend(in_situ(&name, i));
            // The overlap that holds the client's segment on the ServerHello, as `timeline::as_run`
            // reads it; a stack the file does not list declares nothing to hold.
            let declares = results
                .stacks
                .iter()
                .find(|st| st.name == s.composed_stack)
                .map(|st| {
                    st.overlap.iter().any(|(a, b)| {
                        [a, b]
                            .contains(&&crate::figures::timeline::CLIENT_CHAIN_SEGMENT.to_string())
                    })
                });
            if let (Some(declares), Some(t)) = (declares, crate::figures::timeline::of(i)) {
                problems.extend(flight_order(&name, declares, &t));
            }
        }
    }
    // Deltas of the in-situ parts against the baseline group's instrumented scenario.
    for s in list.iter().filter(|s| s.instrumented) {
        let Some(i) = &s.insitu else { continue };
        let name = format!("handshake {}", s.name());
        if let (Some(cd), Some(delta)) = (i.crypto_delta_ns, s.measured_delta_ns) {
            let base_median = s.median_ns - delta;
            // The scenario it is against where stored (schema 3), else the one with that median.
            let same = |b: &Scenario| stats::agrees(b.median_ns, base_median, super::TOLERANCE_PCT);
            let base = match &s.against {
                Some(a) => list
                    .iter()
                    .find(|b| b.is(a, &s.stack, true) && b.mode == s.mode),
                None => list.iter().find(|b| {
                    b.instrumented && b.stack == s.stack && same(b) && b.insitu.is_some()
                }),
            };
            match base {
                Some(b) => {
                    let bi = b.insitu.as_ref().map_or(0.0, |x| x.crypto_ns);
                    differs(
                        problems,
                        format!("{name}: crypto_delta_ns"),
                        cd,
                        i.crypto_ns - bi,
                    );
                }
                None => problems.push(Problem::incomplete(format!(
                    "{name}: its baseline's instrumented scenario is missing"
                ))),
            }
        }
    }
}

/// Before the paired design: the difference of the two medians, and the ratio that goes with it.
fn unpaired(problems: &mut Vec<Problem>, name: &str, list: &[Scenario], s: &Scenario) {
    let (Some(ratio), Some(delta)) = (s.vs_baseline_ratio, s.measured_delta_ns) else {
        return;
    };
    let base = s.median_ns - delta;
    differs(
        problems,
        format!("{name}: vs_baseline_ratio"),
        ratio,
        s.median_ns / base,
    );
    // Where the scenario names what it is against (schema 3), that scenario's median.
    if let Some(a) = &s.against {
        match list
            .iter()
            .find(|x| x.is(a, &s.stack, s.instrumented) && x.mode == s.mode)
        {
            Some(x) => differs(
                problems,
                format!("{name}: measured_delta_ns"),
                delta,
                s.median_ns - x.median_ns,
            ),
            None => problems.push(Problem::incomplete(format!(
                "{name}: against {} {}, which is not measured",
                a.suite,
                a.auth.as_deref().unwrap_or("")
            ))),
        }
    }
}

/// The paired design (`Handshakes::pair_block`): the ratio of the two medians, and the paired
/// difference in the file's form (`DeltaPairing::of`) with its interval and count, recomputed from
/// both scenarios' connections. A difference needs the scenario it is against, measured.
fn paired_delta(
    problems: &mut Vec<Problem>,
    name: &str,
    list: &[Scenario],
    s: &Scenario,
    pairing: DeltaPairing,
) {
    let stored = (
        s.vs_baseline_ratio,
        s.measured_delta_ns,
        s.measured_delta_ci95_ns,
        s.measured_delta_pairs,
    );
    let Some(a) = &s.against else {
        if stored != (None, None, None, None) {
            problems.push(Problem::incomplete(format!(
                "{name}: a difference without the scenario it is against"
            )));
        }
        return;
    };
    let Some(x) = list
        .iter()
        .find(|x| x.is(a, &s.stack, s.instrumented) && x.mode == s.mode)
    else {
        problems.push(Problem::incomplete(format!(
            "{name}: against {} {}, which is not measured",
            a.suite,
            a.auth.as_deref().unwrap_or("")
        )));
        return;
    };
    match s.vs_baseline_ratio {
        Some(r) => differs(
            problems,
            format!("{name}: vs_baseline_ratio"),
            r,
            s.median_ns / x.median_ns,
        ),
        None => problems.push(Problem::incomplete(format!(
            "{name}: no ratio against {}",
            x.name()
        ))),
    }
    let d = paired_connections(Connections::of(s), Connections::of(x), pairing);
    match (
        s.measured_delta_ns,
        s.measured_delta_ci95_ns,
        s.measured_delta_pairs,
        d,
    ) {
        (Some(m), Some((lo, hi)), Some(n), Some(d)) => {
            differs(
                problems,
                format!("{name}: measured_delta_ns"),
                m,
                d.median_ns,
            );
            differs(
                problems,
                format!("{name}: measured_delta_ci95_ns low"),
                lo,
                d.lo95_ns,
            );
            differs(
                problems,
                format!("{name}: measured_delta_ci95_ns high"),
                hi,
                d.hi95_ns,
            );
            if n != d.pairs {
                problems.push(Problem::incomplete(format!(
                    "{name}: {n} paired blocks stored, the connections make {}",
                    d.pairs
                )));
            }
        }
        (None, None, None, None) => {}
        (_, _, _, None) => problems.push(Problem::recomputed(format!(
            "{name}: a paired difference that its connections and {}'s do not make",
            x.name()
        ))),
        _ => problems.push(Problem::incomplete(format!(
            "{name}: the paired difference, its interval or its pairs are missing"
        ))),
    }
}

/// How far a client's call may end past the connection's total: the two clocks' readings
/// (CLOCK_MONOTONIC at the connection's start, derived from its `Instant`) and the rounding of a
/// span's ends into nanoseconds.
const TIME_LINE_SLACK_NS: u64 = 1_000;

/// A connection's time line (`InSituConnection::client_at_ns`, `server_at_ns`): none (older
/// files), or on each side a span for every label that side called and for no other, each
/// starting before it ends and as long as that side's time in its calls at least; the client's
/// within the connection (the server's may close after the client has stopped its clock; both
/// start after the connection's clock, which the unsigned figures hold).
fn time_line(name: &str, k: usize, c: &InSituConnection, n: usize) -> Vec<Problem> {
    if c.client_at_ns.is_empty() && c.server_at_ns.is_empty() {
        return Vec::new();
    }
    let mut problems = Vec::new();
    for (side, at, ns) in [
        ("client", &c.client_at_ns, &c.client),
        ("server", &c.server_at_ns, &c.server),
    ] {
        if at.len() != 2 * n {
            problems.push(Problem::incomplete(format!(
                "{name}: connection {k}'s {side} time line has {} figures for {n} labels",
                at.len()
            )));
            continue;
        }
        for (l, &calls_ns) in ns.iter().enumerate() {
            let at_label =
                |w: String| format!("{name}: connection {k}: the {side}'s label {l}: {w}");
            match InSituConnection::span(at, l) {
                None if calls_ns > 0 => problems.push(Problem::incomplete(at_label(format!(
                    "{calls_ns} ns of calls without a span"
                )))),
                Some((s, e)) if calls_ns == 0 => problems.push(Problem::incomplete(at_label(
                    format!("a span {s}..{e} ns without calls"),
                ))),
                Some((s, e)) if e < s || (e - s) + 2 < calls_ns => {
                    problems.push(Problem::bound(at_label(format!(
                        "its span {s}..{e} ns cannot hold its calls' {calls_ns} ns"
                    ))))
                }
                Some((_, e)) if side == "client" && e > c.total_ns + TIME_LINE_SLACK_NS => problems
                    .push(Problem::bound(at_label(format!(
                        "its calls end at {e} ns, after the connection's {} ns",
                        c.total_ns
                    )))),
                _ => {}
            }
        }
    }
    problems
}

/// A time line against the flight structure its stack declares (#37): a stack that runs no segments
/// at once writes its flight after signing, so its client cannot begin on the ServerHello before
/// the server's signing ended. One that declares an overlap may run either way (OpenSSL's write
/// buffer decides), and the composition takes the flow as it ran.
fn flight_order(
    name: &str,
    declares_overlap: bool,
    t: &crate::figures::timeline::TimeLine,
) -> Option<Problem> {
    let (sign, chain) = (t.server_sign?, t.client_chain?);
    (!declares_overlap && t.overlaps()?).then(|| {
        Problem::evidence(format!(
            "{name}: its stack declares no segments run at once, but at the median connection its \
             client began on the ServerHello at {:.1} µs, before the server's signing ended at {:.1} µs",
            chain.start_ns / 1e3,
            sign.end_ns / 1e3
        ))
    })
}

fn in_situ(name: &str, i: &InSitu) -> Vec<Problem> {
    let mut problems = Vec::new();
    let n = i.labels.len();
    if i.connections.is_empty() {
        return vec![Problem::incomplete(format!(
            "{name}: in situ without connections"
        ))];
    }
    for (k, c) in i.connections.iter().enumerate() {
        if c.client.len() != n || c.server.len() != n {
            problems.push(Problem::incomplete(format!(
                "{name}: connection {k} has {} / {} figures for {n} labels",
                c.client.len(),
                c.server.len()
            )));
            continue;
        }
        problems.extend(time_line(name, k, c, n));
        let crypto: i128 = c
            .client
            .iter()
            .chain(&c.server)
            .map(|&x| i128::from(x))
            .sum();
        if i128::from(c.total_ns) != crypto + i128::from(c.remainder_ns) {
            problems.push(Problem::recomputed(format!(
                "{name}: connection {k}: total {} ns is not its crypto calls ({crypto} ns) plus its remainder ({} ns)",
                c.total_ns, c.remainder_ns
            )));
        }
    }
    if !problems.is_empty() {
        return problems;
    }
    let m = i.connections.len() as f64;
    for l in 0..n {
        let label = &i.labels[l];
        differs(
            &mut problems,
            format!("{name}: client_ns[{label}]"),
            i.client_ns[l],
            i.connections
                .iter()
                .map(|c| c.client[l] as f64)
                .sum::<f64>()
                / m,
        );
        differs(
            &mut problems,
            format!("{name}: server_ns[{label}]"),
            i.server_ns[l],
            i.connections
                .iter()
                .map(|c| c.server[l] as f64)
                .sum::<f64>()
                / m,
        );
    }
    differs(
        &mut problems,
        format!("{name}: total_ns"),
        i.total_ns,
        i.connections.iter().map(|c| c.total_ns as f64).sum::<f64>() / m,
    );
    differs(
        &mut problems,
        format!("{name}: remainder_ns"),
        i.remainder_ns,
        i.connections
            .iter()
            .map(|c| c.remainder_ns as f64)
            .sum::<f64>()
            / m,
    );
    differs(
        &mut problems,
        format!("{name}: crypto_ns (sum of the labels)"),
        i.crypto_ns,
        i.client_ns.iter().chain(&i.server_ns).sum(),
    );
    differs(
        &mut problems,
        format!("{name}: identity total = crypto + remainder"),
        i.total_ns,
        i.crypto_ns + i.remainder_ns,
    );
    problems
}

/// A paired timer-cost measurement recomputed from its block medians.
fn paired(problems: &mut Vec<Problem>, name: &str, p: &PairedOverhead, median_ns: f64) {
    let Some(r) = crate::overhead::summarise(
        p.per_block,
        p.plain_ns.clone(),
        p.wrapped_ns.clone(),
        p.timed_ns.clone(),
        median_ns,
    ) else {
        problems.push(Problem::incomplete(format!(
            "{name}: {} plain, {} wrapped and {} timed blocks",
            p.plain_ns.len(),
            p.wrapped_ns.len(),
            p.timed_ns.len()
        )));
        return;
    };
    let mut fields = vec![
        ("delta_ns", p.delta_ns, r.delta_ns),
        ("delta_half95_ns", p.delta_half95_ns, r.delta_half95_ns),
        ("pct", p.pct, r.pct),
        ("pct_hi95", p.pct_hi95, r.pct_hi95),
    ];
    let mut optional = vec![("wrapper_ns", p.wrapper_ns, r.wrapper_ns)];
    // Files before 2026-12-01 have no median; where one is stored it must be the blocks'.
    if let (Some(m), Some(rm)) = (&p.median, &r.median) {
        fields.extend([
            ("median.delta_ns", m.delta_ns, rm.delta_ns),
            ("median.lo95_ns", m.lo95_ns, rm.lo95_ns),
            ("median.hi95_ns", m.hi95_ns, rm.hi95_ns),
            ("median.pct", m.pct, rm.pct),
            ("median.pct_hi95", m.pct_hi95, rm.pct_hi95),
        ]);
        optional.push(("median.wrapper_ns", m.wrapper_ns, rm.wrapper_ns));
    }
    for (field, stored, recomputed) in fields {
        differs(problems, format!("{name} {field}"), stored, recomputed);
    }
    for (field, stored, recomputed) in optional {
        match (stored, recomputed) {
            (Some(a), Some(b)) => differs(problems, format!("{name} {field}"), a, b),
            (None, None) => {}
            _ => problems.push(Problem::incomplete(format!(
                "{name}: {field} without its blocks, or blocks without it"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::problem::Kind;

    /// A connection of two labels: the client's first called for 300 ns within 100..500 of a
    /// 1,000 ns connection, the server's second for 200 ns within 50..400.
    fn conn() -> InSituConnection {
        InSituConnection {
            total_ns: 1_000,
            client: vec![300, 0],
            server: vec![0, 200],
            remainder_ns: 500,
            client_at_ns: vec![100, 500, 0, 0],
            server_at_ns: vec![0, 0, 50, 400],
        }
    }

    #[test]
    fn server_cpu_per_sample_is_one_a_sample_each_grown_and_within_the_total() {
        let mut s = Scenario::bare("nginx", "X25519");
        s.sample_sizes = vec![50, 50];
        s.server_cpu_ns = 400_000.0;
        let problems = |s: &Scenario| {
            let mut p = Vec::new();
            server_cpu(&mut p, "h", s);
            p
        };
        // None stored (an older file, a server that could not say): nothing to hold.
        assert!(problems(&s).is_empty());
        // 100 connections at 400 us: 40 ms in all, 39.9 ms over the samples.
        s.server_cpu_samples_ns = vec![19_900_000, 20_000_000];
        assert!(problems(&s).is_empty(), "{:?}", problems(&s));
        s.server_cpu_samples_ns = vec![20_000_000, 20_000_010];
        assert!(problems(&s)[0].is(
            Kind::Bound,
            "the server's CPU over its samples, 40000010 ns"
        ));
        s.server_cpu_samples_ns = vec![0, 20_000_000];
        assert!(problems(&s)[0].is(
            Kind::Evidence,
            "did not grow over sample 0's 50 connection(s)"
        ));
        s.server_cpu_samples_ns = vec![20_000_000];
        assert!(problems(&s)[0].is(Kind::Incomplete, "server CPU for 1 sample(s), 2 samples"));
    }

    #[test]
    fn a_client_that_begins_before_the_signing_ended_contradicts_a_stack_without_overlap() {
        use crate::figures::timeline::{Span, TimeLine};
        let t = |chain_start_ns: f64| TimeLine {
            connections: 10,
            server_sign: Some(Span {
                start_ns: 190_000.0,
                end_ns: 211_000.0,
            }),
            client_chain: Some(Span {
                start_ns: chain_start_ns,
                end_ns: 400_000.0,
            }),
            client_verify: None,
            segment_ns: None,
            segment_calls_ns: None,
            wait_ns: None,
        };
        // After the signing: as every stack may run it.
        assert!(flight_order("s", false, &t(231_100.0)).is_none());
        assert!(flight_order("s", true, &t(231_100.0)).is_none());
        // Before it ended: only a stack that declares the overlap.
        assert!(flight_order("s", true, &t(172_700.0)).is_none());
        let p = flight_order("s", false, &t(172_700.0)).unwrap();
        assert!(
            p.is(Kind::Evidence, "client began on the ServerHello at 172.7 µs, before the server's signing ended at 211.0 µs"),
            "{p:?}"
        );
        // A resumption signs nothing: no order to hold.
        let resumed = TimeLine {
            server_sign: None,
            ..t(100.0)
        };
        assert!(flight_order("s", false, &resumed).is_none());
    }

    #[test]
    fn a_time_line_holds_its_calls_within_its_connection() {
        assert!(time_line("s", 0, &conn(), 2).is_empty());
        // An older file's connection has none.
        let old = InSituConnection {
            client_at_ns: Vec::new(),
            server_at_ns: Vec::new(),
            ..conn()
        };
        assert!(time_line("s", 0, &old, 2).is_empty());
        // One problem of the kind and text each change makes.
        let wrong = |f: &dyn Fn(&mut InSituConnection), kind: Kind, what: &str| {
            let mut c = conn();
            f(&mut c);
            let p = time_line("s", 0, &c, 2);
            assert!(p.len() == 1 && p[0].is(kind, what), "{what}: {p:?}");
        };
        wrong(
            &|c| c.client_at_ns[1] = 300,
            Kind::Bound,
            "label 0: its span 100..300 ns cannot hold its calls' 300 ns",
        );
        wrong(
            &|c| c.server_at_ns[2..].fill(0),
            Kind::Incomplete,
            "server's label 1: 200 ns of calls without a span",
        );
        wrong(
            &|c| c.client[1] = 50,
            Kind::Incomplete,
            "client's label 1: 50 ns of calls without a span",
        );
        wrong(
            &|c| c.client_at_ns[2..].copy_from_slice(&[10, 20]),
            Kind::Incomplete,
            "client's label 1: a span 10..20 ns without calls",
        );
        wrong(
            &|c| c.client_at_ns[..2].copy_from_slice(&[700, 2_100]),
            Kind::Bound,
            "its calls end at 2100 ns, after the connection's 1000 ns",
        );
        wrong(
            &|c| c.server_at_ns.truncate(2),
            Kind::Incomplete,
            "server time line has 2 figures for 2 labels",
        );
        // The server may still close after the client has stopped its clock.
        let mut late = conn();
        late.server_at_ns[2..].copy_from_slice(&[900, 1_800]);
        assert!(time_line("s", 0, &late, 2).is_empty());
    }
}
