//! The overview page's section on the other handshake modes (figures::modes), per run that has
//! them: a row per stack and scenario setting the resumed handshake beside the full one (both
//! medians, what resumption saves, paired, what it keeps, the difference against the classical
//! baseline full and resumed, the server's first flight and CPU), and a row per stack setting the
//! ClientHello with two key shares beside the one with one (the paired difference, the
//! ClientHello's bytes and the client's CPU).

use super::answer::{half_us, interval_us};
use super::Run;
use crate::figures::answer::resolved;
use crate::figures::handshake::PairedDelta;
use crate::figures::modes::{self as fig, Pair};
use crate::results::{Capacity, Handshakes, Mode, Network};
use crate::units::{bytes, count, signed_time, time};
use serde::Serialize;

#[derive(Serialize)]
pub(crate) struct View {
    pub(crate) host: String,
    pub(crate) machine_id: String,
    /// The run has a network section to link to (a run cut off before it has none).
    pub(crate) has_network: bool,
    pub(crate) rows: Vec<Row>,
    pub(crate) key_shares: Vec<SharesRow>,
}

/// A stack's hybrid handshake with two key shares, or after a HelloRetryRequest, against the one
/// whose ClientHello offers the hybrid's share alone.
#[derive(Serialize)]
pub(crate) struct SharesRow {
    pub(crate) stack: String,
    pub(crate) mode: String,
    pub(crate) first_of_stack: bool,
    pub(crate) one: String,
    pub(crate) two: String,
    pub(crate) difference: Figure,
    /// The ClientHello's bytes, one share → two.
    pub(crate) hello: String,
    pub(crate) client_cpu: String,
}

#[derive(Serialize)]
pub(crate) struct Row {
    pub stack: String,
    pub(crate) scenario: String,
    pub(crate) first_of_stack: bool,
    pub(crate) full: String,
    pub(crate) resumed: String,
    /// Resumed minus full, paired, with its interval beneath (or "not resolved").
    pub(crate) saves: Figure,
    pub(crate) kept: String,
    /// Against the scenario it is compared with (the classical group, or the ECDSA chain): full,
    /// then resumed.
    pub(crate) delta_full: Figure,
    pub(crate) delta_resumed: Figure,
    pub(crate) flight: String,
    pub(crate) server_cpu: String,
    /// Handshakes per server core in memory, full → resumed, with the server's time beneath.
    pub(crate) capacity: Figure,
    /// The network cells' p50 without loss, full → resumed: at 5.6 ms, with 78.7 ms beneath.
    pub(crate) network: Figure,
}

#[derive(Serialize)]
pub(crate) struct Figure {
    pub(crate) text: String,
    pub(crate) sub: String,
}

/// A paired difference as the answer shows one: the figure and its interval where the interval
/// supports it, else "not resolved" with its half-width.
fn figure(d: Option<PairedDelta>) -> Figure {
    match d {
        Some(d) if resolved(d.median_ns, (d.lo95_ns, d.hi95_ns)) => Figure {
            text: signed_time(d.median_ns).replace('-', "−"),
            sub: interval_us(d.lo95_ns, d.hi95_ns),
        },
        Some(d) => Figure {
            text: "not resolved".into(),
            sub: half_us(d.lo95_ns, d.hi95_ns),
        },
        None => Figure {
            text: "–".into(),
            sub: String::new(),
        },
    }
}

/// A measured figure with the composition's beside it, beneath (where the run composed it).
fn composed(mut f: Figure, c: Option<f64>) -> Figure {
    if let Some(c) = c {
        let c = format!("composed {}", signed_time(c).replace('-', "−"));
        f.sub = if f.sub.is_empty() {
            c
        } else {
            format!("{} · {c}", f.sub)
        };
    }
    f
}

/// A scenario's stored paired difference from the one it is against.
fn stored(s: &crate::results::Scenario, h: &Handshakes) -> Option<PairedDelta> {
    let (lo, hi) = s.measured_delta_ci95_ns?;
    Some(PairedDelta {
        median_ns: s.measured_delta_ns?,
        lo95_ns: lo,
        hi95_ns: hi,
        pairs: s.measured_delta_pairs?,
        block: h.pair_block.unwrap_or(0),
        form: h.delta_form,
        share: None,
    })
}

/// The server's in-memory rate full → resumed and their ratio, with the mean server time each
/// rate is 1 / of.
fn capacity(c: Option<&Capacity>, s: &crate::results::Scenario) -> Figure {
    let rates = c.and_then(|c| fig::in_memory_rates(c, s.stack.name(), &s.suite, s.auth_name()));
    match rates {
        Some((f, r)) => Figure {
            text: format!(
                "{} → {}/s ×{:.2}",
                count(f.server_per_core_s),
                count(r.server_per_core_s),
                r.server_per_core_s / f.server_per_core_s
            ),
            sub: format!(
                "server mean {} → {}",
                time(f.server.mean_ns),
                time(r.server.mean_ns)
            ),
        },
        None => Figure {
            text: "–".into(),
            sub: String::new(),
        },
    }
}

