//! The figures of the front page's answer (what a change of group costs on one machine) that are
//! computed from stored results rather than stored: the real handshake difference's interval, the
//! share of it the in-situ crypto explains, memory per held connection against the baseline and
//! the extra time over an emulated network. Pure functions of the results, tested by hand.

use super::handshake::{DeltaPairing, PairedDelta};
use crate::results::{Capacity, DeltaForm, Network, Results, Scenario};
use crate::stats;

/// The hybrid each protocol's stacks share (ML-KEM-768 with X25519, the one every stack here
/// negotiates) and its classical baseline: (protocol, hybrid, baseline).
pub(crate) const HYBRID: [(&str, &str, &str); 2] = [
    ("tls13", "X25519MLKEM768", "X25519"),
    ("ssh", "mlkem768x25519-sha256", "curve25519-sha256"),
];

/// The certificate the answer sets beside the classical one (suites/auth.toml's ML-DSA-65 chain:
/// NIST's category 3, and the first whose server flight overflows a 10-segment initial window),
/// on the hybrid group, and the fully post-quantum handshake against the classical one.
pub(crate) const CERTIFICATE: (&str, &str) = ("X25519MLKEM768", "ML-DSA-65");
pub(crate) const POST_QUANTUM: (&str, &str) = ("MLKEM768", "ML-DSA-65");
pub(crate) const CLASSICAL: &str = "X25519";

/// Whether a real handshake scenario (`auth` none for SSH) is the changed side of a row of the
/// answer table whose paired difference is against the scenario the handshake step pairs it with:
/// the hybrid with the baseline authentication, or the ML-DSA-65 chain on the hybrid. The step
/// measures these first (#33). (The post-quantum row sets MLKEM768 + ML-DSA-65 against X25519 +
/// ECDSA, which is not its partner: its rounds would not narrow that difference.)
pub fn answers(protocol: &str, group: &str, auth: Option<&str>, baseline_auth: &str) -> bool {
    let hybrid = HYBRID.iter().any(|(p, g, _)| *p == protocol && *g == group)
        && auth.is_none_or(|a| a == baseline_auth);
    let chain = protocol == "tls13" && group == CERTIFICATE.0 && auth == Some(CERTIFICATE.1);
    hybrid || chain
}

/// Whether a scenario is either side of a row of the answer table: the hybrid or its classical
/// baseline with the baseline authentication (SSH: none), the ML-DSA-65 chain on the hybrid, or
/// the fully post-quantum handshake (`POST_QUANTUM`), whose baseline is the classical one's.
pub fn in_answer(protocol: &str, group: &str, auth: Option<&str>, baseline_auth: &str) -> bool {
    let groups = HYBRID
        .iter()
        .any(|(p, g, b)| *p == protocol && (*g == group || *b == group))
        && auth.is_none_or(|a| a == baseline_auth);
    let chains = protocol == "tls13"
        && [CERTIFICATE, POST_QUANTUM]
            .iter()
            .any(|(g, a)| *g == group && auth == Some(*a));
    groups || chains
}

/// `changed[k] - baseline[k]` for every round k, with the median of those differences and its
/// percentile-bootstrap interval (the phases' resamples and seed, `stats::median_interval`).
/// Paired because `pqprof handshake` runs every scenario's k-th sample in the same round, in turn:
/// the two samples of a round share the host's state, so a slow stretch of the shared machine
/// moves both and cancels in their difference. `None` unless both have the same number (at least
/// two) of finite rounds.
pub(crate) fn paired_delta(changed: &[f64], baseline: &[f64]) -> Option<PairedDelta> {
    if changed.len() != baseline.len() || changed.len() < 2 {
        return None;
    }
    let d: Vec<f64> = changed.iter().zip(baseline).map(|(a, b)| a - b).collect();
    let (median_ns, lo95_ns, hi95_ns) = crate::derived::median_interval(&d)?;
    Some(PairedDelta {
        median_ns,
        lo95_ns,
        hi95_ns,
        pairs: d.len(),
        block: 0,
        form: DeltaForm::Absolute,
        share: None,
    })
}

/// The paired difference of two real handshake scenarios: block by block in the file's form where
/// the run used the paired design (`DeltaPairing`), else `paired_delta` over the rounds both ran
/// in (`figures::handshake::common_rounds`).
pub(crate) fn paired_scenarios(
    changed: &Scenario,
    baseline: &Scenario,
    pairing: Option<DeltaPairing>,
) -> Option<PairedDelta> {
    use super::handshake::{paired_connections, Connections};
    match pairing {
        Some(pairing) => stored(changed, baseline, pairing).or_else(|| {
            paired_connections(Connections::of(changed), Connections::of(baseline), pairing)
        }),
        None => {
            let (a, b) = super::handshake::common_rounds(changed, baseline);
            paired_delta(&a, &b)
        }
    }
}

