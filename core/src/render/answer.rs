//! The front page's answer, per machine: one table of what a change costs on that machine against
//! its baseline, a row per real stack, every figure linked to the card it comes from.
//!
//! The table is a list of questions (`QUESTIONS`), each naming the changes it asks about in a run
//! (`Change`: a protocol, a stack, the changed scenario and its baseline). Every change gets the
//! same columns (`Figures`), read from the same sections. Post-quantum certificates add a question
//! whose `changes` picks the scenarios that differ in their certificate (ML-DSA against the
//! classical signature) and a row kind needs nothing else here.

use super::Run;
use crate::figures::answer::{self as fig, Side};
use crate::figures::changes::PROTOCOLS;
pub(crate) use crate::figures::changes::{answered_suite, values, RTTS_MS};
pub use crate::figures::changes::{figures, Change, Figures, Question, QUESTIONS};
use crate::figures::handshake::PairedDelta;
use crate::units;
use serde::Serialize;

#[derive(Serialize)]
pub struct Cell {
    pub text: String,
    pub sub: String,
    pub(crate) href: String,
    pub title: String,
    pub(crate) class: String,
    /// (data-figure, data-value) for every raw figure the cell shows.
    pub(crate) values: Vec<(String, String)>,
}

impl Cell {
    fn missing(why: &str) -> Cell {
        Cell {
            text: "–".into(),
            sub: String::new(),
            href: String::new(),
            title: why.into(),
            class: "none".into(),
            values: Vec::new(),
        }
    }
}

