//! The network sections: per RTT, the hybrid's extra time over its baseline (the front page and the
//! network page), and on the network page a chart per group of the median and 95th percentile over
//! loss for every stack, with Paquin et al.'s published points for the nearest group of theirs
//! beside them, and each loss rate's figures per scenario with the model.

use super::svg::{self, Axes, Line};
use super::Run;
use crate::references::{paquin, paquin_nearest};
use crate::results::{Cell, Network};
use crate::units::{self, time};
use minijinja::Value;
use serde::Serialize;

#[derive(Serialize)]
pub(crate) struct View {
    pub(crate) host: String,
    pub(crate) machine_id: String,
    pub(crate) date: String,
    pub(crate) wall: String,
    pub(crate) setup: String,
    pub(crate) rtts: Vec<RttView>,
    pub(crate) notes: Vec<String>,
}

#[derive(Serialize)]
pub(crate) struct RttView {
    pub(crate) rtt: String,
    pub(crate) rows: Vec<Row>,
    /// One chart per group: p50 and p95 over loss, a line each per stack (on the network page).
    pub(crate) charts: Vec<Value>,
    /// The answer at this RTT: each hybrid's extra time over its baseline (on both pages).
    pub(crate) delta: Vec<Value>,
}

#[derive(Serialize)]
pub(crate) struct Row {
    pub(crate) loss: String,
    pub(crate) link: String,
    pub(crate) valid: bool,
    pub(crate) scenario: String,
    pub(crate) p50: String,
    pub(crate) p95: String,
    pub(crate) mean: String,
    pub(crate) model: String,
    /// The loss model's p50 and p95 (files from 2026-12-02 on; else empty), without their unit
    /// where the measured figure beside them has the same one.
    pub(crate) model_p50: String,
    pub(crate) model_p95: String,
    /// What a window stall hides of the zero point, taken off the model (netmodel::
    /// stall_hidden_ns; files from 2026-12-03 on), where it hides anything; else empty.
    pub(crate) stall: String,
    /// The medians of wire and endpoint time (files from 2026-12-03 on; else "–").
    pub(crate) split: String,
    /// Client / server CPU per handshake over the cell's window.
    pub(crate) cpu: String,
    pub(crate) packets: String,
    pub(crate) lost: String,
    pub(crate) failed: usize,
}

/// Paquin et al.'s key exchange nearest a group of ours: P-256 for the classical TLS group, their
/// P-256 + Kyber512 hybrid for ours (they measured no X25519 and no ML-KEM).
fn paquin_kex(group: &str, baseline: Option<&String>) -> Option<(&'static str, &'static str)> {
    match (group, baseline) {
        ("X25519", None) => Some(("prime256v1", "P-256")),
        (_, Some(b)) if b == "X25519" && group.contains("MLKEM") => {
            Some(("p256_kyber512_90s", "P-256 + Kyber512"))
        }
        _ => None,
    }
}

/// A cell set against the same group with another certificate chain: the authentication
/// section's, not a key exchange's line.
fn changes_chain(c: &Cell) -> bool {
    c.against
        .as_ref()
        .is_some_and(|a| a.suite == c.group && a.auth != c.auth)
}

/// A model's figure beside a measured one: its unit left off when it is the measured one's
/// ("12.03" beside "12.22 ms"), to keep the page small.
fn beside(measured: Option<f64>, model: f64) -> String {
    let m = time(model);
    let unit = |t: &str| t.rsplit_once(' ').map(|(_, u)| u.to_string());
    match measured.map(time) {
        Some(t) if unit(&t) == unit(&m) => {
            m.rsplit_once(' ').map_or(m.clone(), |(v, _)| v.to_string())
        }
        _ => m,
    }
}

/// The most handshakes a cell of the points `at` picks made (each cell's are what it asked for, or
/// fewer where its time allowance stopped them).
fn most(n: &Network, at: impl Fn(&crate::results::Point) -> bool) -> usize {
    n.points
        .iter()
        .filter(|p| at(p))
        .flat_map(|p| &p.cells)
        .map(|c| crate::figures::network::handshakes(c) as usize)
        .max()
        .unwrap_or(0)
}