/// The paired difference `pqprof handshake` stored with `changed`, where it is against `baseline`
/// (the same scenario `check` recomputes it against, from the same connections, within its
/// tolerance): the pages read it rather than resample the connections again. In the relative form
/// the share is the stored difference over the baseline's median in the shared rounds, as
/// `paired_connections` makes it.
fn stored(changed: &Scenario, baseline: &Scenario, pairing: DeltaPairing) -> Option<PairedDelta> {
    let against = changed.against.as_ref()?;
    if !(baseline.is(against, &changed.stack, changed.instrumented)
        && baseline.mode == changed.mode)
    {
        return None;
    }
    let median_ns = changed.measured_delta_ns?;
    let (lo95_ns, hi95_ns) = changed.measured_delta_ci95_ns?;
    let share = match pairing.form {
        DeltaForm::Absolute => None,
        DeltaForm::Relative => {
            use super::handshake::{shared_baseline_median, Connections};
            let base = shared_baseline_median(Connections::of(changed), Connections::of(baseline))?;
            Some((median_ns / base, lo95_ns / base, hi95_ns / base))
        }
    };
    Some(PairedDelta {
        median_ns,
        lo95_ns,
        hi95_ns,
        pairs: changed.measured_delta_pairs?,
        block: pairing.block,
        form: pairing.form,
        share,
    })
}

/// The real loopback difference of two scenarios and its paired interval: in the paired design the
/// paired difference in the file's form (what `pqprof handshake` stores as `measured_delta_ns`),
/// before it the difference of the two medians beside the round-paired interval.
pub(crate) fn real_delta(
    changed: Option<&Scenario>,
    baseline: Option<&Scenario>,
    pairing: Option<DeltaPairing>,
) -> (Option<f64>, Option<PairedDelta>) {
    let Some((s, b)) = changed.zip(baseline) else {
        return (None, None);
    };
    let paired = paired_scenarios(s, b, pairing);
    match pairing {
        Some(_) => (paired.map(|d| d.median_ns), paired),
        None => (Some(s.median_ns - b.median_ns), paired),
    }
}

/// The host's part of a difference in the relative form (`results::DeltaForm::Relative`): the
/// difference is a share times the baseline's median, so the baseline median's own 95% interval,
/// as a share of it, carries over to the difference; nanoseconds, half-width. `None` where the
/// baseline has no interval.
pub(crate) fn host_part_ns(delta_ns: f64, baseline: &Scenario) -> Option<f64> {
    host_part(delta_ns, baseline.median_ns, baseline.median_ci95_ns?)
}

fn host_part(delta_ns: f64, median_ns: f64, interval: (f64, f64)) -> Option<f64> {
    Some(delta_ns.abs() * stats::half_width_pct(interval, median_ns)? / 100.0)
}

/// Whether a difference is an answer: its 95% interval `(lo, hi)` excludes zero and is no wider
/// than the difference itself. Anything else is shown as "not resolved here" with its half-width:
/// on a noisy host a point estimate inside such an interval is noise, not a cost.
pub fn resolved(x: f64, (lo, hi): (f64, f64)) -> bool {
    x.is_finite() && (lo > 0.0 || hi < 0.0) && hi - lo <= x.abs()
}

/// A mean difference and its 95% half-width.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Term {
    pub(crate) mean: f64,
    pub(crate) half95: f64,
}

impl Term {
    pub(crate) fn resolved(&self) -> bool {
        resolved(
            self.mean,
            (self.mean - self.half95, self.mean + self.half95),
        )
    }
}

/// The two terms of "in-situ crypto explains" with their intervals: the difference of the crypto
/// calls (both sides) per connection, and of the whole connection, `changed` against `baseline`,
/// from the connections each in-situ record kept. Paired (`paired`: the paired design, where the
/// k-th record of each ran next to the other's k-th), the t-interval of the k-th differences;
/// otherwise the two means' t-intervals in quadrature. `None` with fewer than two records.
pub(crate) fn explained_terms(
    changed: &crate::results::InSitu,
    baseline: &crate::results::InSitu,
    paired: bool,
) -> Option<(Term, Term)> {
    let crypto = |c: &crate::results::InSituConnection| -> f64 {
        c.client.iter().chain(&c.server).map(|&x| x as f64).sum()
    };
    let total = |c: &crate::results::InSituConnection| c.total_ns as f64;
    let term = |f: &dyn Fn(&crate::results::InSituConnection) -> f64| -> Option<Term> {
        let (a, b) = (&changed.connections, &baseline.connections);
        if paired {
            let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| f(x) - f(y)).collect();
            let (mean, half95) = stats::mean_half95(&d)?;
            Some(Term { mean, half95 })
        } else {
            let xa: Vec<f64> = a.iter().map(f).collect();
            let xb: Vec<f64> = b.iter().map(f).collect();
            let ((ma, ha), (mb, hb)) = (stats::mean_half95(&xa)?, stats::mean_half95(&xb)?);
            Some(Term {
                mean: ma - mb,
                half95: ha.hypot(hb),
            })
        }
    };
    Some((term(&crypto)?, term(&total)?))
}

/// The call that sets a composed difference furthest apart from the real one: for each kind of
/// in-situ call (`incontext::per_call`), what it costs a handshake beyond what the flow composes it
/// at (`PerCall::composed_ns`: in a handshake's state where the run timed it so, else the loop's
/// median), (in situ - composed) x calls per handshake, in `changed` less in `baseline` (both
/// instrumented); the label whose excess differs most.
#[derive(Debug, Clone, PartialEq)]
pub struct Gap {
    pub label: String,
    /// The changed scenario's call: "ML-DSA-65 (openssl)" and its in-situ median over what the
    /// flow composes it at.
    pub(crate) implementation: String,
    pub ratio: f64,
    /// Whether the flow composes it from its calls timed in a handshake's state (else from the
    /// phase loop's hot median).
    pub(crate) in_state: bool,
    /// Its excess per handshake less the baseline's same call's, nanoseconds.
    pub extra_ns: f64,
}

