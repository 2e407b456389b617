//! What a certificate chain costs against the baseline one on the same group and stack: on
//! loopback, in memory, on the wire and over the emulated network. Pure functions of the results,
//! shared by the site's authentication section and `check --site`, which reads its figures back.

use super::answer::{self as fig, Side};
use super::handshake::PairedDelta;
use crate::results::{Cell, Mode, Network, Results};

/// The RTT and loss rate whose round trips the section shows: the default grid's long path, where
/// a round trip more is 78.7 ms more and no CPU figure hides it.
pub(crate) const RTT_NS: f64 = 78.7e6;

/// One row: a stack, a group and the chain its server presented ("ML-DSA-65", "ML-DSA-44 leaf").
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    pub(crate) protocol: String,
    pub stack: String,
    pub group: String,
    pub auth: String,
}

impl Row {
    /// "data/FILE|stack|group|auth": how the page names a row.
    pub(crate) fn key(&self, json_href: &str) -> String {
        format!("{json_href}|{}|{}|{}", self.stack, self.group, self.auth)
    }

    pub(crate) fn from_key(key: &str) -> Option<(String, Row)> {
        let mut p = key.splitn(4, '|');
        let file = p.next()?.to_string();
        Some((
            file,
            Row {
                protocol: "tls13".into(),
                stack: p.next()?.into(),
                group: p.next()?.into(),
                auth: p.next()?.into(),
            },
        ))
    }

    fn side(&self) -> String {
        format!("{} + {}", self.group, self.auth)
    }
}

/// Every group that some chain other than the baseline was measured with, by stack, with every
/// chain of it (the baseline's first): from the real handshakes and the network grid.
pub(crate) fn rows(r: &Results) -> Vec<Row> {
    let Some(baseline) = r.baseline_auth() else {
        return Vec::new();
    };
    let mut seen: Vec<(String, String, String)> = Vec::new();
    let scenarios = r
        .handshakes
        .iter()
        .flat_map(|h| &h.scenarios)
        .filter(|s| !s.instrumented)
        .filter_map(|s| Some((s.stack.name(), s.suite.as_str(), s.auth_name()?)));
    let cells = r
        .network
        .iter()
        .flat_map(|n| &n.points)
        .flat_map(|p| &p.cells)
        .filter_map(|c| Some((c.stack.name(), c.group.as_str(), c.auth.as_deref()?)));
    for (stack, group, auth) in scenarios.chain(cells) {
        let k = (stack.to_string(), group.to_string(), auth.to_string());
        if !seen.contains(&k) {
            seen.push(k);
        }
    }
    let changed_groups: Vec<(&str, &str)> = seen
        .iter()
        .filter(|(_, _, a)| a != baseline)
        .map(|(s, g, _)| (s.as_str(), g.as_str()))
        .collect();
    let mut out: Vec<Row> = Vec::new();
    for (stack, group) in &changed_groups {
        if out.iter().any(|x| x.stack == *stack && x.group == *group) {
            continue;
        }
        let mut auths: Vec<&str> = seen
            .iter()
            .filter(|(s, g, _)| s == stack && g == group)
            .map(|(_, _, a)| a.as_str())
            .collect();
        // The baseline first, the rest as measured.
        auths.sort_by_key(|a| *a != baseline);
        out.extend(auths.into_iter().map(|a| Row {
            protocol: "tls13".into(),
            stack: stack.to_string(),
            group: group.to_string(),
            auth: a.to_string(),
        }));
    }
    // Grouped by group, then stack, in the order they were first measured.
    let order = |x: &Row| {
        let g = seen.iter().position(|(_, g, _)| *g == x.group);
        let s = seen.iter().position(|(s, _, _)| *s == x.stack);
        (g, s)
    };
    out.sort_by_key(order);
    out
}

