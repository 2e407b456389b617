//! The composed difference of two handshakes as a difference of medians (#37).
//!
//! A handshake's median is not the sum of its calls' medians. ML-DSA signing repeats until a
//! candidate passes (FIPS 204, Algorithm 7), so its calls are skewed, their mean well above their
//! median. Added to the rest of a handshake, whose own spread is wide, a skewed call moves the
//! median of the sum by more than its own median; summing medians loses that. So the
//! difference a flow predicts is taken here as the shift of a median: the baseline's own
//! connections (their totals, which hold the stack's own work and its spread), each with the calls
//! that differ drawn from their samples and placed along the flows' critical paths.

use crate::algorithm::Kind;
use crate::derived::{self, Key};
use crate::results::{Flow, Phase, PhaseId};
use crate::stats::{self, SplitMix64};

/// Draws of the shifted median: enough that the draws' own error in a median (for a normal spread
/// 1.25 σ / √n; a skewed one differs, not by orders) stays far below the real difference's
/// interval.
pub const DRAWS: usize = 20_000;
const SEED: u64 = 0x0073_6869_6674; // "shift"

/// The samples a call is drawn from, where it has single calls' samples: its calls timed in a
/// handshake's state (`Phase::situ`), else, in files before them, the loop's samples of a key
/// exchange or signature timed a call at a time. Other calls (a transcript's hash blocks, the
/// key schedule) count at their median: short, steady, and timed in batches whose means do not
/// spread as single calls do. So does a call a flow splits between two segments (a leaf chain's
/// verifications, 1.33 and 0.67 a segment): no whole call to draw.
fn single_calls(q: &Phase) -> Option<&[u64]> {
    match &q.situ {
        Some(s) => (!s.samples_ns.is_empty()).then_some(&s.samples_ns[..]),
        None => (q.batch == 1
            && matches!(q.operation.kind(), Kind::Kem | Kind::Dh | Kind::Sig)
            && !q.samples_ns.is_empty())
        .then_some(&q.samples_ns[..]),
    }
}

/// A flow as its stack ran it (`figures::timeline::as_run`): its segments and their overlap as
/// run, and per segment the stack's own work beside the calls (0 where none is known).
#[derive(Debug, Clone, PartialEq)]
pub struct Ran {
    pub flow: Flow,
    pub own_ns: Vec<f64>,
}

impl Ran {
    /// The flow as declared: its own overlap, no own work.
    pub fn declared(flow: &Flow) -> Ran {
        Ran {
            own_ns: vec![0.0; flow.segments.len()],
            flow: flow.clone(),
        }
    }

    /// The critical path with the segments at their medians in state and their own work.
    pub fn latency_ns(&self) -> f64 {
        let values: Vec<f64> = self
            .flow
            .segments
            .iter()
            .zip(&self.own_ns)
            .map(|(s, own)| s.median_ns + own)
            .collect();
        path_length(&self.flow, values)
    }
}

/// The critical path's length when `flow`'s segments take `values`: each in turn, each
/// overlapping pair by its longer (`flow::on_path`).
fn path_length(flow: &Flow, values: Vec<f64>) -> f64 {
    crate::flow::on_path(&flow.segments, &values, &flow.overlap)
        .into_iter()
        .zip(values)
        .filter_map(|(counted, v)| counted.then_some(v))
        .sum()
}

/// A flow made ready to draw: per segment, the calls at their median with its own work, and the
/// calls drawn, each as (index into the shared pools, how many calls); and the overlapping pairs
/// that `flow::on_path` takes, as indices (which pairs count does not depend on the values).
struct Ready {
    fixed: Vec<f64>,
    drawn: Vec<Vec<(usize, usize)>>,
    pairs: Vec<(usize, usize)>,
}