impl Gap {
    /// What the ratio is against, in words.
    pub(crate) fn against(&self) -> &'static str {
        if self.in_state {
            "its calls timed in a handshake's state"
        } else {
            "its phase loop's hot median"
        }
    }
}

/// The changed scenario's call whose excess differs most from the baseline's (`Gap`).
pub(crate) fn largest_gap(r: &Results, changed: &Scenario, baseline: &Scenario) -> Option<Gap> {
    largest_of(call_excess(r, changed), &call_excess(r, baseline))
}

/// What every call of `changed` costs a handshake in situ beyond what the flow composes it at,
/// less the same of every call of the baseline (both instrumented): how far the calls' own state
/// in the handshakes moves the difference (`excess_delta`), and the call that moves it most
/// (`largest_of`). `None` where either was not timed in situ.
pub(crate) fn calls_excess(
    r: &Results,
    changed: &Scenario,
    baseline: &Scenario,
) -> Option<(f64, Option<Gap>)> {
    let of = |s: &Scenario| {
        s.insitu
            .as_ref()
            .map(|_| call_excess(r, s))
            .filter(|v| !v.is_empty())
    };
    let (a, b) = (of(changed)?, of(baseline)?);
    let total = Some(excess_delta(&a, &b)).filter(|x| x.is_finite())?;
    Some((total, largest_of(a, &b)))
}

/// Each of `changed`'s calls less the baseline's call of the same label, and each call only the
/// baseline makes (OpenSSL's X25519 `kx.import + dh.derive` beside a hybrid's `kx.*`) at its
/// excess negated, as `excess_delta` counts it; the largest either way.
fn largest_of(changed: Vec<Gap>, baseline: &[Gap]) -> Option<Gap> {
    let only_baseline: Vec<Gap> = baseline
        .iter()
        .filter(|b| !changed.iter().any(|g| g.label == b.label))
        .map(|b| Gap {
            extra_ns: -b.extra_ns,
            ..b.clone()
        })
        .collect();
    changed
        .into_iter()
        .map(|g| Gap {
            extra_ns: g.extra_ns
                - baseline
                    .iter()
                    .filter(|x| x.label == g.label)
                    .map(|x| x.extra_ns)
                    .sum::<f64>(),
            ..g
        })
        .chain(only_baseline)
        .filter(|g| g.extra_ns.is_finite())
        .max_by(|x, y| x.extra_ns.abs().total_cmp(&y.extra_ns.abs()))
}

/// All of `changed`'s excess less all of the baseline's: a kind of call only one of them makes
/// (OpenSSL's hybrid `kx.encaps` against X25519's `dh.derive`) counts on its side alone.
fn excess_delta(changed: &[Gap], baseline: &[Gap]) -> f64 {
    let sum = |v: &[Gap]| v.iter().map(|g| g.extra_ns).sum::<f64>();
    sum(changed) - sum(baseline)
}

/// Each kind of in-situ call of one scenario (`incontext::per_call`) with its excess per handshake,
/// (in situ - composed) x calls (`Gap::extra_ns`, not yet against a baseline).
fn call_excess(r: &Results, s: &Scenario) -> Vec<Gap> {
    let Some(i) = &s.insitu else {
        return Vec::new();
    };
    crate::incontext::per_call(r, s)
        .into_iter()
        .filter_map(|row| {
            let base = row.label.rsplit(" + ").next()?.to_string();
            let k = i.labels.iter().position(|l| *l == base)?;
            let calls = i.client_calls.get(k)? + i.server_calls.get(k)?;
            Some(Gap {
                implementation: row.implementation(),
                ratio: row.composed_ratio(),
                in_state: row.situ_ns.is_some(),
                extra_ns: (row.insitu_ns - row.composed_ns()) * calls,
                label: row.label,
            })
        })
        .collect()
}

/// `part / whole` in percent: how much of a measured difference a part of it accounts for.
/// `None` where the whole is too small to divide by (under 1 ns) or either is not a number.
pub(crate) fn share_pct(part: f64, whole: f64) -> Option<f64> {
    (part.is_finite() && whole.is_finite() && whole.abs() >= 1.0).then(|| part / whole * 100.0)
}

/// Half the width of the band within which a difference of two medians `a - b` moves without
/// either median changing by more than `floor_pct` (`pqprof compare`'s noise floor): each may move
/// by that share, in opposite directions.
pub(crate) fn floor_half_width(a: f64, b: f64, floor_pct: f64) -> f64 {
    (a.abs() + b.abs()) * floor_pct / 100.0
}

/// Bytes each way (client to server, server to client) of a changed scenario minus its baseline's.
pub(crate) fn wire_delta(changed: (f64, f64), baseline: (f64, f64)) -> (f64, f64) {
    (changed.0 - baseline.0, changed.1 - baseline.1)
}

/// One side of a change: a group (a suite of the real handshakes) and, where the change is about
/// certificates, the authentication. Written "X25519MLKEM768 + ML-DSA-65"; a side without one
/// means the run's baseline authentication (or none, in files from before authentications), so
/// the key-exchange rows keep their names across every file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Side<'a> {
    pub(crate) group: &'a str,
    pub(crate) auth: Option<&'a str>,
}