/// Whether the run's points ran their cells in one window each (`CellPace::window_cells`).
fn windowed(n: &Network) -> bool {
    n.points
        .iter()
        .flat_map(|p| &p.cells)
        .any(|c| c.pace.is_some_and(|p| p.window_cells.is_some()))
}

fn ms(x: f64) -> String {
    if x >= 1000.0 {
        format!("{} s", x / 1000.0)
    } else {
        format!("{x} ms")
    }
}

/// The RTT's charts over loss, one per group, and its answer (`delta_chart`), on the same axis.
fn charts(
    n: &Network,
    rtt: f64,
    published: &[crate::references::PaquinPoint],
) -> (Vec<Value>, Option<Value>) {
    let at: Vec<&crate::results::Point> = n.points.iter().filter(|p| p.rtt_ns == rtt).collect();
    let mut groups: Vec<(&str, &str, Option<&String>)> = Vec::new();
    let mut stacks: Vec<&str> = Vec::new();
    for c in at
        .iter()
        .flat_map(|p| &p.cells)
        .filter(|c| !changes_chain(c))
    {
        if !groups
            .iter()
            .any(|(pr, g, _)| *pr == c.protocol && *g == c.group)
        {
            groups.push((c.protocol.as_str(), c.group.as_str(), c.baseline.as_ref()));
        }
        if !stacks.contains(&c.stack.name()) {
            stacks.push(c.stack.name());
        }
    }
    // The losses evenly spaced (0, 1, 5, 20%: on a linear axis 0% and 1% would touch).
    let x_of = |loss: f64| at.iter().position(|p| p.loss_pct == loss).unwrap_or(0) as f64;
    let ticks: Vec<(f64, String)> = at
        .iter()
        .map(|p| (x_of(p.loss_pct), format!("{}%", p.loss_pct)))
        .collect();
    let out: Vec<Value> = groups
        .iter()
        .map(|(protocol, group, baseline)| {
            let mut lines = Vec::new();
            for (k, stack) in stacks.iter().enumerate() {
                let cells: Vec<(f64, &Cell)> = at
                    .iter()
                    .filter_map(|p| {
                        let c = p.cells.iter().find(|c| {
                            c.stack.name() == *stack
                                && c.protocol == *protocol
                                && c.group == *group
                                && !changes_chain(c)
                        })?;
                        Some((x_of(p.loss_pct), c))
                    })
                    .collect();
                if cells.is_empty() {
                    continue;
                }
                for (pct, dashed) in [(50.0, false), (95.0, true)] {
                    lines.push(Line {
                        label: format!("{stack} p{pct}"),
                        colour: svg::PALETTE[k % svg::PALETTE.len()].into(),
                        dashed,
                        points_only: false,
                        points: cells
                            .iter()
                            .filter_map(|(loss, c)| Some((*loss, c.ready_at(n, pct)? / 1e6)))
                            .collect(),
                        band: Vec::new(),
                    });
                }
            }
            if let Some((kex, name)) = paquin_kex(group, *baseline) {
                for (i, (pct, colour)) in [(50.0, "#222222"), (95.0, "#999999")].iter().enumerate()
                {
                    let points: Vec<(f64, f64)> = at
                        .iter()
                        .filter_map(|p| {
                            let q = paquin_nearest(published, kex, rtt / 1e6, p.loss_pct)?;
                            let j = q.percentiles.iter().position(|x| x == pct)?;
                            Some((x_of(p.loss_pct), *q.ms.get(j)?))
                        })
                        .collect();
                    if !points.is_empty() {
                        lines.push(Line {
                            label: format!("Paquin et al. 2020, {name} p{pct} (their machine)"),
                            colour: (*colour).into(),
                            dashed: i == 1,
                            points_only: true,
                            points,
                            band: Vec::new(),
                        });
                    }
                }
            }
            let title = format!(
                "{} {group}: connect to handshake complete over loss, RTT {}",
                crate::suite::protocol_label(protocol),
                units::rtt(rtt)
            );
            Value::from_safe_string(format!(
                r#"<figure class="chart"><figcaption>{}</figcaption>{}</figure>"#,
                svg::escape(&format!(
                    "{} {group}, RTT {}",
                    crate::suite::protocol_label(protocol),
                    units::rtt(rtt)
                )),
                svg::chart(
                    &title,
                    &Axes {
                        x_label: "loss per direction",
                        y_label: "ms (log)",
                        log_y: true,
                        x_ticks: ticks.clone(),
                        y_unit: &ms,
                    },
                    &lines,
                )
            ))
        })
        .collect();
    let delta = delta_chart(n, rtt, &at, &ticks, &x_of);
    (out, delta)
}

