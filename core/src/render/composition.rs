//! The composition page: per machine and stack, each real loopback handshake against its
//! composition (figures::composition): the latency along the critical path plus the stack's own
//! work against the loopback median, and each side's composed CPU against the in-memory
//! handshakes' and the loopback handshakes' CPU per handshake.

use super::Run;
use crate::figures::composition::{self as fig, Row as FigRow, Versus};
use crate::units::time;
use serde::Serialize;

/// How far a composed figure may stray from the measured one and still count as matching it
/// (#37's target for the latency and the server's CPU; the page holds the client's to it too).
pub(crate) const MATCH_PCT: f64 = 10.0;
/// The same target's floor for a difference against the baseline (#37: "within 10% or 20 µs").
pub(crate) const MATCH_FLOOR_NS: f64 = 20_000.0;

#[derive(Serialize)]
pub(crate) struct Page {
    /// `MATCH_PCT` and `MATCH_FLOOR_NS` as the page prints them.
    pub(crate) match_pct: String,
    pub(crate) match_floor: String,
    pub(crate) views: Vec<View>,
}

#[derive(Serialize)]
pub(crate) struct View {
    pub(crate) host: String,
    pub(crate) machine_id: String,
    pub(crate) stacks: Vec<StackView>,
}

#[derive(Serialize)]
pub(crate) struct StackView {
    pub(crate) stack: String,
    pub(crate) composed_stack: String,
    /// "348.1 µs ± 70.4 µs: the loopback median of X25519 + ECDSA-P256 less its composed path of
    /// 346.3 µs": the stack's own work along the path.
    pub(crate) own: String,
    /// "−0.62 ns ± 0.29 ns a byte on the wire: ..." from the stack's size control; empty without
    /// one.
    pub(crate) per_byte: String,
    pub(crate) rows: Vec<Row>,
    /// Where the calls ran in the stack's in-situ handshakes (`figures::timeline`), a row per
    /// scenario that has a time line.
    pub(crate) time_lines: Vec<TimeLineRow>,
}

/// A scenario's time line at the median connection, microseconds after the client began.
#[derive(Serialize)]
pub(crate) struct TimeLineRow {
    pub(crate) scenario: String,
    /// "412.0–431.2": the server's CertificateVerify signature.
    pub(crate) sign: String,
    /// "380.1–470.3": the client's segment on the ServerHello, to its chain checked.
    pub(crate) chain: String,
    /// "90.1 µs of 201.5 µs": that segment's time in its key-exchange calls and certificate
    /// checks, of its length.
    pub(crate) chain_calls: String,
    /// "+76.2 µs": its length beyond what its flow composes in it (`timeline::own_in_segment`);
    /// the baseline's is the stack's own work the composition adds to that segment.
    pub(crate) chain_own: String,
    /// "475.0": the client's CertificateVerify check's start.
    pub(crate) verify: String,
    /// "4.7 µs": the client's wait from its chain checked to that check.
    pub(crate) wait: String,
    pub(crate) connections: usize,
}

fn time_line_row(r: &crate::results::Results, s: &crate::results::Scenario) -> Option<TimeLineRow> {
    let t = crate::figures::timeline::of(s.insitu.as_ref()?)?;
    let own = crate::figures::composition::flow_of(r, s)
        .and_then(|(_, f)| crate::figures::timeline::own_in_segment(&t, f));
    let us = |x: f64| format!("{:.1}", x / 1e3);
    let span = |v: Option<crate::figures::timeline::Span>| {
        v.map_or("–".into(), |v| {
            format!("{}–{}", us(v.start_ns), us(v.end_ns))
        })
    };
    Some(TimeLineRow {
        scenario: fig::named(&s.suite, s.auth_name()),
        sign: span(t.server_sign),
        chain: span(t.client_chain),
        chain_calls: match (t.segment_calls_ns, t.segment_ns) {
            (Some(c), Some(all)) => format!("{} of {}", time(c), time(all)),
            _ => "–".into(),
        },
        chain_own: own.map_or("–".into(), crate::units::signed_time),
        verify: t.client_verify.map_or("–".into(), |v| us(v.start_ns)),
        wait: t.wait_ns.map_or("–".into(), crate::units::signed_time),
        connections: t.connections,
    })
}