/// The emulated network's p50 without loss, full → resumed, at each of the answer's RTTs, with
/// the round trips each cell's model counts.
fn network(n: Option<&Network>, s: &crate::results::Scenario) -> Figure {
    let at = |ms: f64| {
        let n = n?;
        let (f, r) = fig::network_cells(n, ms, s.stack.name(), &s.suite, s.auth_name())?;
        Some(format!(
            "{ms} ms: {} → {} ({} → {} round trips)",
            time(f.ready_median_ns(n)?),
            time(r.ready_median_ns(n)?),
            f.model.round_trips,
            r.model.round_trips
        ))
    };
    let cells: Vec<String> = super::answer::RTTS_MS
        .iter()
        .filter_map(|&ms| at(ms))
        .collect();
    match cells.split_first() {
        Some((first, rest)) => Figure {
            text: first.clone(),
            sub: rest.join(" · "),
        },
        None => Figure {
            text: "–".into(),
            sub: String::new(),
        },
    }
}

fn row(p: &Pair, h: &Handshakes, run: &crate::results::Results, first_of_stack: bool) -> Row {
    let c = run.capacity.as_ref();
    let (f, r) = (p.full, p.other);
    let flight = |s: &crate::results::Scenario| {
        s.evidence
            .server_flight_bytes
            .map_or("–".into(), |b| bytes(b as usize))
    };
    let (fm, rm) = fig::shared_medians(p).unwrap_or((f.median_ns, r.median_ns));
    Row {
        stack: r.stack.name().to_string(),
        scenario: format!("{} + {}", r.suite, r.auth_name().unwrap_or("")),
        first_of_stack,
        full: time(fm),
        resumed: time(rm),
        saves: composed(figure(fig::difference(p, h)), fig::composed_saving(run, r)),
        kept: fig::kept_pct(p).map_or("–".into(), |k| format!("{k:.0}%")),
        delta_full: composed(figure(stored(f, h)), f.composed_delta_ns),
        delta_resumed: composed(figure(stored(r, h)), r.composed_delta_ns),
        flight: format!("{} → {}", flight(f), flight(r)),
        server_cpu: format!("{} → {}", time(f.server_cpu_ns), time(r.server_cpu_ns)),
        capacity: capacity(c, r),
        network: network(run.network.as_ref(), r),
    }
}

fn shares_row(p: &Pair, h: &Handshakes, first_of_stack: bool) -> SharesRow {
    let hello = |s: &crate::results::Scenario| {
        s.evidence
            .client_hello_bytes
            .map_or("–".into(), |b| bytes(b as usize))
    };
    let (fm, om) = fig::shared_medians(p).unwrap_or((p.full.median_ns, p.other.median_ns));
    SharesRow {
        stack: p.other.stack.name().to_string(),
        mode: p.other.mode.suffix().to_string(),
        first_of_stack,
        one: time(fm),
        two: time(om),
        difference: figure(fig::difference(p, h)),
        hello: format!("{} → {}", hello(p.full), hello(p.other)),
        client_cpu: format!(
            "{} → {}",
            time(p.full.client_cpu_ns),
            time(p.other.client_cpu_ns)
        ),
    }
}

/// The plain scenarios of `modes` with their full twins, a stack's rows together (in `modes`'
/// order within it), the stacks in the order they first appear.
fn plain_pairs<'a>(h: &'a Handshakes, modes: &[Mode]) -> Vec<Pair<'a>> {
    let mut pairs: Vec<Pair> = modes
        .iter()
        .flat_map(|&m| fig::pairs(h, m))
        .filter(|p| !p.other.instrumented)
        .collect();
    let order: Vec<&str> = pairs.iter().fold(Vec::new(), |mut v, p| {
        let s = p.other.stack.name();
        if !v.contains(&s) {
            v.push(s);
        }
        v
    });
    pairs.sort_by_key(|p| order.iter().position(|&s| s == p.other.stack.name()));
    pairs
}

pub(crate) fn build(runs: &[&Run]) -> Vec<View> {
    // A machine at a time, on threads of their own (the paired differences resampled per run are
    // most of the front page's time with many machines).
    super::par_map(runs, |run| {
        let h = run.results.handshakes.as_ref()?;
        let resumed = plain_pairs(h, &[Mode::Resumed]);
        let shares = plain_pairs(
            h,
            &[Mode::TwoShares, Mode::HelloRetry, Mode::HelloRetryClassical],
        );
        if resumed.is_empty() && shares.is_empty() {
            return None;
        }
        let mut rows = Vec::new();
        let mut last = None;
        for p in &resumed {
            let stack = p.other.stack.name();
            rows.push(row(p, h, &run.results, last != Some(stack)));
            last = Some(stack);
        }
        Some(View {
            host: run.label.clone(),
            machine_id: run.anchor.clone(),
            has_network: run.results.network.is_some(),
            rows,
            key_shares: shares
                .iter()
                .enumerate()
                .map(|(k, p)| {
                    let first = k == 0 || shares[k - 1].other.stack != p.other.stack;
                    shares_row(p, h, first)
                })
                .collect(),
        })
    })
    .into_iter()
    .flatten()
    .collect()
}