/// Places a flow's parts: a part whose phase has single calls' samples and a whole count is
/// drawn (its pool added to `pools` once, by phase); any other at count × its in-state median.
/// `None` where a phase is missing.
fn ready<'a>(
    ran: &'a Ran,
    phases: &'a [Phase],
    pools: &mut Vec<(PhaseId, &'a [u64])>,
) -> Option<Ready> {
    let flow = &ran.flow;
    let mut fixed = Vec::with_capacity(flow.segments.len());
    let mut drawn = Vec::with_capacity(flow.segments.len());
    for (seg, own) in flow.segments.iter().zip(&ran.own_ns) {
        let (mut ns, mut calls) = (0.0, Vec::new());
        for p in &seg.parts {
            let id = PhaseId::handshake(&p.backend, &p.algorithm, p.operation);
            let q = crate::results::find_phase(phases, &id)?;
            let whole = p.count.round();
            match single_calls(q) {
                Some(xs) if whole >= 1.0 && (p.count - whole).abs() < 1e-6 => {
                    let k = match pools.iter().position(|(i, _)| *i == id) {
                        Some(k) => k,
                        None => {
                            pools.push((id, xs));
                            pools.len() - 1
                        }
                    };
                    calls.push((k, whole as usize));
                }
                _ => ns += p.count * crate::flow::in_state(q).0,
            }
        }
        fixed.push(ns + own);
        drawn.push(calls);
    }
    Some(Ready {
        fixed,
        drawn,
        pairs: crate::flow::overlapping_pairs(&flow.segments, &flow.overlap),
    })
}

impl Ready {
    /// The critical path of one draw. Each pool's k-th call in a draw is the same sample in every
    /// flow (`rngs` seeded per draw and pool), so calls both flows make cancel exactly, except
    /// inside a pair of segments the stack runs at once, where a shared call can decide which
    /// of the two is the longer. `values` and `counted` are scratch, reused between draws.
    fn path(
        &self,
        pools: &[(PhaseId, &[u64])],
        rngs: &mut [SplitMix64],
        seeds: &[u64],
        (values, counted): (&mut Vec<f64>, &mut Vec<bool>),
    ) -> f64 {
        for (r, s) in rngs.iter_mut().zip(seeds) {
            *r = SplitMix64(*s);
        }
        values.clear();
        for (ns, calls) in self.fixed.iter().zip(&self.drawn) {
            let mut drawn = 0.0;
            for &(k, n) in calls {
                let xs = pools[k].1;
                let mut sum = 0.0;
                for _ in 0..n {
                    sum += xs[rngs[k].below(xs.len())] as f64;
                }
                drawn += sum;
            }
            values.push(ns + drawn);
        }
        counted.clear();
        counted.resize(values.len(), true);
        for &(i, j) in &self.pairs {
            counted[if values[i] >= values[j] { j } else { i }] = false;
        }
        values
            .iter()
            .zip(counted.iter())
            .filter_map(|(v, &c)| c.then_some(*v))
            .sum()
    }

    /// What a draw depends on, in a stable form (`Key`): the values fixed per segment, the calls
    /// drawn, the pairs and the segment count.
    fn feed(&self, key: &mut Key) {
        key.usize(self.fixed.len());
        for (ns, calls) in self.fixed.iter().zip(&self.drawn) {
            key.f64(*ns);
            key.usize(calls.len());
            for &(k, n) in calls {
                key.usize(k);
                key.usize(n);
            }
        }
        key.usize(self.pairs.len());
        for &(i, j) in &self.pairs {
            key.usize(i);
            key.usize(j);
        }
    }
}

/// What the flows predict of `changed`'s median connection against `baseline`'s, whose
/// connections took `totals`: the median of (a baseline connection + the critical path of
/// `changed` - that of `baseline`, the calls drawn) less the median of those baseline
/// connections, over `DRAWS` draws with a fixed seed. Equal flows give 0; flows whose calls are
/// all counted at their medians give the difference of the paths. `None` without connections or
/// where a phase is missing. Computed once per inputs (`derived::figure`).
pub fn median_shift(
    changed: &Ran,
    baseline: &Ran,
    phases: &[Phase],
    totals: &[u64],
) -> Option<f64> {
    if totals.is_empty() {
        return None;
    }
    let mut pools = Vec::new();
    let a = ready(changed, phases, &mut pools)?;
    let b = ready(baseline, phases, &mut pools)?;
    let mut key = Key::new("median_shift");
    key.usize(DRAWS);
    key.u64(SEED);
    a.feed(&mut key);
    b.feed(&mut key);
    key.usize(pools.len());
    for (_, xs) in &pools {
        key.u64s(xs);
    }
    key.u64s(totals);
    derived::figure(key, || vec![draw(&a, &b, &pools, totals)])
        .first()
        .copied()
}