/// Every figure of a row, unformatted; the differences are against the same group and stack with
/// the baseline chain (none for the baseline's own row).
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Figures {
    pub(crate) baseline: bool,
    /// The server's first flight (ServerHello to Finished), bytes, and the sender's initial
    /// congestion window at the network section's MSS.
    pub(crate) flight_bytes: Option<f64>,
    pub(crate) window_bytes: Option<f64>,
    /// QUIC: what the server may send before the client's next flight validates its address,
    /// three times the client's Initial flight (RFC 9000 section 8.1); TCP: none.
    pub(crate) budget_bytes: Option<f64>,
    pub(crate) median_ns: Option<f64>,
    pub real_ns: Option<f64>,
    pub real_interval: Option<PairedDelta>,
    pub composed_ns: Option<f64>,
    /// In memory: server handshakes per core-second, over the baseline's, and the server's CPU
    /// per handshake (median).
    pub(crate) rate_per_core_s: Option<f64>,
    pub capacity_ratio: Option<f64>,
    pub(crate) server_cpu_ns: Option<f64>,
    pub(crate) memory_bytes: Option<f64>,
    /// At `RTT_NS` and no loss: the model's round trips (TCP: a round trip more for each initial
    /// window the flight overflows; QUIC: one more while it is over the anti-amplification budget,
    /// then per congestion window), the median and its difference.
    pub(crate) round_trips: Option<f64>,
    pub(crate) p50_ns: Option<f64>,
    pub(crate) extra_ns: Option<f64>,
    /// The extra time's 95% interval (`figures::answer::network_extra_interval_ns`).
    pub(crate) extra_interval_ns: Option<(f64, f64)>,
    /// QUIC at `RTT_NS` and no loss with the address validated (#35): the model's round trips and
    /// the median with a NEW_TOKEN token, and after a Retry.
    pub(crate) token_round_trips: Option<f64>,
    pub(crate) token_p50_ns: Option<f64>,
    /// What quic-go's pacer adds to the token's model (`Model::pacer`), where it adds anything.
    pub(crate) token_paced_ns: Option<f64>,
    pub(crate) retry_round_trips: Option<f64>,
    pub(crate) retry_p50_ns: Option<f64>,
    /// A QUIC row without the lossy cell the grid has for other chains at `RTT_NS`: held from
    /// loss (quinn-rs/quinn#1075; network's `runs_lossy`).
    pub(crate) held_from_loss: bool,
    /// At `RTT_NS` and the loss rate the grid authenticates at beside 0%: (loss, p50, p95).
    pub(crate) lossy: Option<(f64, f64, f64)>,
}

fn cell<'a>(p: &'a crate::results::Point, row: &Row) -> Option<&'a Cell> {
    p.cells.iter().find(|c| {
        c.stack.name() == row.stack && c.group == row.group && c.auth.as_deref() == Some(&row.auth)
    })
}

/// The row's cell of `mode` among the point's validated addresses (QUIC).
fn validated<'a>(p: &'a crate::results::Point, row: &Row, mode: Mode) -> Option<&'a Cell> {
    p.validated.iter().find(|c| {
        c.mode == mode
            && c.stack.name() == row.stack
            && c.group == row.group
            && c.auth.as_deref() == Some(&row.auth)
    })
}

fn at_rtt(n: &Network, loss: f64) -> Option<&crate::results::Point> {
    n.points
        .iter()
        .find(|p| (p.rtt_ns - RTT_NS).abs() <= RTT_NS * 0.01 && p.loss_pct == loss)
}