/// The columns every row fills, in order (the phone layout repeats them beside each figure).
pub(crate) fn columns() -> Vec<String> {
    let mut c: Vec<String> = [
        "Composed Δ",
        "Real loopback Δ (95%)",
        "In-situ crypto explains",
        "Server capacity vs classical",
        "Memory per held connection Δ",
        "Wire bytes c→s / s→c",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    c.extend(RTTS_MS.iter().map(|ms| format!("Extra at {ms} ms RTT")));
    c
}

#[derive(Serialize)]
pub struct Row {
    pub key: String,
    pub stack: String,
    pub cells: Vec<Cell>,
}

#[derive(Serialize)]
pub struct Group {
    pub(crate) title: String,
    pub rows: Vec<Row>,
}

#[derive(Serialize)]
pub struct Table {
    pub(crate) machine: String,
    /// What the results do not record about the machine (references/machines.toml), and where it
    /// was found.
    pub(crate) note: String,
    pub(crate) note_source: String,
    pub(crate) machine_id: String,
    pub(crate) date: String,
    pub(crate) commit: String,
    pub(crate) json_href: String,
    pub(crate) complete: bool,
    /// The sections the run lacks, by the command that adds them.
    pub(crate) missing: Vec<&'static str>,
    pub groups: Vec<Group>,
    pub(crate) rtts: Vec<String>,
    pub(crate) columns: Vec<String>,
    /// The certificate every row's handshakes used, as the first connection showed it.
    pub(crate) cert: String,
    /// How much the host moved during the run and, where figures are not resolved, what to do.
    pub(crate) host: String,
}

/// What a reader needs to know first about a run on a shared host: how far the host's speed moved
/// between the run's processes (`process_samples.host_drift_pct`), how many figures of the table
/// are not resolved, and what gives answers where time cannot.
pub(crate) fn host_sentence(drift_pct: Option<f64>, unresolved: usize) -> String {
    let moved = drift_pct.map_or(String::new(), |d| {
        format!(
            "The host's speed moved {d:.1}% between this run's processes (their speeds' RSD){}",
            if d <= 1.0 && unresolved == 0 {
                ": a quiet run."
            } else {
                ". "
            }
        )
    });
    if unresolved == 0 {
        return moved;
    }
    format!(
        "{moved}{unresolved} figure{} below {} not resolved: on this run {} interval holds zero or is wider than the figure. A quieter hour, a longer budget (<code>make run BUDGET=1200</code>) or instruction counts, which do not move with the host (<code>pqprof run --counter instructions</code>), answer where time cannot.",
        if unresolved == 1 { "" } else { "s" },
        if unresolved == 1 { "is" } else { "are" },
        if unresolved == 1 { "its" } else { "each one's" },
    )
}

fn signed_count(x: f64) -> String {
    format!("{}{}", if x >= 0.0 { "+" } else { "" }, units::count(x))
}

/// "+17 – +110 µs": an interval of differences, compact enough to sit beside its figure.
pub(crate) fn interval_us(lo: f64, hi: f64) -> String {
    let us = |x: f64| {
        let a = x.abs() / 1e3;
        let digits = if a >= 100.0 { 0 } else { 1 };
        format!("{}{a:.digits$}", if x < 0.0 { "−" } else { "+" })
    };
    format!("{} – {} µs", us(lo), us(hi))
}

/// Handshakes per server core-second, the changed scenario's over the baseline's: the capacity
/// step's in memory where it measures the stack, else the server's own CPU per handshake in the
/// real handshakes (nginx, HAProxy, sshd: servers the in-memory handshakes do not run). The second
/// carries its CPU difference and interval in either case.
fn capacity_cell(
    r: &crate::results::Results,
    c: &Change,
    f: &Figures,
    machine_id: &str,
    handshakes: &str,
) -> Cell {
    let mut values = Vec::new();
    let mut said = String::new();
    if let Some(cpu) = &f.server_cpu {
        values.push(value("server-cpu", cpu.delta_ns));
        values.push(value("server-cpu-capacity", cpu.capacity_ratio));
        if let Some(h) = cpu.delta_half95_ns {
            values.push(value("server-cpu-lo", cpu.delta_ns - h));
            values.push(value("server-cpu-hi", cpu.delta_ns + h));
        }
        let interval = cpu.delta_half95_ns.map_or(String::new(), |h| {
            format!(
                " (95%: {} to {})",
                units::signed_time(cpu.delta_ns - h),
                units::signed_time(cpu.delta_ns + h)
            )
        });
        said = format!(
            "the server's own CPU per handshake in the real handshakes, {} against {}: {}{interval} over {} round(s)",
            c.group,
            c.baseline,
            units::signed_time(cpu.delta_ns),
            cpu.pairs
        );
    }
    let class = |x: f64| if x < 1.0 { "slower" } else { "faster" }.to_string();
    match (f.capacity_ratio, &f.server_cpu) {
        (Some(x), _) => {
            values.push(value("capacity", x));
            let also = if said.is_empty() {
                String::new()
            } else {
                format!("; {said}")
            };
            Cell {
                text: units::ratio(x),
                sub: String::new(),
                href: format!("#capacity-{machine_id}"),
                title: format!(
                    "server handshakes per core-second in memory, {} over {}{also}",
                    c.group, c.baseline
                ),
                class: class(x),
                values,
            }
        }
        (None, Some(cpu)) => Cell {
            text: units::ratio(cpu.capacity_ratio),
            // A difference whose interval holds zero is noise on this host, not a cost.
            sub: match cpu.delta_half95_ns {
                Some(h) if h < cpu.delta_ns.abs() => {
                    format!("{} CPU", units::signed_time(cpu.delta_ns))
                }
                _ => format!("{} CPU, not resolved", units::signed_time(cpu.delta_ns)),
            },
            href: handshakes.to_string(),
            title: format!(
                "handshakes per server core-second from {said}; the capacity step's in-memory handshakes do not run this server (under h2load: the capacity section)"
            ),
            class: class(cpu.capacity_ratio),
            values,
        },
        (None, None) if r.capacity.is_none() => Cell::missing("no capacity section in this run"),
        (None, None) => Cell::missing("capacity does not measure this stack"),
    }
}

fn value(name: &str, x: f64) -> (String, String) {
    (name.to_string(), format!("{x}"))
}

/// Anchors of the cards and sections the figures come from (the front page gives the cards theirs,
/// the phases page the real handshakes').
pub(crate) fn card_id(suite: &str) -> String {
    suite.to_string()
}

pub(crate) fn handshakes_id(machine_id: &str, suite: &str) -> String {
    format!("hs-{machine_id}-{suite}")
}

pub(crate) fn insitu_id(machine_id: &str, suite: &str) -> String {
    format!("insitu-{machine_id}-{suite}")
}

/// The composed difference's cell: the figure, or "not resolved" where its interval holds zero, and
/// where it misses the real difference by more than 10% the call that accounts for most of it.
fn composed_cell(c: &Change, f: &Figures, card: String) -> Cell {
    match f.composed_ns {
        Some(d) => {
            let title = if f.composed_is_latency {
                format!(
                    "{} minus {} along the critical path of both full handshakes (the composition page's figure), a shift of the median connection composed from the phases of {} (the code {} runs) as suites/flights.toml places them{}; both sides' calls together: {}",
                    c.group,
                    c.baseline,
                    f.composed_stack,
                    c.stack,
                    if f.composed_overlap {
                        ", the stack running some of the two sides' work at once"
                    } else {
                        ""
                    },
                    f.composed_cpu_ns.map_or(String::new(), units::signed_time)
                )
            } else {
                format!(
                    "{} minus {} composed from the phases of {} (the code {} runs): both sides' calls, medians",
                    c.group, c.baseline, f.composed_stack, c.stack
                )
            };
            let interval = f.composed_half95_ns.map(|h| (d - h, d + h));
            match interval {
                Some(i) if !fig::resolved(d, i) => Cell {
                    text: "not resolved".into(),
                    sub: match f.composed_instructions {
                        Some(n) => format!("{} · {} instr.", half_us(i.0, i.1), signed_count(n)),
                        None => half_us(i.0, i.1),
                    },
                    href: card,
                    title: format!(
                        "{title}: {} here, ± {} from the phases that differ, an interval that holds zero or is wider than the difference",
                        units::signed_time(d),
                        units::time((i.1 - i.0) / 2.0)
                    ),
                    class: "unresolved".into(),
                    values: vec![value("composed", d)],
                },
                _ => {
                    // Where the composition misses the real difference by more than 10%, the call
                    // that accounts for most of the miss, from the in-situ records.
                    let miss = f
                        .real_ns
                        .filter(|r| (d - r).abs() > 0.1 * r.abs())
                        .and(f.gap.as_ref());
                    let sub = match (f.composed_instructions, miss) {
                        (Some(n), _) => format!("{} instr.", signed_count(n)),
                        (None, Some(g)) => format!("{} {:.2}× in situ", g.label, g.ratio),
                        _ => String::new(),
                    };
                    let title = match miss {
                        Some(g) => format!(
                            "{title}. It misses the real difference by more than 10%: in a real handshake (after parsing and a socket wait, its caches partly cold) {} of {} costs {:.2}× {}, {} a handshake more than the baseline's same call",
                            g.label,
                            g.implementation,
                            g.ratio,
                            g.against(),
                            units::signed_time(g.extra_ns)
                        ),
                        None => title,
                    };
                    Cell {
                        text: units::signed_time(d),
                        sub,
                        href: card,
                        title,
                        class: String::new(),
                        values: vec![value("composed", d)],
                    }
                }
            }
        }
        None => Cell::missing("no composition of this stack's library"),
    }
}

/// What the in-situ crypto explains of the connection's difference, where both are resolved.
fn explained_cell(f: &Figures, insitu: String) -> Cell {
    match (f.explained_pct, f.explained_resolved) {
        (Some(p), Some(false)) => Cell {
            text: "not resolved".into(),
            sub: String::new(),
            href: insitu,
            title: format!(
                "{p:.0}% here, but the in-situ crypto difference or the connection's difference is not resolved on this run (its 95% interval holds zero or is wider than itself)"
            ),
            class: "unresolved".into(),
            values: vec![value("explained", p)],
        },
        (Some(p), _) => Cell {
            text: format!("{p:.0}%"),
            sub: String::new(),
            href: insitu,
            title: "the in-situ crypto calls' difference (both sides, mean per connection) over the mean connection's difference; above 100% where the two sides' calls overlap in time or the rest got faster".into(),
            class: String::new(),
            values: vec![value("explained", p)],
        },
        (None, _) => Cell::missing("this stack's crypto is not timed in situ here"),
    }
}

fn cells(run: &Run, machine_id: &str, c: &Change, f: &Figures) -> Vec<Cell> {
    let r = &run.results;
    let mut out = Vec::new();
    // The cards the links go to are the run's suites: a run measured without one links nowhere.
    let has = |name: &str| r.suites.iter().any(|s| s.name == name);
    let link = |page: &str, id: String| {
        if has(&c.group) {
            format!("{page}#{id}")
        } else {
            String::new()
        }
    };
    // A change of certificate has its figures in the authentication section, not on a card.
    let auth_section = Side::parse(&c.group).auth.is_some();
    let section = format!("#auth-{machine_id}");
    let (hs, insitu, card) = if auth_section {
        (section.clone(), section.clone(), section)
    } else {
        (
            link("phases.html", handshakes_id(machine_id, &c.group)),
            // On the in-situ page (render::build).
            Some(insitu_id(machine_id, &c.group))
                .filter(|_| {
                    has(&format!("{} full handshake", c.group))
                        || has(&format!("{} full key exchange", c.group))
                })
                .map_or(String::new(), |id| format!("insitu.html#{id}")),
            link("", card_id(&c.group)),
        )
    };
    out.push(composed_cell(c, f, card));
    out.push(match f.real_ns {
        Some(d) => real_cell(d, f.real_interval, f.real_host_half_ns, c, hs.clone()),
        None => Cell::missing("no real handshakes of both scenarios"),
    });
    out.push(explained_cell(f, insitu));
    out.push(capacity_cell(r, c, f, machine_id, &hs));
    out.push(match f.memory_bytes {
        Some(m) => Cell {
            text: format!("{}{} B", if m >= 0.0 { "+" } else { "" }, units::count(m)),
            sub: String::new(),
            href: format!("#memory-{machine_id}"),
            title: if r
                .capacity
                .iter()
                .flat_map(|cap| &cap.memory)
                .any(|m| m.stack.name() == c.stack)
            {
                "server heap per held connection, against the baseline".into()
            } else {
                "the server's processes' proportional set size per held connection, against the baseline".into()
            },
            class: String::new(),
            values: vec![value("memory", m)],
        },
        None if r.capacity.is_none() => Cell::missing("no capacity section in this run"),
        None => Cell::missing("memory per connection is not measured for this stack"),
    });
    out.push(match (f.wire, f.wire_delta) {
        (Some((cs, sc)), delta) => Cell {
            text: format!("{} / {}", units::count(cs), units::count(sc)),
            sub: String::new(),
            href: hs.clone(),
            title: delta.map_or(String::new(), |(a, b)| {
                format!(
                    "bytes client to server / server to client per connection; against the baseline {} / {}",
                    signed_count(a),
                    signed_count(b)
                )
            }),
            class: String::new(),
            values: vec![value("wire-cs", cs), value("wire-sc", sc)],
        },
        _ => Cell::missing("no real handshakes"),
    });
    for (k, ms) in RTTS_MS.iter().enumerate() {
        let interval = f.rtt_extra_interval_ns.get(k).copied().flatten();
        out.push(match f.rtt_extra_ns.get(k).copied().flatten() {
            Some(x) => rtt_extra_cell(*ms, x, interval, c, machine_id),
            None if r.network.is_none() => Cell::missing("no network section in this run"),
            None => Cell::missing("the network grid does not have this point or stack"),
        });
    }
    out
}

/// "±12.3 µs": the half-width an unresolved difference is shown with.
pub(crate) fn half_us(lo: f64, hi: f64) -> String {
    let h = (hi - lo) / 2e3;
    format!("±{h:.digits$} µs", digits = if h >= 100.0 { 0 } else { 1 })
}

/// A share of the baseline with its 95% interval, in percent: "+19% (16–21)", one decimal under
/// 10% ("+4.2% (1.5–6.9)"), a minus sign where a figure is negative.
fn share_text(m: f64, lo: f64, hi: f64) -> String {
    let p = if m.abs() >= 0.1 { 0 } else { 1 };
    let pct = |x: f64| {
        let s = format!("{:.p$}", (x * 100.0).abs());
        if x < 0.0 {
            format!("−{s}")
        } else {
            s
        }
    };
    let sign = if m < 0.0 { "" } else { "+" };
    format!("{sign}{}% ({}–{})", pct(m), pct(lo), pct(hi))
}

/// The real loopback difference: with its interval beneath where the interval supports it
/// (`figures::answer::resolved`), else "not resolved" with the half-width (the difference stays in
/// the title and the page's data).
fn real_cell(
    d: f64,
    interval: Option<PairedDelta>,
    host_half_ns: Option<f64>,
    c: &Change,
    href: String,
) -> Cell {
    let mut values = vec![value("real", d)];
    let resolved = interval.is_none_or(|i| fig::resolved(d, (i.lo95_ns, i.hi95_ns)));
    let sub = interval.map_or(String::new(), |i| {
        values.push(value("real-lo", i.lo95_ns));
        values.push(value("real-hi", i.hi95_ns));
        let us = if resolved {
            interval_us(i.lo95_ns, i.hi95_ns)
        } else {
            half_us(i.lo95_ns, i.hi95_ns)
        };
        // The share of the baseline beside it: on a host whose speed drifts between runs, the
        // microseconds move with the host and the share does not.
        match i.share {
            Some((m, lo, hi)) if resolved => {
                values.push(value("share-pct", m * 100.0));
                format!("{us} · {}", share_text(m, lo, hi))
            }
            _ => us,
        }
    });
    let how = match interval {
        Some(i) if i.block > 0 && !i.form.is_absolute() => format!(
            // The table's cover text says why the share: each cell says what it is.
            "the median of {} paired differences of blocks of {} connections, each a share of the baseline's block beside it, times the baseline's median; the 95% interval resamples the rounds, then their blocks, widened to the t-interval of the rounds' medians",
            i.pairs, i.block
        ),
        Some(i) if i.block > 0 => format!(
            "the median of {} paired differences of blocks of {} connections, each block run next to the other's, and its 95% bootstrap interval",
            i.pairs, i.block
        ),
        Some(i) => format!(
            "the difference of the medians; the interval is the 95% bootstrap interval of the median of the {} rounds' paired differences",
            i.pairs
        ),
        None => "the difference of the medians".into(),
    };
    let share = match interval.and_then(|i| i.share) {
        Some((m, lo, hi)) if resolved => format!(
            "; as a share of the baseline's median: {}",
            share_text(m, lo, hi)
        ),
        _ => String::new(),
    };
    let host = host_half_ns.map_or(String::new(), |h| {
        format!(
            "; beyond it, the host's part, which the share cancels: ±{}",
            units::time(h)
        )
    });
    Cell {
        text: if resolved {
            units::signed_time(d)
        } else {
            "not resolved".into()
        },
        sub,
        href,
        title: format!(
            "loopback connection, {} minus {}: {how}{share}{host}{}",
            c.group,
            c.baseline,
            match interval {
                Some(i) if !resolved => format!(
                    " ({} here, {} to {}: its interval holds zero or is wider than itself)",
                    units::signed_time(d),
                    units::signed_time(i.lo95_ns),
                    units::signed_time(i.hi95_ns)
                ),
                _ => String::new(),
            }
        ),
        class: if resolved { "" } else { "unresolved" }.into(),
        values,
    }
}

/// The extra time at one RTT: the difference of the two cells' p50s, or, where its 95% interval
/// holds zero, "not resolved" with the interval's half-width beneath (the difference stays in the
/// title and the page's data).
fn rtt_extra_cell(
    ms: f64,
    x: f64,
    interval: Option<(f64, f64)>,
    c: &Change,
    machine_id: &str,
) -> Cell {
    let ms_text = |x: f64| format!("{:+.2} ms", x / 1e6).replace('-', "−");
    let mut values = vec![value(&format!("rtt-{ms}"), x)];
    // A difference whose interval holds zero, or is wider than itself, is not an answer.
    let resolved = interval.is_none_or(|i| fig::resolved(x, i));
    let sub = interval.map_or(String::new(), |(lo, hi)| {
        values.push(value(&format!("rtt-{ms}-lo"), lo));
        values.push(value(&format!("rtt-{ms}-hi"), hi));
        format!("±{:.2} ms", (hi - lo) / 2e6)
    });
    Cell {
        text: if resolved {
            ms_text(x)
        } else {
            "not resolved".into()
        },
        sub,
        href: format!("#network-{machine_id}"),
        title: format!(
            "median connect-to-complete time at {ms} ms RTT and no loss, {} minus {}{}",
            c.group,
            c.baseline,
            match interval {
                Some((lo, hi)) => format!(
                    " ({}; 95% interval {} to {}: each cell's p50 interval, in quadrature)",
                    ms_text(x),
                    ms_text(lo),
                    ms_text(hi)
                ),
                None => String::new(),
            }
        ),
        class: if resolved { "" } else { "unresolved" }.into(),
        values,
    }
}

pub fn table(run: &Run) -> Table {
    let r = &run.results;
    let machine_id = run.anchor.clone();
    let mut groups = Vec::new();
    for q in QUESTIONS {
        let changes = (q.changes)(r);
        for protocol in PROTOCOLS {
            let mine: Vec<&Change> = changes.iter().filter(|c| c.protocol == protocol).collect();
            let Some(first) = mine.first() else { continue };
            groups.push(Group {
                title: format!(
                    "{} {}: {} against {}",
                    crate::suite::protocol_label(protocol),
                    q.title,
                    first.group,
                    first.baseline
                ),
                rows: mine
                    .iter()
                    .map(|c| {
                        let f = figures(r, c);
                        Row {
                            key: c.key(&run.json_href),
                            stack: r.stack_label(&c.stack),
                            cells: cells(run, &machine_id, c, &f),
                        }
                    })
                    .collect(),
            });
        }
    }
    let mut certs: Vec<String> = r
        .handshakes
        .iter()
        .flat_map(|h| &h.scenarios)
        // The key-exchange rows' certificate: the baseline chain's (the others have their rows).
        .filter(|s| s.auth_name().is_none() || s.auth_name() == r.baseline_auth())
        .map(|s| s.evidence.cert_key.clone())
        .filter(|c| !c.is_empty())
        .collect();
    certs.sort();
    certs.dedup();
    let (note, note_source) = super::machine_note(&r.run.host).unwrap_or_default();
    let unresolved = groups
        .iter()
        .flat_map(|g| &g.rows)
        .flat_map(|row| &row.cells)
        .filter(|c| c.class == "unresolved")
        .count();
    let drift = r.process_samples.as_ref().and_then(|p| p.host_drift_pct);
    Table {
        host: host_sentence(drift, unresolved),
        note,
        note_source,
        machine: super::machine_label(&r.run.host),
        machine_id,
        date: r.run.date_utc.clone(),
        commit: r.run.tool_commit.clone(),
        json_href: run.json_href.clone(),
        complete: r.is_complete(),
        missing: [
            (r.handshakes.is_none(), "handshake"),
            (r.capacity.is_none(), "capacity"),
            (r.network.is_none(), "network"),
        ]
        .into_iter()
        .filter_map(|(m, n)| m.then_some(n))
        .collect(),
        groups,
        rtts: RTTS_MS.iter().map(|ms| format!("{ms} ms")).collect(),
        columns: columns(),
        cert: certs.join(", "),
    }
}

pub(crate) fn build(runs: &[&Run]) -> Vec<Table> {
    super::par_map(runs, |r| table(r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_sentence_says_how_far_it_moved_and_what_to_do() {
        assert_eq!(
            host_sentence(Some(0.36), 0),
            "The host's speed moved 0.4% between this run's processes (their speeds' RSD): a quiet run."
        );
        let noisy = host_sentence(Some(7.9), 3);
        assert!(
            noisy.starts_with("The host's speed moved 7.9% between this run's processes (their speeds' RSD). 3 figures below are not resolved"),
            "{noisy}"
        );
        assert!(noisy.contains("BUDGET=1200") && noisy.contains("--counter instructions"));
        assert!(
            host_sentence(None, 1).starts_with("1 figure below is not resolved: on this run its")
        );
        assert_eq!(host_sentence(None, 0), "");
    }

    #[test]
    fn a_change_round_trips_through_its_key() {
        let c = Change {
            protocol: "tls13".into(),
            stack: "rustls".into(),
            group: "X25519MLKEM768".into(),
            baseline: "X25519".into(),
        };
        let key = c.key("data/a.json");
        assert_eq!(key, "data/a.json|tls13|rustls|X25519MLKEM768|X25519");
        assert_eq!(Change::from_key(&key), Some(("data/a.json".into(), c)));
        assert_eq!(Change::from_key("data/a.json|tls13"), None);
    }

    #[test]
    fn an_extra_time_whose_interval_holds_zero_is_not_shown_as_an_answer() {
        let c = Change {
            protocol: "tls13".into(),
            stack: "rustls".into(),
            group: "X25519MLKEM768".into(),
            baseline: "X25519".into(),
        };
        // +0.17 ms ± 0.08: resolved, shown with its half-width.
        let clear = super::rtt_extra_cell(5.6, 0.17e6, Some((0.09e6, 0.25e6)), &c, "m");
        assert_eq!(
            (clear.text.as_str(), clear.sub.as_str()),
            ("+0.17 ms", "±0.08 ms")
        );
        // +0.17 ms ± 0.09: clear of zero, but wider than itself.
        let wide = super::rtt_extra_cell(5.6, 0.17e6, Some((0.08e6, 0.26e6)), &c, "m");
        assert_eq!(wide.text, "not resolved");
        // +0.05 ms ± 0.20, straddling zero: not an answer, its interval beneath.
        let noise = super::rtt_extra_cell(5.6, 0.05e6, Some((-0.15e6, 0.25e6)), &c, "m");
        assert_eq!(
            (noise.text.as_str(), noise.sub.as_str()),
            ("not resolved", "±0.20 ms")
        );
        assert!(noise.title.contains("+0.05 ms"), "{}", noise.title);
        // The page still carries the figures for `verify`.
        let names: Vec<&str> = noise.values.iter().map(|v| v.0.as_str()).collect();
        assert_eq!(names, ["rtt-5.6", "rtt-5.6-lo", "rtt-5.6-hi"]);
        // A file without intervals shows the difference as before.
        assert_eq!(
            super::rtt_extra_cell(5.6, -0.3e6, None, &c, "m").text,
            "−0.30 ms"
        );
    }

    #[test]
    fn a_share_prints_whole_percent_from_ten_and_signs_every_negative_end() {
        assert_eq!(super::share_text(0.188, 0.164, 0.212), "+19% (16–21)");
        assert_eq!(super::share_text(0.042, 0.015, 0.069), "+4.2% (1.5–6.9)");
        assert_eq!(super::share_text(-0.05, -0.08, -0.02), "−5.0% (−8.0–−2.0)");
    }
}