#[derive(Serialize)]
pub(crate) struct Row {
    pub(crate) scenario: String,
    pub baseline: bool,
    pub(crate) path: String,
    pub latency: Cell,
    /// What the composition predicts of the difference against the scenario's own baseline
    /// beside the real one.
    pub(crate) delta: Cell,
    pub(crate) server_memory: Cell,
    pub(crate) client_memory: Cell,
    /// "35% / 50%": the composed CPU's share of the loopback CPU per handshake, server / client.
    pub(crate) loopback_share: String,
    /// Per RTT of the network grid, at no loss: ("5.6 ms: 12.19 ms", "phases 12.10 ms (−0.7%)");
    /// the baseline's row, whose prediction from phases is the model's, says "model".
    pub network: Vec<(String, String)>,
}

/// "composed / measured", the ratio and its interval beneath, and whether the ratio is outside
/// `MATCH_PCT`.
#[derive(Serialize, Default)]
pub(crate) struct Cell {
    pub(crate) figures: String,
    pub(crate) ratio: String,
    pub sub: String,
    pub(crate) off: bool,
    /// Where the latency misses: the call that costs most in situ beyond what the path counts it
    /// at; for a difference, the real one's interval.
    pub(crate) why: String,
}

fn cell(v: Option<&Versus>) -> Cell {
    let Some(v) = v.filter(|v| v.measured()) else {
        return Cell {
            figures: "–".into(),
            ..Cell::default()
        };
    };
    Cell {
        figures: format!("{} / {}", time(v.composed_ns), time(v.real_ns)),
        ratio: format!("{:.0}%", v.ratio() * 100.0),
        sub: v.ratio_ci95().map_or(String::new(), |(lo, hi)| {
            format!("{:.0}–{:.0}%", lo * 100.0, hi * 100.0)
        }),
        off: !v.within(MATCH_PCT),
        why: String::new(),
    }
}

/// "+93.6 µs / +101.5 µs", the ratio, whether it misses by more than `MATCH_PCT` and
/// `MATCH_FLOOR_NS`, and the real difference's interval beneath (a miss inside it says so).
fn delta_cell(v: Option<&Versus>) -> Cell {
    let Some(v) = v.filter(|v| v.real_ns.is_finite() && v.real_ns != 0.0) else {
        return Cell {
            figures: "–".into(),
            ..Cell::default()
        };
    };
    let signed = crate::units::signed_time;
    let off = !v.delta_within(MATCH_PCT, MATCH_FLOOR_NS);
    Cell {
        figures: format!("{} / {}", signed(v.composed_ns), signed(v.real_ns)),
        // A share of a difference under the floor says little (and of a negative one, less):
        // there, by how much it is off.
        ratio: if v.real_ns.abs() >= MATCH_FLOOR_NS {
            format!("{:.0}%", v.composed_ns / v.real_ns * 100.0)
        } else {
            format!("{} off", signed(v.composed_ns - v.real_ns))
        },
        // The real interval on a line of its own that may wrap: the table stays within a window.
        sub: String::new(),
        off,
        why: v.real_ci95_ns.map_or(String::new(), |(lo, hi)| {
            let interval = format!("real {}", super::answer::interval_us(lo, hi));
            if off && v.inside_real_ci95() {
                format!("{interval}: the composed one inside it, not resolved here")
            } else {
                interval
            }
        }),
    }
}

/// A side's composed CPU in memory against the measured (`cell`), with what it is made of: its
/// calls and the stack's own CPU from its baseline, which the baseline therefore reads.
fn memory_cell(
    r: &FigRow,
    v: Option<&Versus>,
    own: Option<crate::figures::composition::Own>,
) -> Cell {
    let mut c = cell(v);
    if let (Some(v), Some((o, _))) = (v.filter(|v| v.measured()), own) {
        if r.baseline {
            c.ratio = "baseline".into();
            c.sub = String::new();
            c.off = false;
        }
        c.why = format!(
            "calls {} + own {}",
            time(v.composed_ns - o).replace(' ', "\u{a0}"),
            crate::units::signed_time(o).replace(' ', "\u{a0}")
        );
    }
    c
}

/// The stack's cost per byte (and per wait, where its controls separate it) and where it comes
/// from: each size control's difference beyond what its calls and waits compose, over the bytes
/// it adds.
fn per_byte_line(p: &fig::PerByte) -> String {
    let half = |h: Option<f64>, unit: &dyn Fn(f64) -> String| {
        h.map_or(String::new(), |h| format!(" ± {}", unit(h)))
    };
    let ns = |x: f64| format!("{x:.2} ns");
    let wait = p.per_wait.map_or(String::new(), |w| {
        format!(
            ", and {}{} a wait for the client beyond its estimate (the baseline's echo)",
            crate::units::signed_time(w.ns),
            half(w.half95, &time)
        )
    });
    let each: Vec<String> = p
        .controls
        .iter()
        .map(|c| {
            format!(
                "{} {} over {} B{}",
                c.name,
                crate::units::signed_time(c.residual_ns),
                crate::units::count(c.bytes),
                match c.waits {
                    0 => String::new(),
                    1 => " and 1 wait".into(),
                    n => format!(" and {n} waits"),
                }
            )
        })
        .collect();
    format!(
        "{} ns{} a byte on the wire{wait}: what the size controls' real differences leave beyond \
         what their calls and waits compose, {}",
        signed_ns(p.per_byte.ns),
        half(p.per_byte.half95, &ns),
        each.join("; ")
    )
}