pub(crate) fn figures(r: &Results, row: &Row) -> Figures {
    let baseline_auth = r.baseline_auth();
    let changed = row.side();
    let against = baseline_auth.map(|b| format!("{} + {b}", row.group));
    let is_baseline = baseline_auth == Some(row.auth.as_str());
    let sides = against
        .as_deref()
        .map(|a| (Side::parse(&changed), Side::parse(a)))
        .filter(|_| !is_baseline);
    let s = fig::scenario(r, &row.stack, Side::parse(&changed), false);
    let b = sides.and_then(|(_, a)| fig::scenario(r, &row.stack, a, false));
    let n = r.network.as_ref();
    let clean = n.and_then(|n| Some((n, at_rtt(n, 0.0)?)));
    let clean_cell = clean.and_then(|(_, p)| cell(p, row));
    let token_cell = clean.and_then(|(_, p)| validated(p, row, Mode::Token));
    let retry_cell = clean.and_then(|(_, p)| validated(p, row, Mode::Retry));
    // The lossy points at `RTT_NS` where the grid authenticates with other chains: the baseline's
    // row shows the same point as theirs, not the first lossy one it has.
    let authenticated = |p: &&crate::results::Point| {
        (p.rtt_ns - RTT_NS).abs() <= RTT_NS * 0.01
            && p.loss_pct > 0.0
            && p.cells
                .iter()
                .any(|c| c.auth.is_some() && c.auth.as_deref() != baseline_auth)
    };
    let lossy = n.and_then(|n| {
        let p = n
            .points
            .iter()
            .filter(authenticated)
            .find(|p| cell(p, row).is_some())?;
        let c = cell(p, row)?;
        Some((p.loss_pct, c.ready_median_ns(n)?, c.ready_at(n, 95.0)?))
    });
    let capacity = r.capacity.as_ref();
    let in_memory = capacity.and_then(|c| {
        c.in_memory.iter().find(|m| {
            m.stack.name() == row.stack
                && m.group == row.group
                && m.auth.as_deref() == Some(&row.auth)
        })
    });
    let composed = s.zip(sides).and_then(|(s, (x, y))| {
        let suite = |side: Side| {
            r.suite(
                &fig::composed_suite(side, true, baseline_auth),
                &s.composed_stack,
            )
            .map(|x| x.composed.median_ns)
        };
        Some(suite(x)? - suite(y)?)
    });
    let real = fig::real_delta(s, b, super::handshake::DeltaPairing::of_run(r));
    let quic = s
        .and_then(|s| s.evidence.quic.as_ref())
        .or_else(|| clean_cell.and_then(|c| c.quic.as_ref()));
    Figures {
        baseline: is_baseline,
        flight_bytes: s
            .and_then(|s| s.evidence.server_flight_bytes)
            .or_else(|| clean_cell.and_then(|c| c.server_flight_bytes))
            .map(|b| b as f64),
        window_bytes: n
            .filter(|_| quic.is_none())
            .and_then(|n| Some(f64::from(n.mss? * n.initcwnd?))),
        budget_bytes: quic.map(|q| q.amplification_budget() as f64),
        median_ns: s.map(|s| s.median_ns),
        real_ns: real.0,
        real_interval: real.1,
        composed_ns: composed,
        rate_per_core_s: in_memory.map(|m| m.server_per_core_s),
        capacity_ratio: capacity
            .zip(sides)
            .and_then(|(c, (x, y))| fig::capacity_ratio(c, &row.stack, x, y, baseline_auth)),
        server_cpu_ns: in_memory.map(|m| m.server.median_ns),
        memory_bytes: capacity
            .zip(sides)
            .and_then(|(c, (x, y))| fig::memory_delta_bytes(c, &row.stack, x, y, baseline_auth)),
        round_trips: clean_cell.map(|c| c.model.round_trips),
        p50_ns: clean
            .zip(clean_cell)
            .and_then(|((n, _), c)| c.ready_median_ns(n)),
        extra_ns: n.zip(sides).and_then(|(n, sides)| {
            fig::network_extra_ns(n, &row.stack, sides, baseline_auth, RTT_NS, 0.0)
        }),
        extra_interval_ns: n.zip(sides).and_then(|(n, sides)| {
            fig::network_extra_interval_ns(n, &row.stack, sides, baseline_auth, RTT_NS, 0.0)
        }),
        token_round_trips: token_cell.map(|c| c.model.round_trips),
        token_p50_ns: clean
            .zip(token_cell)
            .and_then(|((n, _), c)| c.ready_median_ns(n)),
        token_paced_ns: token_cell
            .and_then(|c| c.model.pacer)
            .map(|p| p.delay_ns)
            .filter(|&d| d > 0.0),
        retry_round_trips: retry_cell.map(|c| c.model.round_trips),
        retry_p50_ns: clean
            .zip(retry_cell)
            .and_then(|((n, _), c)| c.ready_median_ns(n)),
        held_from_loss: quic.is_some()
            && lossy.is_none()
            && n.is_some_and(|n| n.points.iter().any(|p| authenticated(&p))),
        lossy,
    }
}

/// The figures by the names the page stores them under (`data-figure`), for `verify`.
pub(crate) fn values(f: &Figures) -> Vec<(&'static str, Option<f64>)> {
    vec![
        ("flight", f.flight_bytes),
        ("median", f.median_ns),
        ("real", f.real_ns),
        ("composed", f.composed_ns),
        ("rate", f.rate_per_core_s),
        ("capacity", f.capacity_ratio),
        ("server-cpu", f.server_cpu_ns),
        ("memory", f.memory_bytes),
        ("round-trips", f.round_trips),
        ("token-round-trips", f.token_round_trips),
        ("retry-round-trips", f.retry_round_trips),
        ("token-p50", f.token_p50_ns),
        ("token-paced", f.token_paced_ns),
        ("retry-p50", f.retry_p50_ns),
        ("p50", f.p50_ns),
        ("extra", f.extra_ns),
        ("lossy-p50", f.lossy.map(|l| l.1)),
    ]
}

/// How many initial windows a flight fills: 1.08 for 15,613 bytes against 14,480.
pub(crate) fn windows(flight_bytes: f64, window_bytes: f64) -> Option<f64> {
    (window_bytes > 0.0).then(|| flight_bytes / window_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_round_trips_through_its_key() {
        let row = Row {
            protocol: "tls13".into(),
            stack: "openssl".into(),
            group: "X25519MLKEM768".into(),
            auth: "ML-DSA-44 leaf".into(),
        };
        let key = row.key("data/a.json");
        assert_eq!(key, "data/a.json|openssl|X25519MLKEM768|ML-DSA-44 leaf");
        assert_eq!(Row::from_key(&key), Some(("data/a.json".into(), row)));
        assert_eq!(Row::from_key("data/a.json|openssl"), None);
    }

    #[test]
    fn windows_by_hand() {
        // ML-DSA-65's 15,613-byte flight against 10 segments of 1,448 bytes.
        assert!((windows(15_613.0, 14_480.0).unwrap() - 1.0782).abs() < 1e-4);
        assert_eq!(windows(1.0, 0.0), None);
    }
}