/// The draws themselves (`median_shift`).
fn draw(a: &Ready, b: &Ready, pools: &[(PhaseId, &[u64])], totals: &[u64]) -> f64 {
    let mut rng = SplitMix64(SEED);
    let mut rngs = vec![SplitMix64(0); pools.len()];
    let mut seeds = vec![0; pools.len()];
    let (mut values, mut counted) = (Vec::new(), Vec::new());
    let (mut shifted, mut base) = (Vec::with_capacity(DRAWS), Vec::with_capacity(DRAWS));
    for _ in 0..DRAWS {
        for s in seeds.iter_mut() {
            *s = rng.next_u64();
        }
        let t = totals[rng.below(totals.len())] as f64;
        let d = a.path(pools, &mut rngs, &seeds, (&mut values, &mut counted))
            - b.path(pools, &mut rngs, &seeds, (&mut values, &mut counted));
        shifted.push(t + d);
        base.push(t);
    }
    stats::median(&shifted) - stats::median(&base)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithm::Operation;
    use crate::results::{FlowPart, Form, Segment, Side};

    fn phase(op: Operation, algorithm: &str, samples: Vec<u64>) -> Phase {
        crate::figures::measured_phase(
            PhaseId {
                backend: "b".into(),
                algorithm: algorithm.into(),
                operation: op,
                form: Form::Handshake,
            },
            samples,
            crate::figures::Measured::bare(),
        )
    }

    fn seg(name: &str, side: Side, parts: &[(Operation, &str, f64)]) -> Segment {
        Segment {
            name: name.into(),
            side,
            parts: parts
                .iter()
                .map(|&(operation, algorithm, count)| FlowPart {
                    backend: "b".into(),
                    algorithm: algorithm.into(),
                    operation,
                    count,
                })
                .collect(),
            median_ns: 0.0,
        }
    }

    fn flow(segments: Vec<Segment>, overlap: &[(&str, &str)]) -> Flow {
        Flow {
            segments,
            overlap: overlap
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
            client_ns: 0.0,
            server_ns: 0.0,
            latency_ns: 0.0,
            client_half95_ns: 0.0,
            server_half95_ns: 0.0,
            latency_half95_ns: 0.0,
        }
    }

    /// A toy: the server signs with `sig`, the client verifies once; a hash block at its median.
    fn toy(sig: &str) -> Ran {
        Ran::declared(&flow(
            vec![
                seg("sign", Side::Server, &[(Operation::SigSign, sig, 1.0)]),
                seg(
                    "check",
                    Side::Client,
                    &[
                        (Operation::SigVerify, "V", 1.0),
                        (Operation::HashBlock, "H", 2.0),
                    ],
                ),
            ],
            &[],
        ))
    }

    /// The toy with the server's signing and the client's check run at once.
    fn over(sig: &str) -> Ran {
        let mut f = toy(sig);
        f.flow.overlap = vec![("sign".into(), "check".into())];
        f
    }

    fn phases() -> Vec<Phase> {
        vec![
            // A steady signature, and a skewed one: 3 of 5 calls 100, 2 of 5 300 (a second pass).
            phase(Operation::SigSign, "E", vec![10; 4]),
            phase(Operation::SigSign, "M", vec![100, 100, 100, 300, 300]),
            phase(Operation::SigSign, "F", vec![40; 3]),
            phase(Operation::SigVerify, "V", vec![20, 20, 40]),
            phase(Operation::HashBlock, "H", vec![5, 5]),
        ]
    }

    #[test]
    fn equal_flows_shift_nothing_and_steady_calls_shift_by_their_difference() {
        let p = phases();
        // The same flow: every call drawn alike on both sides.
        assert_eq!(
            median_shift(&toy("M"), &toy("M"), &p, &[1000, 1010]),
            Some(0.0)
        );
        // A steady signature of 10 against one of 40: +30 in every draw, whatever the
        // baseline's connections.
        assert_eq!(
            median_shift(&toy("F"), &toy("E"), &p, &[1000, 1003, 1500]),
            Some(30.0)
        );
        // No connections, or a phase not measured: nothing.
        assert_eq!(median_shift(&toy("M"), &toy("E"), &p, &[]), None);
        assert_eq!(median_shift(&toy("X"), &toy("E"), &p, &[1000]), None);
    }

    #[test]
    fn a_skewed_call_shifts_the_median_by_what_the_draws_give_not_by_its_median() {
        let p = phases();
        // Baseline connections all 1000: the shifted ones are 1000 - 10 + 100 (3 in 5) or
        // + 300 (2 in 5); their median is 1090, +90, what the medians' difference gives.
        assert_eq!(median_shift(&toy("M"), &toy("E"), &p, &[1000]), Some(90.0));
        // Baseline connections 1000 (2 in 3) or 1400 (1 in 3), median 1000. Shifted: 1090 with
        // 2/3 x 3/5 = 0.4, 1290 with 2/3 x 2/5 = 0.27, then 1490 and 1690: the median is 1290,
        // +290. The medians' difference (+90) and even the means' (+170) fall short.
        assert_eq!(
            median_shift(&toy("M"), &toy("E"), &p, &[1000, 1000, 1400]),
            Some(290.0)
        );
    }

    #[test]
    fn an_overlapping_pair_counts_its_longer_segment_in_each_draw() {
        let p = phases();
        // The server signs while the client checks: a verify of 20 (2 in 3) or 40, and two hash
        // blocks of 5, so the check takes 30 or 50. Signing 10 (E), the check is the longer in
        // every draw; signing 40 (F), max(40, 30) = 40 in 2 of 3 draws, 50 in the rest. The
        // difference is +10 in 2 of 3 draws and 0 in the rest, so the median shift is +10.
        assert_eq!(
            median_shift(&over("F"), &over("E"), &p, &[1000]),
            Some(10.0)
        );
        // Without the overlap the same change is +30 in every draw.
        assert_eq!(median_shift(&toy("F"), &toy("E"), &p, &[1000]), Some(30.0));
    }

    #[test]
    fn a_segments_own_work_counts_in_turn_and_hides_beside_a_longer_segment() {
        let p = phases();
        // 30 of the client's own work in its check (timeline::as_run). One after the other, it
        // is in both flows and cancels: +30 as without it. Run at once with the signing, it
        // makes the check 60 or 80: signing 10 (E) hides under it in every draw, signing 40 (F)
        // too, so the shift is 0 where without the own work it was +10.
        let own = |mut f: Ran| {
            f.own_ns[1] = 30.0;
            f
        };
        assert_eq!(
            median_shift(&own(toy("F")), &own(toy("E")), &p, &[1000]),
            Some(30.0)
        );
        assert_eq!(
            median_shift(&own(over("F")), &own(over("E")), &p, &[1000]),
            Some(0.0)
        );
        // The signing of 40 run at once with a check of 60-80 (F, overlapped) against a baseline
        // whose server wrote its whole flight after signing 10 (E, in turn): the check and the
        // own work are the baseline's path, beside which the scenario's signing hides: -10.
        assert_eq!(
            median_shift(&own(over("F")), &own(toy("E")), &p, &[1000]),
            Some(-10.0)
        );
    }

    #[test]
    fn each_draw_takes_a_shared_call_alike_in_both_flows_and_the_longer_of_a_pair() {
        let p = phases();
        let (fa, fb, ga, gb) = (toy("F"), toy("E"), over("F"), over("E"));
        let mut pools = Vec::new();
        let a = ready(&fa, &p, &mut pools).unwrap();
        let b = ready(&fb, &p, &mut pools).unwrap();
        let oa = ready(&ga, &p, &mut pools).unwrap();
        let ob = ready(&gb, &p, &mut pools).unwrap();
        // One pool per phase whatever the flow: E's and F's signatures and the verify; the hash
        // blocks count at their median.
        assert_eq!(pools.len(), 3);
        let mut rngs = vec![SplitMix64(0); pools.len()];
        let (mut values, mut counted) = (Vec::new(), Vec::new());
        let mut seen = [false; 2];
        for seed in 0..64u64 {
            let seeds: Vec<u64> = (0..pools.len() as u64).map(|k| seed * 31 + k).collect();
            let mut path =
                |x: &Ready| x.path(&pools, &mut rngs, &seeds, (&mut values, &mut counted));
            // The verify (20 or 40) drawn alike in both: the steady change alone, +30, in
            // every draw, where independent draws would give -20 or +50 in some.
            let (pa, pb) = (path(&a), path(&b));
            assert_eq!(pa - pb, 30.0, "seed {seed}");
            // At once: the longer of signing and the check (the verify and 10 of hash blocks).
            let check = pb - 10.0;
            assert_eq!(path(&oa), check.max(40.0), "seed {seed}");
            assert_eq!(path(&ob), check.max(10.0), "seed {seed}");
            seen[usize::from(check > 40.0)] = true;
        }
        // Both of the verify's values came up, so both branches of the longer were taken.
        assert_eq!(seen, [true, true]);
    }
}