impl<'a> Side<'a> {
    pub(crate) fn parse(s: &'a str) -> Side<'a> {
        match s.split_once(" + ") {
            Some((group, auth)) => Side {
                group,
                auth: Some(auth),
            },
            None => Side {
                group: s,
                auth: None,
            },
        }
    }

    /// Whether an entry of `group` recorded with `auth` is this side, in a run whose baseline
    /// authentication is `baseline_auth`: the same authentication, or an entry without one (an
    /// older file, or SSH) where this side means the baseline.
    pub(crate) fn is(&self, group: &str, auth: Option<&str>, baseline_auth: Option<&str>) -> bool {
        let want = self.auth.or(baseline_auth);
        group == self.group && (auth == want || (auth.is_none() && want == baseline_auth))
    }
}

/// The real handshake scenario a side names on `stack`, plain or instrumented.
pub(crate) fn scenario<'a>(
    r: &'a Results,
    stack: &str,
    side: Side,
    instrumented: bool,
) -> Option<&'a Scenario> {
    let baseline_auth = r.baseline_auth();
    r.handshakes.as_ref()?.scenarios.iter().find(|s| {
        s.instrumented == instrumented
            && s.stack.name() == stack
            && side.is(&s.suite, s.auth_name(), baseline_auth)
    })
}

/// The composition a side is set beside: the group's key exchange for a change of key exchange;
/// for a change of certificate, its full handshake ("<group> + <auth> full handshake", or "<group>
/// full handshake" for the baseline authentication), as `pqprof handshake` sets them.
pub(crate) fn composed_suite(
    side: Side,
    certificates: bool,
    baseline_auth: Option<&str>,
) -> String {
    match side.auth {
        _ if !certificates => side.group.to_string(),
        Some(a) if Some(a) != baseline_auth => format!("{} + {a} full handshake", side.group),
        _ => format!("{} full handshake", side.group),
    }
}

/// Server heap per held connection of `changed` minus that of `baseline`, same stack (bytes).
pub(crate) fn memory_delta_bytes(
    c: &Capacity,
    stack: &str,
    changed: Side,
    baseline: Side,
    baseline_auth: Option<&str>,
) -> Option<f64> {
    let heap = |side: Side| {
        c.memory
            .iter()
            .find(|m| {
                m.stack.name() == stack && side.is(&m.group, m.auth.as_deref(), baseline_auth)
            })
            .map(|m| m.per_connection.heap_bytes)
    };
    Some(heap(changed)? - heap(baseline)?)
}

/// In-memory server handshakes per core-second of `changed` over those of `baseline`, same stack
/// (what `pqprof capacity` stores as `vs_baseline` against the row it sets each one beside).
pub(crate) fn capacity_ratio(
    c: &Capacity,
    stack: &str,
    changed: Side,
    baseline: Side,
    baseline_auth: Option<&str>,
) -> Option<f64> {
    let rate = |side: Side| {
        c.in_memory
            .iter()
            .find(|m| {
                m.stack.name() == stack && side.is(&m.group, m.auth.as_deref(), baseline_auth)
            })
            .map(|m| m.server_per_core_s)
    };
    let (a, b) = (rate(changed)?, rate(baseline)?);
    (b > 0.0).then(|| a / b)
}

/// The two cells a network difference sets against each other, `changed` and `baseline`, same
/// stack, at the grid point of RTT `rtt_ns` (within 1%: a grid stores its RTTs as its milliseconds
/// times 1e6) and `loss_pct`.
fn cells_at<'a>(
    n: &'a Network,
    stack: &str,
    (changed, baseline): (Side, Side),
    baseline_auth: Option<&str>,
    rtt_ns: f64,
    loss_pct: f64,
) -> Option<(&'a crate::results::Cell, &'a crate::results::Cell)> {
    let p = n
        .points
        .iter()
        .find(|p| (p.rtt_ns - rtt_ns).abs() <= rtt_ns * 0.01 && p.loss_pct == loss_pct)?;
    let cell = |side: Side| {
        p.cells.iter().find(|c| {
            c.stack.name() == stack && side.is(&c.group, c.auth.as_deref(), baseline_auth)
        })
    };
    Some((cell(changed)?, cell(baseline)?))
}

/// Median connect-to-complete time of `changed` minus `baseline`'s (`cells_at`).
pub(crate) fn network_extra_ns(
    n: &Network,
    stack: &str,
    sides: (Side, Side),
    baseline_auth: Option<&str>,
    rtt_ns: f64,
    loss_pct: f64,
) -> Option<f64> {
    let (a, b) = cells_at(n, stack, sides, baseline_auth, rtt_ns, loss_pct)?;
    Some(a.ready_median_ns(n)? - b.ready_median_ns(n)?)
}