/// "+4.28", "−0.62": nanoseconds a byte, signed, to two places, with a real minus sign.
fn signed_ns(x: f64) -> String {
    let s = format!("{:.2}", x.abs());
    if x < 0.0 && s != "0.00" {
        format!("−{s}")
    } else {
        format!("+{s}")
    }
}

fn scenario(r: &FigRow) -> String {
    fig::named(&r.group, r.auth.as_deref())
}

/// Where a difference misses, what grows beside the calls: the stack's own CPU per handshake
/// beyond its baseline's, each side (the loopback CPU less the calls), and how much the calls
/// themselves moved it, slower (or faster) in the handshakes timed in situ than in the state the
/// flow composes them at.
fn miss_note(r: &FigRow) -> Option<String> {
    let (server, client) = r.own_cpu_delta?;
    let t = |x: f64| crate::units::signed_time(x).replace(' ', "\u{a0}");
    // A CPU figure of both sides from the instrumented twins, set beside the own CPU (which is
    // the plain scenarios' less the calls' means in state), not a part of it, nor of the path.
    let calls = match &r.calls_state {
        Some(st) => {
            let most = st.largest.as_ref().map_or(String::new(), |g| {
                format!(
                    "; most {} {} (in situ {:.2}× {})",
                    g.label,
                    t(g.extra_ns),
                    g.ratio,
                    g.against()
                )
            });
            format!(
                "; beside it, both sides' calls timed in situ beyond what the flow composes: \
                 {}{most}",
                t(st.total_ns)
            )
        }
        None => "; its calls not timed in situ".into(),
    };
    Some(format!(
        "own CPU beyond the baseline's: server {}, client {}{calls}",
        t(server),
        t(client)
    ))
}

/// A delta cell's notes, one after another.
fn add_note(why: &mut String, note: &str) {
    if !why.is_empty() {
        why.push_str("; ");
    }
    why.push_str(note);
}

