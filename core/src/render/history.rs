//! The history page: per machine, every run it has (file, date, commit, sections) and its
//! headline figures over time as lines with a noise band, so drift and real changes show apart.

use super::svg::{self, Axes, Line};
use super::{answer, Machine, Run};
use crate::comparison::DEFAULT_NOISE_FLOOR_PCT;
use crate::figures::answer::floor_half_width;
use crate::results::{Operation, PhaseId};
use crate::units;
use minijinja::Value;
use serde::Serialize;

#[derive(Serialize)]
pub(crate) struct Body {
    pub(crate) machines: Vec<MachineView>,
    pub(crate) floor_pct: String,
}

#[derive(Serialize)]
pub(crate) struct MachineView {
    pub(crate) label: String,
    pub(crate) note: String,
    pub(crate) note_source: String,
    pub(crate) id: String,
    pub(crate) runs: Vec<RunRow>,
    pub(crate) charts: Vec<Value>,
}

#[derive(Serialize)]
pub(crate) struct RunRow {
    pub(crate) file: String,
    pub(crate) href: String,
    pub(crate) date: String,
    pub(crate) commit: String,
    pub(crate) sections: String,
    pub(crate) complete: bool,
    pub(crate) shown: bool,
    pub(crate) openssl: String,
}

/// Seconds since 1970 of an RFC 3339 UTC time ("2026-11-30T14:39:03Z"); `None` if it is not one.
/// Days from the civil date by Howard Hinnant's `days_from_civil` (chrono-compatible algorithms,
/// http://howardhinnant.github.io/date_algorithms.html).
pub(crate) fn epoch_seconds(t: &str) -> Option<f64> {
    let b = t.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| t.get(r)?.parse::<i64>().ok();
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((days * 86_400 + hh * 3600 + mm * 60 + ss) as f64)
}

/// "11-30 14:39": a short date for an axis.
fn short(t: &str) -> String {
    match (t.get(5..10), t.get(11..16)) {
        (Some(d), Some(h)) => format!("{d} {h}"),
        _ => t.to_string(),
    }
}

/// Phases drawn over time: a post-quantum and a classical one from two libraries.
const PHASES: [(&str, &str, Operation); 3] = [
    ("openssl", "ML-KEM-768", Operation::KemEncaps),
    ("liboqs", "ML-KEM-768", Operation::KemEncaps),
    ("openssl", "X25519", Operation::DhDerive),
];