/// The 95% interval of `network_extra_ns`: the difference of two cells' p50s, each with its
/// distribution-free interval (`figures::network::ready_intervals`), the two cells' handshakes
/// independent, so the half-widths add in quadrature about the difference. None where either
/// cell has no interval.
pub(crate) fn network_extra_interval_ns(
    n: &Network,
    stack: &str,
    sides: (Side, Side),
    baseline_auth: Option<&str>,
    rtt_ns: f64,
    loss_pct: f64,
) -> Option<(f64, f64)> {
    let (a, b) = cells_at(n, stack, sides, baseline_auth, rtt_ns, loss_pct)?;
    let half = |c: &crate::results::Cell| c.ready_p50_ci95_ns.map(|(lo, hi)| (hi - lo) / 2.0);
    let h = half(a)?.hypot(half(b)?);
    let d = a.ready_median_ns(n)? - b.ready_median_ns(n)?;
    Some((d - h, d + h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_difference_is_read_where_it_is_against_the_baseline_and_equals_the_resampled_one() {
        // The last committed run by name of the paired design: every scenario's stored difference, read
        // by the pages, agrees with the one resampled from the connections (check's tolerance), its
        // share too; against any other scenario the connections are resampled.
        let r = crate::results::committed(false)
            .iter()
            .rev()
            .filter_map(|p| crate::results::read(p).ok())
            .find(|r| super::super::handshake::DeltaPairing::of_run(r).is_some())
            .expect("a committed run of the paired design");
        let pairing = super::super::handshake::DeltaPairing::of_run(&r).unwrap();
        let h = r.handshakes.as_ref().unwrap();
        let mut read = 0;
        for s in &h.scenarios {
            let Some(a) = &s.against else { continue };
            let Some(b) = h
                .scenarios
                .iter()
                .find(|x| x.is(a, &s.stack, s.instrumented) && x.mode == s.mode)
            else {
                continue;
            };
            let Some(kept) = stored(s, b, pairing) else {
                continue;
            };
            use super::super::handshake::{paired_connections, Connections};
            let fresh =
                paired_connections(Connections::of(s), Connections::of(b), pairing).unwrap();
            let close = |x: f64, y: f64| stats::agrees(x, y, crate::check::TOLERANCE_PCT);
            assert!(close(kept.median_ns, fresh.median_ns), "{}", s.name());
            assert!(close(kept.lo95_ns, fresh.lo95_ns) && close(kept.hi95_ns, fresh.hi95_ns));
            assert_eq!((kept.pairs, kept.form), (fresh.pairs, fresh.form));
            assert_eq!(kept.share.is_some(), fresh.share.is_some());
            if let (Some(x), Some(y)) = (kept.share, fresh.share) {
                assert!(close(x.0, y.0) && close(x.1, y.1) && close(x.2, y.2));
            }
            // Against itself nothing is stored: the connections are resampled.
            assert!(stored(s, s, pairing).is_none());
            read += 1;
        }
        assert!(read >= 10, "{read} stored differences read");
    }

    #[test]
    fn the_calls_state_sums_every_call_and_names_the_one_that_moves_most() {
        let g = |label: &str, extra_ns: f64| Gap {
            label: label.into(),
            implementation: String::new(),
            ratio: 1.0,
            in_state: true,
            extra_ns,
        };
        // The hybrid's key exchange +12 and its signing +3; the baseline's X25519 -2 (a call the
        // hybrid does not make) and its signing +1: 15 - (-1) = 16.
        let changed = vec![g("kx.encaps", 12.0), g("sig.sign", 3.0)];
        let baseline = vec![g("dh.derive", -2.0), g("sig.sign", 1.0)];
        assert_eq!(excess_delta(&changed, &baseline), 16.0);
        // By label: kx.encaps 12 - 0, sig.sign 3 - 1 = 2; the largest is kx.encaps.
        let most = largest_of(changed.clone(), &baseline).unwrap();
        assert_eq!((most.label.as_str(), most.extra_ns), ("kx.encaps", 12.0));
        // The largest either way: a call 20 cheaper than the baseline's same one.
        let most = largest_of(vec![g("sig.sign", -19.0), g("kx.encaps", 5.0)], &baseline).unwrap();
        assert_eq!((most.label.as_str(), most.extra_ns), ("sig.sign", -20.0));
        // A call only the baseline makes counts against the difference, as in the sum.
        let most = largest_of(vec![g("kx.encaps", 2.0)], &[g("dh.derive", 7.0)]).unwrap();
        assert_eq!((most.label.as_str(), most.extra_ns), ("dh.derive", -7.0));
        assert_eq!(
            excess_delta(&[g("kx.encaps", 2.0)], &[g("dh.derive", 7.0)]),
            -5.0
        );
    }

    #[test]
    fn the_host_part_is_the_baseline_medians_share_of_the_difference() {
        // A baseline median of 1,000 with 950-1,070: half-width 60, 6% of it; a difference of
        // -100 carries 6 of it, whatever its sign.
        assert_eq!(host_part(-100.0, 1000.0, (950.0, 1070.0)), Some(6.0));
        assert_eq!(host_part(100.0, 0.0, (0.0, 1.0)), None);
    }

    #[test]
    fn the_answer_serves_the_hybrid_and_the_chain_first() {
        let e = "ECDSA-P256";
        assert!(answers("tls13", "X25519MLKEM768", Some(e), e));
        assert!(answers("ssh", "mlkem768x25519-sha256", None, e));
        assert!(answers("tls13", "X25519MLKEM768", Some("ML-DSA-65"), e));
        assert!(!answers("tls13", "MLKEM768", Some("ML-DSA-65"), e));
        // Either side of a row: the baselines and the post-quantum row too.
        assert!(in_answer("tls13", "X25519", Some(e), e));
        assert!(in_answer("tls13", "X25519MLKEM768", Some(e), e));
        assert!(in_answer("tls13", "X25519MLKEM768", Some("ML-DSA-65"), e));
        assert!(in_answer("tls13", "MLKEM768", Some("ML-DSA-65"), e));
        assert!(in_answer("ssh", "curve25519-sha256", None, e));
        assert!(!in_answer("tls13", "X25519", Some("ML-DSA-65"), e));
        assert!(!in_answer("tls13", "X25519MLKEM768", Some("ML-DSA-44"), e));
        assert!(!in_answer("tls13", "SecP256r1MLKEM768", Some(e), e));
        assert!(!in_answer("tls13", "MLKEM768", Some(e), e));
        // Baselines, other chains and other groups are not rows of their own.
        assert!(!answers("tls13", "X25519", Some(e), e));
        assert!(!answers("ssh", "curve25519-sha256", None, e));
        assert!(!answers("tls13", "X25519MLKEM768", Some("ML-DSA-44"), e));
        assert!(!answers("tls13", "MLKEM768", Some(e), e));
        assert!(!answers("ssh", "X25519MLKEM768", None, e));
    }

    #[test]
    fn a_side_without_an_authentication_is_the_baseline_one_or_none() {
        let hybrid = Side::parse("X25519MLKEM768");
        let mldsa = Side::parse("X25519MLKEM768 + ML-DSA-65");
        assert_eq!(mldsa.auth, Some("ML-DSA-65"));
        let ecdsa = Some("ECDSA-P256");
        // A file of schema 3: every entry names its authentication.
        assert!(hybrid.is("X25519MLKEM768", ecdsa, ecdsa));
        assert!(!hybrid.is("X25519MLKEM768", Some("ML-DSA-65"), ecdsa));
        assert!(mldsa.is("X25519MLKEM768", Some("ML-DSA-65"), ecdsa));
        assert!(!mldsa.is("X25519MLKEM768", ecdsa, ecdsa));
        assert!(!mldsa.is("X25519", Some("ML-DSA-65"), ecdsa));
        // An older file, or SSH: no entry names one, and a side without one takes them.
        assert!(hybrid.is("X25519MLKEM768", None, None));
        assert!(!mldsa.is("X25519MLKEM768", None, None));
        // A baseline side written out matches an older entry of the baseline.
        assert!(Side::parse("X25519 + ECDSA-P256").is("X25519", None, ecdsa));
    }

    #[test]
    fn a_difference_is_an_answer_only_where_its_interval_supports_it() {
        // +55 µs (45-73): clear of zero and 28 µs wide.
        assert!(resolved(55.0, (45.0, 73.0)));
        // The Zen 3 run's -88.5 µs (-182 to +219) holds zero.
        assert!(!resolved(-88.5, (-182.0, 219.0)));
        // +192 µs (27-434) is clear of zero but 407 µs wide: wider than itself.
        assert!(!resolved(192.0, (27.0, 434.0)));
        // Exactly as wide as itself still answers; a negative difference likewise.
        assert!(resolved(10.0, (5.0, 15.0)));
        assert!(resolved(-10.0, (-15.0, -5.0)));
        assert!(!resolved(f64::NAN, (1.0, 2.0)));
        assert!(Term {
            mean: 10.0,
            half95: 5.0
        }
        .resolved());
        assert!(!Term {
            mean: 10.0,
            half95: 5.1
        }
        .resolved());
    }

    #[test]
    fn the_explained_shares_terms_by_hand() {
        use crate::results::{InSitu, InSituConnection};
        let conn = |total: u64, client: u64, server: u64| InSituConnection {
            total_ns: total,
            client: vec![client],
            server: vec![server],
            remainder_ns: total as i64 - (client + server) as i64,
            ..Default::default()
        };
        let a = InSitu {
            connections: vec![conn(110, 30, 20), conn(130, 32, 22), conn(120, 31, 21)],
            ..Default::default()
        };
        let b = InSitu {
            connections: vec![conn(100, 20, 10), conn(118, 22, 12), conn(109, 21, 11)],
            ..Default::default()
        };
        // Paired: crypto differences 20, 20, 20 (no spread); totals 10, 12, 11: mean 11, sd 1,
        // half-width t(2) x 1 / sqrt 3 = 4.303 / 1.732.
        let (c, t) = explained_terms(&a, &b, true).unwrap();
        assert_eq!(
            c,
            Term {
                mean: 20.0,
                half95: 0.0
            }
        );
        assert!((t.mean - 11.0).abs() < 1e-12);
        assert!((t.half95 - 4.303 / 3f64.sqrt()).abs() < 1e-9, "{t:?}");
        // Unpaired: each side's own spread, in quadrature (totals sd 10 and 9).
        let (c, t) = explained_terms(&a, &b, false).unwrap();
        assert!((c.mean - 20.0).abs() < 1e-12 && (t.mean - 11.0).abs() < 1e-12);
        let h = |sd: f64| 4.303 * sd / 3f64.sqrt();
        assert!((t.half95 - h(10.0).hypot(h(9.0))).abs() < 1e-9, "{t:?}");
        assert!(t.half95 > 11.0);
        // One record: no interval.
        let one = InSitu {
            connections: vec![conn(1, 0, 0)],
            ..Default::default()
        };
        assert_eq!(explained_terms(&one, &b, true), None);
    }

    #[test]
    fn paired_delta_by_hand() {
        // Rounds 10, 20, 30 against 13, 22, 35: differences 3, 2, 5, median 3; every resample's
        // median is one of the differences, so the interval lies within [2, 5].
        let d = paired_delta(&[13.0, 22.0, 35.0], &[10.0, 20.0, 30.0]).unwrap();
        assert_eq!((d.median_ns, d.pairs, d.block), (3.0, 3, 0));
        assert!(2.0 <= d.lo95_ns && d.lo95_ns <= 3.0 && 3.0 <= d.hi95_ns && d.hi95_ns <= 5.0);
        // Deterministic: the same rounds give the same interval.
        assert_eq!(
            paired_delta(&[13.0, 22.0, 35.0], &[10.0, 20.0, 30.0]),
            Some(d)
        );
    }

    #[test]
    fn pairing_cancels_what_both_rounds_share() {
        // The host drifts from 100 to 400 over the rounds; the change adds exactly 1 to each. Paired,
        // the interval is exactly [1, 1]; unpaired medians would differ by 1 with an interval as
        // wide as the drift.
        let base = [100.0, 200.0, 300.0, 400.0];
        let changed = [101.0, 201.0, 301.0, 401.0];
        let d = paired_delta(&changed, &base).unwrap();
        assert_eq!((d.median_ns, d.lo95_ns, d.hi95_ns), (1.0, 1.0, 1.0));
        // A negative change stays negative.
        let d = paired_delta(&base, &changed).unwrap();
        assert_eq!((d.median_ns, d.lo95_ns, d.hi95_ns), (-1.0, -1.0, -1.0));
    }

    #[test]
    fn paired_delta_refuses_what_cannot_be_paired() {
        assert_eq!(paired_delta(&[1.0, 2.0], &[1.0]), None);
        assert_eq!(paired_delta(&[1.0], &[1.0]), None);
        assert_eq!(paired_delta(&[], &[]), None);
        assert_eq!(paired_delta(&[1.0, f64::NAN], &[1.0, 2.0]), None);
    }

    #[test]
    fn a_difference_moves_by_the_floor_of_both_medians() {
        // 300 µs - 200 µs: each may move 5%, 15 + 10 µs, so the difference by 25 µs either way.
        assert_eq!(floor_half_width(300.0, 200.0, 5.0), 25.0);
        assert_eq!(floor_half_width(-1.0, 1.0, 50.0), 1.0);
    }

    #[test]
    fn wire_delta_by_hand() {
        // X25519MLKEM768 against X25519 on rustls: 1,562 / 1,828 against 378 / 739.5 bytes.
        assert_eq!(
            wire_delta((1562.0, 1828.0), (378.0, 739.5)),
            (1184.0, 1088.5)
        );
    }

    #[test]
    fn shares_by_hand() {
        assert_eq!(
            share_pct(49.0, 56.0).map(|s| (s * 1e6).round()),
            Some(87_500_000.0)
        );
        assert_eq!(share_pct(-5.0, 20.0), Some(-25.0));
        assert_eq!(share_pct(5.0, 0.5), None);
        assert_eq!(share_pct(f64::NAN, 20.0), None);
    }

    fn cell(stack: &str, group: &str, p50_ms: f64) -> serde_json::Value {
        serde_json::json!({
            "protocol": "tls13", "stack": stack, "group": group, "baseline": null,
            "ready_ns": [], "echo_ns": [], "failed": 0,
            "ready_percentiles_ns": [p50_ms * 0.9e6, p50_ms * 1e6, p50_ms * 1.2e6],
            "echo_percentiles_ns": [], "ready_mean_ns": 0.0,
            "packets": [0, 0], "bytes": [0, 0], "data_packets": [0, 0], "dropped": [0, 0],
            "packets_per_handshake": [0.0, 0.0], "bytes_per_handshake": [0.0, 0.0],
            "observed_loss_pct": [0.0, 0.0], "client_busy_pct": 0.0, "server_busy_pct": 0.0,
            "model": {"zero_ns": 0.0, "round_trips": 2.0, "data_packets": [0.0, 0.0],
                      "bytes": [0.0, 0.0], "expected_ns": 0.0}
        })
    }

    #[test]
    fn network_extra_by_hand() {
        let point = |rtt_ms: f64, loss: f64, hybrid_ms: f64| {
            serde_json::json!({
                "rtt_ns": rtt_ms * 1e6, "loss_pct": loss,
                "link": {"connect_ns": [], "rtt_median_ns": 0.0, "tolerance_ns": 0.0, "valid": true},
                "cells": [cell("rustls", "X25519", 12.0), cell("rustls", "X25519MLKEM768", hybrid_ms)]
            })
        };
        let n: Network = serde_json::from_value(serde_json::json!({
            "date_utc": "", "wall_seconds": 0.0, "emulator": "", "grid": "", "congestion_control": "",
            "offloads_off": true, "base_rtt_ns": 0.0, "offset_ns": 0.0, "parallel": 1, "per_point": 1,
            "percentiles": [25.0, 50.0, 75.0],
            "points": [point(5.6, 0.0, 12.5), point(5.6, 1.0, 20.0), point(78.7, 0.0, 11.0)]
        }))
        .unwrap();
        let sides = (Side::parse("X25519MLKEM768"), Side::parse("X25519"));
        let extra = |rtt_ms: f64, loss: f64| {
            network_extra_ns(&n, "rustls", sides, None, rtt_ms * 1e6, loss)
        };
        // The 50th percentile is the second stored: 12.5 - 12 ms, 11 - 12 ms.
        assert!((extra(5.6, 0.0).unwrap() - 0.5e6).abs() < 1e-3);
        assert!((extra(78.7, 0.0).unwrap() + 1.0e6).abs() < 1e-3);
        assert!((extra(5.6, 1.0).unwrap() - 8.0e6).abs() < 1e-3);
        assert_eq!(extra(31.2, 0.0), None);
        assert_eq!(
            network_extra_ns(&n, "openssl", sides, None, 5.6e6, 0.0),
            None
        );
        // No cell names ML-DSA-65: a side that asks for it finds nothing.
        let mldsa = (Side::parse("X25519MLKEM768 + ML-DSA-65"), sides.0);
        assert_eq!(
            network_extra_ns(&n, "rustls", mldsa, None, 5.6e6, 0.0),
            None
        );
    }

    #[test]
    fn memory_delta_by_hand() {
        let held = |group: &str, auth: &str, heap: f64| {
            serde_json::json!({
                "stack": "openssl", "group": group, "auth": auth, "steps": [],
                "per_connection": {"connections": 10, "heap_bytes": heap, "heap_rust_bytes": 0.0,
                    "heap_c_bytes": heap, "rss_bytes": 0.0, "kernel_bytes": 0.0,
                    "kernel_slab_bytes": 0.0, "page_bytes": 4096},
                "peak_bytes": [], "retained_bytes": [], "peak_median_bytes": 0.0,
                "retained_median_bytes": 0.0, "failures": 0
            })
        };
        let c: Capacity = serde_json::from_value(serde_json::json!({
            "date_utc": "", "wall_seconds": 0.0, "cores": 2, "server_core": null, "load_core": null,
            "fd_limit_before": 0, "fd_limit": 0, "in_memory": [], "sockets": [],
            "memory": [held("X25519", "ECDSA-P256", 21_119.5),
                       held("X25519MLKEM768", "ECDSA-P256", 27_649.0),
                       held("X25519MLKEM768", "ML-DSA-65", 40_000.0)]
        }))
        .unwrap();
        let ecdsa = Some("ECDSA-P256");
        let (hybrid, classical) = (Side::parse("X25519MLKEM768"), Side::parse("X25519"));
        let mldsa = Side::parse("X25519MLKEM768 + ML-DSA-65");
        assert_eq!(
            memory_delta_bytes(&c, "openssl", hybrid, classical, ecdsa),
            Some(6_529.5)
        );
        // The ML-DSA-65 chain's connection against the same group's ECDSA one.
        assert_eq!(
            memory_delta_bytes(&c, "openssl", mldsa, hybrid, ecdsa),
            Some(12_351.0)
        );
        assert_eq!(
            memory_delta_bytes(&c, "rustls", hybrid, classical, ecdsa),
            None
        );
    }

    #[test]
    fn a_network_extra_carries_both_cells_intervals_in_quadrature() {
        let cell = |group: &str, p50_ms: f64, half_ms: f64| {
            serde_json::json!({
                "protocol": "tls13", "stack": "rustls", "group": group, "auth": "ECDSA-P256",
                "baseline": null, "ready_ns": [], "echo_ns": [], "failed": 0,
                "ready_percentiles_ns": [p50_ms * 1e6],
                "ready_p50_ci95_ns": [(p50_ms - half_ms) * 1e6, (p50_ms + half_ms) * 1e6],
                "echo_percentiles_ns": [0.0], "ready_mean_ns": p50_ms * 1e6,
                "packets": [0, 0], "bytes": [0, 0], "data_packets": [0, 0], "dropped": [0, 0],
                "packets_per_handshake": [0.0, 0.0], "bytes_per_handshake": [0.0, 0.0],
                "observed_loss_pct": [0.0, 0.0], "client_busy_pct": 0.0, "server_busy_pct": 0.0,
                "model": {"zero_ns": 0.0, "round_trips": 2.0, "data_packets": [0.0, 0.0],
                          "bytes": [0.0, 0.0], "expected_ns": 0.0}
            })
        };
        let n: Network = serde_json::from_value(serde_json::json!({
            "date_utc": "", "wall_seconds": 0.0, "emulator": "nfqueue", "grid": "default",
            "congestion_control": "cubic", "offloads_off": true, "rate_mbit": null,
            "base_rtt_ns": 0.0, "offset_ns": 0.0, "parallel": 1, "per_point": 1,
            "percentiles": [50.0],
            "points": [{"rtt_ns": 5.6e6, "loss_pct": 0.0,
                "link": {"connect_ns": [], "rtt_median_ns": 5.6e6, "tolerance_ns": 3e5, "valid": true},
                "cells": [cell("X25519", 12.0, 0.09), cell("X25519MLKEM768", 12.5, 0.12)]}]
        }))
        .unwrap();
        let sides = (Side::parse("X25519MLKEM768"), Side::parse("X25519"));
        // +0.5 ms, half-width sqrt(0.09^2 + 0.12^2) = 0.15 ms.
        let (lo, hi) =
            network_extra_interval_ns(&n, "rustls", sides, Some("ECDSA-P256"), 5.6e6, 0.0).unwrap();
        assert!(
            (lo - 0.35e6).abs() < 1e-3 && (hi - 0.65e6).abs() < 1e-3,
            "{lo} {hi}"
        );
        assert_eq!(
            network_extra_interval_ns(&n, "rustls", sides, None, 78.7e6, 0.0),
            None
        );
    }
}