fn row(r: &FigRow) -> Row {
    Row {
        scenario: scenario(r),
        baseline: r.baseline,
        path: time(r.path_ns),
        latency: if r.baseline {
            Cell {
                figures: r.latency.map_or("–".into(), |v| time(v.real_ns)),
                ratio: "baseline".into(),
                ..Cell::default()
            }
        } else if r.control.is_some() {
            // Its calls and waits alone: what they leave is the cost per byte it measures.
            Cell {
                ratio: "size control".into(),
                sub: String::new(),
                off: false,
                ..cell(r.latency.as_ref())
            }
        } else {
            let mut c = cell(r.latency.as_ref());
            if let (true, Some(g)) = (c.off, &r.gap) {
                c.why = format!(
                    "{} {:.2}× in situ, {}",
                    g.label,
                    g.ratio,
                    // A figure and its unit stay on one line when the note wraps.
                    crate::units::signed_time(g.extra_ns).replace(' ', "\u{a0}")
                );
            }
            c
        },
        delta: {
            let mut c = delta_cell(r.delta.as_ref());
            if let (Some(o), Some(d)) = (&r.control, r.delta) {
                // The control's difference beyond its calls is what the other rows take per byte:
                // not a miss, a measurement.
                c.ratio = "size control".into();
                c.off = false;
                let real = d.real_ci95_ns.map_or(String::new(), |(lo, hi)| {
                    format!("real {}; ", super::answer::interval_us(lo, hi))
                });
                c.why = format!(
                    "{real}beyond its calls and waits {} over {} B: the stack's cost per byte",
                    crate::units::signed_time(o.residual_ns).replace(' ', "\u{a0}"),
                    crate::units::count(o.bytes)
                );
            }
            if let Some(part) = r
                .bytes
                .as_ref()
                .filter(|p| (p.term.bytes != 0.0 || p.term.waits != 0) && r.delta.is_some())
            {
                let t = &part.term;
                let waits = match (t.per_byte.per_wait, t.waits) {
                    (Some(_), 0) | (None, _) => String::new(),
                    (Some(_), 1) => " and 1 wait".into(),
                    (Some(_), n) => format!(" and {n} waits"),
                };
                let counted = part.counted_ns;
                // Said where it shows at the page's resolution (0.1 µs).
                let hidden = if part.hidden_ns().abs() >= 50.0 {
                    format!(
                        " of {}, the rest beside the signing",
                        crate::units::signed_time(t.ns)
                    )
                } else {
                    String::new()
                };
                let what = if waits.is_empty() {
                    "the bytes'"
                } else {
                    "the bytes' and waits'"
                };
                add_note(
                    &mut c.why,
                    &format!(
                        "of it, {what} own {}{hidden} ({} B{waits} at the size controls' rates)",
                        crate::units::signed_time(counted).replace(' ', "\u{a0}"),
                        if t.bytes < 0.0 {
                            crate::units::count(t.bytes)
                        } else {
                            format!("+{}", crate::units::count(t.bytes))
                        },
                    ),
                );
            }
            if let Some(w) = r.waits.filter(|w| w.extra != 0 && r.delta.is_some()) {
                add_note(
                    &mut c.why,
                    &format!(
                        "{} {} round trip{} on loopback at {}",
                        if w.extra > 0 { "with" } else { "less" },
                        w.extra.abs(),
                        if w.extra.abs() == 1 { "" } else { "s" },
                        crate::units::time(w.each_ns).replace(' ', "\u{a0}")
                    ),
                );
            }
            if let Some(note) = miss_note(r).filter(|_| c.off) {
                add_note(&mut c.why, &note);
            }
            c
        },
        server_memory: memory_cell(r, r.server_in_memory.as_ref(), r.own_memory.map(|o| o.0)),
        client_memory: memory_cell(r, r.client_in_memory.as_ref(), r.own_memory.map(|o| o.1)),
        network: r
            .network
            .iter()
            .map(|a| {
                (
                    format!("{}: {}", crate::units::rtt(a.rtt_ns), time(a.measured_ns)),
                    format!(
                        "{} {} ({})",
                        if r.baseline { "model" } else { "phases" },
                        time(a.phases_ns),
                        crate::units::delta((a.phases_ns / a.measured_ns - 1.0) * 100.0)
                    ),
                )
            })
            .collect(),
        loopback_share: format!(
            "{:.0}% / {:.0}%",
            r.server_loopback.ratio() * 100.0,
            r.client_loopback.ratio() * 100.0
        ),
    }
}

pub(crate) fn build(runs: &[&Run]) -> Vec<View> {
    runs.iter()
        .filter_map(|run| {
            let rows = fig::rows(&run.results);
            if rows.is_empty() {
                return None;
            }
            let mut stacks: Vec<StackView> = Vec::new();
            for r in &rows {
                let at = match stacks
                    .iter()
                    .position(|s| s.stack == run.results.stack_label(&r.stack))
                {
                    Some(k) => k,
                    None => {
                        stacks.push(StackView {
                            stack: run.results.stack_label(&r.stack),
                            composed_stack: r.composed_stack.clone(),
                            own: String::from("no baseline in this run"),
                            per_byte: String::new(),
                            rows: Vec::new(),
                            time_lines: run
                                .results
                                .handshakes
                                .iter()
                                .flat_map(|h| &h.scenarios)
                                .filter(|s| s.instrumented && s.stack.name() == r.stack)
                                .filter_map(|s| time_line_row(&run.results, s))
                                .collect(),
                        });
                        stacks.len() - 1
                    }
                };
                if let Some(o) = r.own {
                    let half = o
                        .half95_ns
                        .map_or(String::new(), |h| format!(" ± {}", time(h)));
                    let from = if r.baseline {
                        format!(
                            "the loopback median of {} less its composed path of {}",
                            scenario(r),
                            time(r.path_ns)
                        )
                    } else {
                        "its baseline's loopback median less that baseline's composed path".into()
                    };
                    if r.baseline || stacks[at].own.starts_with("no ") {
                        stacks[at].own = format!("{}{half}: {from}", time(o.ns));
                    }
                }
                if let Some(p) = r.bytes.as_ref().filter(|_| stacks[at].per_byte.is_empty()) {
                    stacks[at].per_byte = per_byte_line(&p.term.per_byte);
                }
                stacks[at].rows.push(row(r));
            }
            Some(View {
                host: run.label.clone(),
                machine_id: run.anchor.clone(),
                stacks,
            })
        })
        .collect()
}