/// A run built against another OpenSSL (`make openssl4`) is another library for the stacks that run
/// OpenSSL: its figures get their own line, not a jump in this one.
fn openssl(r: &Run) -> String {
    r.results
        .run
        .openssl_version
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every change the answer table asks about, in the order the runs first have it, once per OpenSSL
/// library where the change's stack runs OpenSSL.
fn series(at: &[(f64, &Run)]) -> Vec<(answer::Change, String)> {
    let mut changes: Vec<answer::Change> = Vec::new();
    for (_, run) in at {
        for q in answer::QUESTIONS {
            for c in (q.changes)(&run.results) {
                if !changes.contains(&c) {
                    changes.push(c);
                }
            }
        }
    }
    let mut series: Vec<(answer::Change, String)> = Vec::new();
    for c in &changes {
        let mut libs: Vec<String> = Vec::new();
        for (_, r) in at {
            let lib = if c.stack == "openssl" {
                openssl(r)
            } else {
                String::new()
            };
            if !libs.contains(&lib) {
                libs.push(lib);
            }
        }
        series.extend(libs.into_iter().map(|l| (c.clone(), l)));
    }
    series
}

/// The key phases' medians over the runs, each with the newest median's noise floor as its band.
fn phase_lines(at: &[(f64, &Run)], hours: &dyn Fn(f64) -> f64) -> Vec<Line> {
    let mut phases = Vec::new();
    for (k, (backend, alg, op)) in PHASES.iter().enumerate() {
        let id = PhaseId::handshake(backend, alg, *op);
        let points: Vec<(f64, f64)> = at
            .iter()
            .filter_map(|(t, r)| Some((hours(*t), r.results.phase(&id)?.stats.median_ns)))
            .collect();
        let Some(&(_, newest)) = points.last() else {
            continue;
        };
        let h = floor_half_width(newest, 0.0, DEFAULT_NOISE_FLOOR_PCT);
        phases.push(Line {
            label: format!("{backend} {alg} {op}"),
            colour: svg::PALETTE[(k + 3) % svg::PALETTE.len()].into(),
            dashed: false,
            points_only: false,
            band: points
                .iter()
                .map(|(x, _)| (*x, newest - h, newest + h))
                .collect(),
            points,
        });
    }
    phases
}

fn charts(runs: &[Run], m: &Machine) -> Vec<Value> {
    let at: Vec<(f64, &Run)> = m
        .runs
        .iter()
        .filter_map(|&i| Some((epoch_seconds(&runs[i].results.run.date_utc)?, &runs[i])))
        .collect();
    // One run draws no line: the table says so.
    let Some(&(t0, _)) = at.first().filter(|_| at.len() > 1) else {
        return Vec::new();
    };
    let hours = |t: f64| (t - t0) / 3600.0;
    let mut ticks: Vec<(f64, String)> = Vec::new();
    if let (Some(first), Some(last)) = (at.first(), at.last()) {
        ticks.push((hours(first.0), short(&first.1.results.run.date_utc)));
        if last.0 > first.0 {
            ticks.push((hours(last.0), short(&last.1.results.run.date_utc)));
        }
    }
    let series = series(&at);
    let us = |x: f64| format!("{} µs", units::count(x / 1e3));
    let mut out = Vec::new();
    let mut real = Vec::new();
    let mut composed = Vec::new();
    // Each series' figures over the runs, the series on threads of their own: a machine's history
    // is most of this page's time (a paired difference resampled per run where none is stored).
    let figures = super::par_map(&series, |(c, lib)| {
        at.iter()
            .filter(|(_, r)| c.stack != "openssl" || openssl(r) == *lib)
            .map(|(t, r)| (hours(*t), *r, answer::figures(&r.results, c)))
            .collect::<Vec<(f64, &Run, answer::Figures)>>()
    });
    for (k, ((c, lib), figs)) in series.iter().zip(figures).enumerate() {
        let colour = svg::PALETTE[k % svg::PALETTE.len()].to_string();
        let name = if lib.is_empty() {
            format!("{} {}", c.stack, c.group)
        } else {
            format!("{} ({lib}) {}", c.stack, c.group)
        };
        real.push(Line {
            label: name.clone(),
            colour: colour.clone(),
            dashed: false,
            points_only: false,
            points: figs
                .iter()
                .filter_map(|(x, _, f)| Some((*x, f.real_ns?)))
                .collect(),
            band: figs
                .iter()
                .filter_map(|(x, _, f)| {
                    let i = f.real_interval?;
                    Some((*x, i.lo95_ns, i.hi95_ns))
                })
                .collect(),
        });
        let composed_medians = |r: &Run, stack: &str| {
            let a = r.results.suite(&c.group, stack)?.composed.median_ns;
            let b = r.results.suite(&c.baseline, stack)?.composed.median_ns;
            Some((a, b))
        };
        composed.push(Line {
            label: name,
            colour,
            dashed: false,
            points_only: false,
            points: figs
                .iter()
                .filter_map(|(x, _, f)| Some((*x, f.composed_ns?)))
                .collect(),
            band: figs
                .iter()
                .filter_map(|(x, r, f)| {
                    let d = f.composed_ns?;
                    let (a, b) = composed_medians(r, &f.composed_stack)?;
                    let h = floor_half_width(a, b, DEFAULT_NOISE_FLOOR_PCT);
                    Some((*x, d - h, d + h))
                })
                .collect(),
        });
    }
    let axes = |y: &'static str| Axes {
        x_label: "run time (UTC), hours apart as measured",
        y_label: y,
        log_y: false,
        x_ticks: ticks.clone(),
        y_unit: &us,
    };
    let figure = |caption: &str, svg: String| {
        Value::from_safe_string(format!(
            r#"<figure class="chart"><figcaption>{}</figcaption>{svg}</figure>"#,
            svg::escape(caption)
        ))
    };
    real.retain(|l| !l.points.is_empty());
    composed.retain(|l| !l.points.is_empty());
    if !real.is_empty() {
        out.push(figure(
            "Real loopback handshake Δ, hybrid against classical (band: its 95% interval)",
            svg::chart("Real handshake Δ over time", &axes("Δ µs"), &real),
        ));
    }
    if !composed.is_empty() {
        out.push(figure(
            &format!("Composed Δ of the same change (band: the {DEFAULT_NOISE_FLOOR_PCT}% floor on both medians)"),
            svg::chart("Composed Δ over time", &axes("Δ µs"), &composed),
        ));
    }
    let phases = phase_lines(&at, &hours);
    if !phases.is_empty() {
        out.push(figure(
            &format!("Key phase medians (band: the newest ±{DEFAULT_NOISE_FLOOR_PCT}%)"),
            svg::chart("Phase medians over time", &axes("median µs"), &phases),
        ));
    }
    out
}

pub(crate) fn build(runs: &[Run], machines: &[Machine]) -> Body {
    // The machines with the longest history first.
    let mut order: Vec<&Machine> = machines.iter().collect();
    order.sort_by_key(|m| std::cmp::Reverse(m.runs.len()));
    Body {
        floor_pct: format!("{DEFAULT_NOISE_FLOOR_PCT}"),
        machines: order
            .into_iter()
            .map(|m| {
                let host = &runs[m.shown].results.run.host;
                let (note, note_source) = super::machine_note(host).unwrap_or_default();
                MachineView {
                    note,
                    note_source,
                    label: super::machine_label(host),
                    id: runs[m.shown].machine_anchor.clone(),
                    runs: m
                        .runs
                        .iter()
                        .rev()
                        .map(|&i| {
                            let r = &runs[i].results;
                            RunRow {
                                file: runs[i].json_href.trim_start_matches("data/").to_string(),
                                href: runs[i].json_href.clone(),
                                date: r.run.date_utc.clone(),
                                commit: r.run.tool_commit.clone(),
                                sections: r.sections().join(", "),
                                complete: r.is_complete(),
                                // An emulated run is on the front page's architectures table only.
                                shown: i == m.shown && !runs[i].results.run.host.is_emulated(),
                                openssl: r.run.openssl_version.clone(),
                            }
                        })
                        .collect(),
                    charts: charts(runs, m),
                }
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn rfc3339_times_by_hand() {
        assert_eq!(super::epoch_seconds("1970-01-01T00:00:00Z"), Some(0.0));
        // 2000-03-01 is day 11,017 (30 years of 365 days, 7 leap days, Jan and Feb of 2000).
        assert_eq!(
            super::epoch_seconds("2000-03-01T00:00:01Z"),
            Some(11_017.0 * 86_400.0 + 1.0)
        );
        assert_eq!(
            super::epoch_seconds("2026-11-30T03:26:02Z"),
            Some(1_796_009_162.0)
        );
        assert_eq!(super::epoch_seconds("yesterday"), None);
        assert_eq!(super::epoch_seconds("2026-13-01T00:00:00Z"), None);
    }
}
