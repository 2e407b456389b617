//! The overview page's network section: per RTT, each loss rate's medians and tails per scenario
//! with the model beside them, and the hybrid - classical difference over loss as a curve, with
//! Paquin et al.'s published P-256 / P-256+Kyber512 difference dashed beside it.

use super::svg::{self, Series};
use super::Run;
use crate::references::{paquin, paquin_nearest};
use crate::results::{Cell, Network};
use crate::units::{self, time};
use minijinja::Value;
use serde::Serialize;

#[derive(Serialize)]
pub struct View {
    pub host: String,
    pub date: String,
    pub wall: String,
    pub setup: String,
    pub rtts: Vec<RttView>,
    pub notes: Vec<String>,
}

#[derive(Serialize)]
pub struct RttView {
    pub rtt: String,
    pub rows: Vec<Row>,
    pub chart: Value,
}

#[derive(Serialize)]
pub struct Row {
    pub loss: String,
    pub link: String,
    pub valid: bool,
    pub scenario: String,
    pub p50: String,
    pub p95: String,
    pub mean: String,
    pub model: String,
    pub packets: String,
    pub lost: String,
    pub failed: usize,
}

/// A cell's median in milliseconds (the charts' unit).
fn median_ms(c: &Cell, n: &Network) -> Option<f64> {
    c.ready_median_ns(n).map(|x| x / 1e6)
}

/// Hybrid median minus its classical baseline's, per loss rate, for one stack at one RTT.
fn deltas(n: &Network, rtt: f64, stack: &str, protocol: &str) -> Vec<(f64, f64)> {
    n.points
        .iter()
        .filter(|p| p.rtt_ns == rtt)
        .filter_map(|p| {
            let hybrid = p.cells.iter().find(|c| {
                c.stack.name() == stack
                    && c.protocol == protocol
                    && c.baseline.is_some()
                    && (c.group.contains("X25519") || c.group.contains("x25519"))
            })?;
            let base = p.cells.iter().find(|c| {
                c.stack.name() == stack
                    && c.protocol == protocol
                    && Some(&c.group) == hybrid.baseline.as_ref()
            })?;
            Some((p.loss_pct, median_ms(hybrid, n)? - median_ms(base, n)?))
        })
        .collect()
}

pub fn build(runs: &[Run]) -> Vec<View> {
    let published = paquin().unwrap_or_default();
    runs.iter()
        .filter_map(|run| {
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
                                scenario: format!("{} {}", c.stack.name(), c.group),
                                p50: c.ready_median_ns(n).map_or("n/a".into(), time),
                                p95: c.ready_at(n, 95.0).map_or("n/a".into(), time),
                                mean: time(c.ready_mean_ns),
                                model: time(c.model.expected_ns),
                                packets: format!("{:.1} / {:.1}", c.packets_per_handshake[0], c.packets_per_handshake[1]),
                                lost: format!("{:.1}% / {:.1}%", c.observed_loss_pct[0], c.observed_loss_pct[1]),
                                failed: c.failed,
                            })
                        })
                        .collect();
                    let mut series = Vec::new();
                    // Every (stack, protocol) the grid measured, in the order its cells are.
                    let mut pairs: Vec<(&str, &str)> = Vec::new();
                    for c in n.points.iter().flat_map(|p| &p.cells) {
                        if !pairs.contains(&(c.stack.name(), c.protocol.as_str())) {
                            pairs.push((c.stack.name(), c.protocol.as_str()));
                        }
                    }
                    for (i, (stack, protocol)) in pairs.iter().enumerate() {
                        let pts = deltas(n, rtt, stack, protocol);
                        if !pts.is_empty() {
                            series.push(Series { label: format!("{stack}: hybrid − classical median"), colour: svg::PALETTE[i].into(), dashed: false, points: pts });
                        }
                    }
                    let reference: Vec<(f64, f64)> = n
                        .points
                        .iter()
                        .filter(|p| p.rtt_ns == rtt)
                        .filter_map(|p| {
                            let a = paquin_nearest(&published, "p256_kyber512_90s", rtt / 1e6, p.loss_pct)?;
                            let b = paquin_nearest(&published, "prime256v1", rtt / 1e6, p.loss_pct)?;
                            Some((p.loss_pct, a.ms.get(2)? - b.ms.get(2)?))
                        })
                        .collect();
                    if !reference.is_empty() {
                        series.push(Series { label: "Paquin et al. 2020: P-256+Kyber512 − P-256 median (their machine)".into(), colour: svg::PALETTE[5].into(), dashed: true, points: reference });
                    }
                    let title = format!("Hybrid minus classical median handshake time over loss, RTT {}", units::rtt(rtt));
                    RttView { rtt: units::rtt(rtt), rows, chart: Value::from_safe_string(svg::lines(&title, "loss per direction, %", "ms", &series)) }
                })
                .collect();
            Some(View {
                host: run.label.clone(),
                date: n.date_utc.clone(),
                wall: format!("{:.0} s", n.wall_seconds),
                setup: format!(
                    "grid {}; {}; congestion control {}; offloads {}; {}; base RTT through the router {} (half taken off each direction's delay); {} handshakes per scenario and point, {} in flight",
                    n.grid,
                    n.emulator,
                    n.congestion_control,
                    if n.offloads_off { "off" } else { "on" },
                    n.rate_mbit.map_or("no bandwidth limit".into(), |r| format!("tbf at {r} Mbit/s")),
                    time(n.base_rtt_ns),
                    n.per_point,
                    n.parallel
                ),
                rtts: rtt_views,
                notes: n.notes.iter().map(|w| w.to_string()).collect(),
            })
        })
        .collect()
}