/// The answer at this RTT: each hybrid's p50 minus its classical baseline's, same stack and
/// certificate, at the loss rates up to 1% (the answer's cells; beyond, a lost packet's timer moves
/// the medians by hundreds of milliseconds either way), with the difference's 95% interval as a band
/// (`figures::answer::network_extra_interval_ns`): a few hundred microseconds at 12 ms, which a
/// log-scale latency chart cannot show.
fn delta_chart(
    n: &Network,
    rtt: f64,
    at: &[&crate::results::Point],
    ticks: &[(f64, String)],
    x_of: &dyn Fn(f64) -> f64,
) -> Option<Value> {
    use crate::figures::answer::{network_extra_interval_ns, network_extra_ns, Side};
    let mut pairs: Vec<(&str, &str, &str, Option<&str>)> = Vec::new();
    for c in at
        .iter()
        .flat_map(|p| &p.cells)
        .filter(|c| !changes_chain(c))
    {
        if let Some(b) = &c.baseline {
            let pair = (
                c.stack.name(),
                c.group.as_str(),
                b.as_str(),
                c.auth.as_deref(),
            );
            if !pairs.contains(&pair) {
                pairs.push(pair);
            }
        }
    }
    let lines: Vec<Line> = pairs
        .iter()
        .enumerate()
        .filter_map(|(k, &(stack, group, baseline, auth))| {
            let sides = (Side::parse(group), Side::parse(baseline));
            let mut points = Vec::new();
            let mut band = Vec::new();
            for p in at.iter().filter(|p| p.loss_pct <= 1.0) {
                let Some(d) = network_extra_ns(n, stack, sides, auth, rtt, p.loss_pct) else {
                    continue;
                };
                let x = x_of(p.loss_pct);
                points.push((x, d / 1e6));
                if let Some((lo, hi)) =
                    network_extra_interval_ns(n, stack, sides, auth, rtt, p.loss_pct)
                {
                    band.push((x, lo / 1e6, hi / 1e6));
                }
            }
            (!points.is_empty()).then(|| Line {
                label: format!("{stack} {group} − {baseline}"),
                colour: svg::PALETTE[k % svg::PALETTE.len()].into(),
                dashed: false,
                points_only: false,
                points,
                band,
            })
        })
        .collect();
    if lines.is_empty() {
        return None;
    }
    let caption = format!(
        "Hybrid minus classical at 0% and 1% loss, p50 with its 95% interval, RTT {}",
        units::rtt(rtt)
    );
    Some(Value::from_safe_string(format!(
        r#"<figure class="chart"><figcaption>{}</figcaption>{}</figure>"#,
        svg::escape(&caption),
        svg::chart(
            &caption,
            &Axes {
                x_label: "loss per direction",
                y_label: "ms",
                log_y: false,
                x_ticks: ticks.iter().filter(|t| t.0 <= x_of(1.0)).cloned().collect(),
                y_unit: &|x| format!("{x} ms"),
            },
            &lines,
        )
    )))
}

pub(crate) fn build(runs: &[&Run]) -> Vec<View> {
    let published = paquin().unwrap_or_default();
    // A machine at a time, on threads of their own (the paired differences resampled per run are
    // most of the front page's time with many machines).
    super::par_map(runs, |run| {
            let n = run.results.network.as_ref()?;
            let mut rtts: Vec<f64> = n.points.iter().map(|p| p.rtt_ns).filter(|&r| r > 0.0).collect();
            rtts.dedup();
            let rtt_views = rtts
                .iter()
                .map(|&rtt| {
                    let rows = n
                        .points
                        .iter()
                        .filter(|p| p.rtt_ns == rtt)
                        .flat_map(|p| {
                            p.cells.iter().map(move |c| Row {
                                loss: format!("{}%", p.loss_pct),
                                link: time(p.link.rtt_median_ns),
                                valid: p.link.valid,
                                scenario: match &c.auth {
                                    Some(a) => format!("{} {} + {a}", run.results.stack_label(c.stack.name()), c.group),
                                    None => format!("{} {}", run.results.stack_label(c.stack.name()), c.group),
                                },
                                p50: c.ready_median_ns(n).map_or("n/a".into(), time),
                                p95: c.ready_at(n, 95.0).map_or("n/a".into(), time),
                                mean: time(c.ready_mean_ns),
                                model: time(c.model.expected_ns),
                                model_p50: c.model.p50_ns.map_or(String::new(), |m| beside(c.ready_median_ns(n), m)),
                                model_p95: c.model.p95_ns.map_or(String::new(), |m| beside(c.ready_at(n, 95.0), m)),
                                stall: c.model.stall.as_ref().filter(|s| s.hidden_ns > 0.0).map_or(String::new(), |s| time(s.hidden_ns)),
                                split: c.split.map_or("–".into(), |s| {
                                    format!("{} / {}", time(s.wire_p50_ns), time(s.endpoint_p50_ns))
                                }),
                                cpu: c.cpu.map_or("–".into(), |cpu| {
                                    let n = crate::figures::network::handshakes(c);
                                    format!("{} / {}", time(cpu.client_ns / n), time(cpu.server_ns / n))
                                }),
                                packets: format!("{:.1} / {:.1}", c.packets_per_handshake[0], c.packets_per_handshake[1]),
                                lost: format!("{:.1}% / {:.1}%", c.observed_loss_pct[0], c.observed_loss_pct[1]),
                                failed: c.failed,
                            })
                        })
                        .collect();
                    {
                        let (charts, delta) = charts(n, rtt, &published);
                        RttView { rtt: units::rtt(rtt), rows, charts, delta: delta.into_iter().collect() }
                    }
                })
                .collect();
            Some(View {
                host: run.label.clone(),
                machine_id: run.anchor.clone(),
                date: n.date_utc.clone(),
                wall: format!("{:.0} s", n.wall_seconds),
                setup: format!(
                    "grid {}; {}; congestion control {}; offloads {}; {}{}; base RTT through the router {} (half taken off each direction's delay){}; {}",
                    n.grid,
                    n.emulator,
                    n.congestion_control,
                    if n.offloads_off { "off" } else { "on" },
                    n.rate_mbit.map_or("no bandwidth limit".into(), |r| format!("tbf at {r} Mbit/s")),
                    match (n.mtu, n.mss, n.initcwnd) {
                        (Some(mtu), Some(mss), Some(w)) => format!("; MTU {mtu}, MSS {mss}, initial congestion window {w} segments"),
                        _ => String::new(),
                    },
                    time(n.base_rtt_ns),
                    match crate::figures::network::percentiles_ns(&n.wake_ns, &[50.0, 90.0]).as_slice() {
                        [p50, p90] if !n.wake_ns.is_empty() => format!(
                            "; a thread wakes {} past its timer (p50; p90 {})",
                            time(*p50),
                            time(*p90)
                        ),
                        _ => String::new(),
                    },
                    match n.load_pct {
                        Some(load) => format!(
                            "{} handshakes per scenario and point (up to {} at the zero point, one at a time; up to {} at 0% and 1% loss; up to {} at 10% and more), a new one every zero-point median / {load:.0}% of a core, at most {} of a cell in flight{}",
                            n.per_point,
                            most(n, |p| p.rtt_ns == 0.0),
                            most(n, |p| p.rtt_ns > 0.0 && p.loss_pct <= 1.0),
                            most(n, |p| p.loss_pct >= 10.0),
                            n.parallel,
                            if windowed(n) {
                                "; a point's cells one after another, each starting a gap after the one before has started its last handshake (whose last handshakes finish beside it)"
                            } else {
                                ""
                            }
                        ),
                        None => format!("{} handshakes per scenario and point, all of a cell's in flight at once (at most 40: a unit error ignored --parallel {})", n.per_point, n.parallel),
                    }
                ),
                rtts: rtt_views,
                notes: n.notes.iter().map(|w| w.to_string()).collect(),
            })
    })
    .into_iter()
    .flatten()
    .collect()
}
