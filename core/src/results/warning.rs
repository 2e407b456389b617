//! Warnings: what in a run deserves caution, typed, so that a reader can group them and act on
//! each kind, and so that a figure a warning carries (the congestion control, an RSD) is a field,
//! never read back out of a sentence. Stored tagged by `kind`; a warning written before typed
//! warnings (schema 2, a plain sentence) reads back as `Text`.

use super::PhaseId;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "Repr", into = "Repr")]
pub enum Warning {
    /// A phase whose relative standard deviation is above `run`'s threshold.
    Spread {
        phase: PhaseId,
        rsd_pct: f64,
        /// ML-DSA signing: a rejection loop runs a random number of times by design.
        rejection_loop: bool,
    },
    /// The hypervisor gave the pinned core to someone else while the phase ran.
    Steal { phase: PhaseId, steal_pct: f64 },
    /// The measuring thread waited for its core (schedstat run delay).
    RunDelay { phase: PhaseId, delay_pct: f64 },
    /// Severe (beyond 3 IQR) outliers above their threshold share.
    Outliers {
        phase: PhaseId,
        severe: usize,
        samples: usize,
    },
    /// A budget-limited phase whose timed calls overran its budget.
    BudgetOverrun {
        phase: PhaseId,
        timed_ms: f64,
        budget_ms: u64,
    },
    /// A figure's medians differ between independent process samples (`run --samples`).
    ProcessSpread { name: String, rsd_pct: f64 },
    /// A headline figure whose 95% interval stayed wider than the precision target (schema 3).
    Imprecise {
        name: String,
        half_width_pct: f64,
        target_pct: f64,
        reason: super::StopReason,
    },
    /// `run --backend` chose libraries that cannot compose these suites.
    SuitesLeftOut {
        backends: Vec<String>,
        suites: Vec<String>,
    },
    /// A stack (or backend) that was asked for but could not be measured.
    NotMeasured { what: String, reason: String },
    /// A stack that does not negotiate one of the suites' groups.
    GroupUnsupported {
        stack: String,
        version: String,
        group: String,
    },
    /// Network: namespaces a killed run left behind, removed before this one.
    LeftoverNamespaces { removed: Vec<String> },
    /// Network: segmentation offloads could not be turned off on a device.
    OffloadsOn { device: String, error: String },
    /// Network: cubic is not in this kernel; the endpoints used the kernel's default.
    NoCubic { used: String },
    /// Network: a point whose measured RTT is outside its tolerance (marked invalid).
    InvalidPoint {
        rtt_ms: f64,
        loss_pct: f64,
        measured_ms: f64,
        tolerance_ms: f64,
    },
    /// Network: the kernel dropped packets at a full NFQUEUE.
    QueueDrops {
        rtt_ms: f64,
        loss_pct: f64,
        cell: String,
        dropped: u64,
    },
    /// Network: a cell whose client or server was busy enough for compute to show in latency.
    BusyEndpoint {
        rtt_ms: f64,
        loss_pct: f64,
        cell: String,
        client_pct: f64,
        server_pct: f64,
    },
    /// Network: a thread of this host wakes this late past its timer (p50 and p90 of
    /// `Network::wake_ns`), which the endpoints pay at every flight they wait for, and the zero
    /// point, run back to back, hardly at all.
    SlowWake { p50_us: f64, p90_us: f64 },
    /// A step that times handshakes could not keep the cores out of their idle states (host::
    /// hold_off_idle), so its handshakes pay the wake-ups of idle cores: on a VM tens of µs to
    /// milliseconds at every flight.
    IdleWakeups { step: String, reason: String },
    /// Capacity: one core only, so the load generator shared the server's core.
    OneCore,
    /// Capacity: the load generator's core was the limit at these concurrencies.
    LoadLimited {
        cell: String,
        concurrency: Vec<usize>,
    },
    /// Capacity: the memory steps stopped short.
    MemoryLimited { cell: String, why: String },
    /// A warning written as a sentence (files before typed warnings).
    Text(String),
}

/// What a warning is about, for grouping: one line of advice per kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    Spread,
    RejectionLoop,
    Steal,
    RunDelay,
    Outliers,
    BudgetOverrun,
    ProcessSpread,
    Imprecise,
    Coverage,
    Network,
    Capacity,
    Other,
}

impl WarningKind {
    /// What the kind means and what to do about it, in a sentence.
    pub fn advice(self) -> &'static str {
        match self {
            WarningKind::Spread => "phases whose samples spread more than 10% (RSD): the machine was noisy or the call varies; read the median and its interval, or re-run with --samples 5",
            WarningKind::RejectionLoop => "ML-DSA signing spreads by design: its rejection loop runs a random number of times; read the median",
            WarningKind::Steal => "phases during which the hypervisor took the pinned core (CPU steal above 1%): re-run when the host is quieter",
            WarningKind::RunDelay => "phases during which another task ran on the pinned core (run delay above 1%): re-run with less else running",
            WarningKind::Outliers => "phases with more than 2% severe outliers (beyond 3 IQR): kept; the mean and p99 include them, the median barely moves",
            WarningKind::BudgetOverrun => "phases whose timed calls overran their time budget by more than 20%: the figures stand, the run took longer",
            WarningKind::ProcessSpread => "figures whose medians differ between process samples: they do not hold from run to run here; compare runs with `pqprof compare`",
            WarningKind::Imprecise => "figures whose 95% interval is wider than the precision target: the budget ran out (give `make run` a larger BUDGET) or each sample is so slow that only the minimum fitted; the interval shown is what was reached",
            WarningKind::Coverage => "what was asked for and not measured",
            WarningKind::Network => "the emulated network: setup and points to read with care",
            WarningKind::Capacity => "server capacity: steps to read with care",
            WarningKind::Other => "other warnings",
        }
    }

    /// A short heading ("noisy phases").
    pub fn title(self) -> &'static str {
        match self {
            WarningKind::Spread => "noisy phases",
            WarningKind::RejectionLoop => "ML-DSA signing (rejection loop)",
            WarningKind::Steal => "CPU steal",
            WarningKind::RunDelay => "run delay",
            WarningKind::Outliers => "severe outliers",
            WarningKind::BudgetOverrun => "budget overruns",
            WarningKind::ProcessSpread => "spread between processes",
            WarningKind::Imprecise => "wider than the target",
            WarningKind::Coverage => "not measured",
            WarningKind::Network => "network",
            WarningKind::Capacity => "capacity",
            WarningKind::Other => "other",
        }
    }
}

impl Warning {
    pub fn kind(&self) -> WarningKind {
        match self {
            Warning::Spread {
                rejection_loop: true,
                ..
            } => WarningKind::RejectionLoop,
            Warning::Spread { .. } => WarningKind::Spread,
            Warning::Steal { .. } => WarningKind::Steal,
            Warning::RunDelay { .. } => WarningKind::RunDelay,
            Warning::Outliers { .. } => WarningKind::Outliers,
            Warning::BudgetOverrun { .. } => WarningKind::BudgetOverrun,
            Warning::ProcessSpread { .. } => WarningKind::ProcessSpread,
            Warning::Imprecise { .. } => WarningKind::Imprecise,
            Warning::SuitesLeftOut { .. }
            | Warning::NotMeasured { .. }
            | Warning::GroupUnsupported { .. } => WarningKind::Coverage,
            Warning::LeftoverNamespaces { .. }
            | Warning::OffloadsOn { .. }
            | Warning::NoCubic { .. }
            | Warning::InvalidPoint { .. }
            | Warning::QueueDrops { .. }
            | Warning::BusyEndpoint { .. }
            | Warning::SlowWake { .. } => WarningKind::Network,
            Warning::IdleWakeups { .. } => WarningKind::Other,
            Warning::OneCore | Warning::LoadLimited { .. } | Warning::MemoryLimited { .. } => {
                WarningKind::Capacity
            }
            Warning::Text(_) => WarningKind::Other,
        }
    }

    /// The phase a warning is about, where it is about one.
    pub fn phase(&self) -> Option<&PhaseId> {
        match self {
            Warning::Spread { phase, .. }
            | Warning::Steal { phase, .. }
            | Warning::RunDelay { phase, .. }
            | Warning::Outliers { phase, .. }
            | Warning::BudgetOverrun { phase, .. } => Some(phase),
            _ => None,
        }
    }

    /// The typed phase warning a sentence of an older file (schema 2) states, where it is one of
    /// those `run` wrote in these words ("openssl ML-DSA-65 sig.sign: relative standard deviation
    /// 40.2%: ..."), so old runs group and weigh like new ones; `None` for any other sentence.
    pub fn from_sentence(s: &str) -> Option<Warning> {
        let (head, rest) = s.split_once(": ")?;
        let mut words = head.split(' ');
        let (backend, algorithm, operation) = (words.next()?, words.next()?, words.next()?);
        let form = match words.next() {
            None => super::Form::Handshake,
            Some("(primitive)") if words.next().is_none() => super::Form::Primitive,
            Some(_) => return None,
        };
        let phase = PhaseId::new(
            backend,
            algorithm,
            super::Operation::from_name(operation)?,
            form,
        );
        // The number a piece of the sentence starts with ("40.2% (ML-DSA ..." -> 40.2).
        let number = |t: &str| {
            let end = t
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(t.len());
            t[..end].parse::<f64>().ok()
        };
        if let Some(x) = rest.strip_prefix("relative standard deviation ") {
            return Some(Warning::Spread {
                rsd_pct: number(x)?,
                rejection_loop: rest.contains("rejection loop"),
                phase,
            });
        }
        if let Some((x, _)) = rest.split_once("% CPU steal while it ran") {
            return Some(Warning::Steal {
                phase,
                steal_pct: number(x)?,
            });
        }
        if let Some(x) = rest.strip_prefix("the measuring thread waited for its core ") {
            return Some(Warning::RunDelay {
                phase,
                delay_pct: number(x)?,
            });
        }
        if let Some((counts, _)) = rest.split_once(" samples are severe outliers") {
            let (severe, samples) = counts.split_once(" of ")?;
            return Some(Warning::Outliers {
                phase,
                severe: severe.parse().ok()?,
                samples: samples.parse().ok()?,
            });
        }
        if let Some(x) = rest.strip_prefix("its timed calls took ") {
            let (timed, x) = x.split_once(" ms against a budget of ")?;
            return Some(Warning::BudgetOverrun {
                phase,
                timed_ms: number(timed)?,
                budget_ms: x.split(' ').next()?.parse().ok()?,
            });
        }
        None
    }

    /// How much it matters within its kind, for choosing the few to show first: the figure the
    /// warning is about (an RSD, a share of steal, a count).
    pub fn weight(&self) -> f64 {
        match self {
            Warning::Spread { rsd_pct, .. } | Warning::ProcessSpread { rsd_pct, .. } => *rsd_pct,
            Warning::Imprecise {
                half_width_pct,
                target_pct,
                ..
            } => half_width_pct / target_pct.max(1e-9),
            Warning::Steal { steal_pct, .. } => *steal_pct,
            Warning::RunDelay { delay_pct, .. } => *delay_pct,
            Warning::Outliers {
                severe, samples, ..
            } => *severe as f64 * 100.0 / (*samples).max(1) as f64,
            Warning::BudgetOverrun {
                timed_ms,
                budget_ms,
                ..
            } => timed_ms / (*budget_ms).max(1) as f64,
            Warning::QueueDrops { dropped, .. } => *dropped as f64,
            Warning::BusyEndpoint {
                client_pct,
                server_pct,
                ..
            } => client_pct.max(*server_pct),
            Warning::SlowWake { p50_us, .. } => *p50_us,
            _ => 0.0,
        }
    }
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Warning::Spread { phase, rsd_pct, rejection_loop: true } => write!(f, "{phase}: relative standard deviation {rsd_pct:.1}% (ML-DSA signing varies by design: its rejection loop runs a random number of times; read the median)"),
            Warning::Spread { phase, rsd_pct, .. } => write!(f, "{phase}: relative standard deviation {rsd_pct:.1}%: the machine was noisy or the call varies; read the median and its interval, or re-run with --samples 5"),
            Warning::Steal { phase, steal_pct } => write!(f, "{phase}: {steal_pct:.1}% CPU steal while it ran: the hypervisor gave this core to someone else; re-run when the host is quieter"),
            Warning::RunDelay { phase, delay_pct } => write!(f, "{phase}: the measuring thread waited for its core {delay_pct:.1}% of the time (schedstat run delay): another task ran on the pinned core; re-run with less else running"),
            Warning::Outliers { phase, severe, samples } => write!(f, "{phase}: {severe} of {samples} samples are severe outliers (beyond 3 IQR); they are kept: the mean and p99 include them, the median barely moves"),
            Warning::BudgetOverrun { phase, timed_ms, budget_ms } => {
                let over = (timed_ms / *budget_ms as f64 - 1.0) * 100.0;
                write!(f, "{phase}: its timed calls took {timed_ms:.0} ms against a budget of {budget_ms} ms (+{over:.0}%): the warm-up underestimated the call; the figures stand, the run took longer")
            }
            Warning::ProcessSpread { name, rsd_pct } => write!(f, "{name}: medians differ by {rsd_pct:.1}% RSD between process samples: this figure does not hold from run to run here; compare runs with `pqprof compare`, not by eye"),
            Warning::Imprecise { name, half_width_pct, target_pct, reason } => write!(f, "{name}: 95% interval ±{half_width_pct:.2}% against a ±{target_pct}% target ({})", reason.describe()),
            Warning::SuitesLeftOut { backends, suites } => write!(f, "suites left out because the backends chosen ({}) cannot compose them: {}", backends.join(", "), suites.join(", ")),
            Warning::NotMeasured { what, reason } => write!(f, "{what} not measured: {reason}"),
            Warning::GroupUnsupported { stack, version, group } => write!(f, "{stack} {version} does not negotiate {group}: no {stack} row for it"),
            Warning::LeftoverNamespaces { removed } => write!(f, "removed namespaces a killed run left behind: {}", removed.join(", ")),
            Warning::OffloadsOn { device, error } => write!(f, "offloads stay on for {device}: {error}"),
            Warning::NoCubic { used } => write!(f, "cubic is not in this kernel; the endpoints use {used}"),
            Warning::InvalidPoint { rtt_ms, loss_pct, measured_ms, tolerance_ms } => write!(f, "RTT {rtt_ms} ms, loss {loss_pct}%: measured RTT {measured_ms:.3} ms is outside ±{tolerance_ms:.2} ms; the point is marked invalid"),
            Warning::QueueDrops { rtt_ms, loss_pct, cell, dropped } => write!(f, "RTT {rtt_ms} ms, loss {loss_pct}%, {cell}: the kernel dropped {dropped} packets at a full queue"),
            Warning::BusyEndpoint { rtt_ms, loss_pct, cell, client_pct, server_pct } => write!(f, "RTT {rtt_ms} ms, loss {loss_pct}%, {cell}: client {client_pct:.0}% / server {server_pct:.0}% of a core busy: compute may be part of the latency"),
            Warning::SlowWake { p50_us, p90_us } => write!(f, "a thread of this host wakes {p50_us:.0} µs late past its timer (p50; p90 {p90_us:.0} µs): the endpoints pay about that at every flight they wait for, which the zero point, run back to back, does not, so short-RTT cells read over their model by a few wake-ups (a VM whose vCPUs halt when idle)"),
            Warning::IdleWakeups { step, reason } => write!(f, "{step}: the cores could not be kept out of their idle states ({reason}), so its handshakes pay an idle core's wake-up at every flight (on a VM tens of µs to milliseconds): run as root, without PQPROF_IDLE=allow, to hold them off"),
            Warning::OneCore => write!(f, "one core only: the socket load generator shares the server's core"),
            Warning::LoadLimited { cell, concurrency } => write!(f, "{cell}: at {} in flight the load generator's core was busier than the server's, so throughput there is the generator's limit (a TLS client does more work per handshake than the server: it verifies the certificate); server CPU per handshake still holds", concurrency.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", ")),
            Warning::MemoryLimited { cell, why } => write!(f, "{cell}: {why}"),
            Warning::Text(s) => f.write_str(s),
        }
    }
}

/// Warnings of one kind: how many, what the kind means, and the few that weigh most.
#[derive(Debug, Clone, Serialize)]
pub struct WarningGroup {
    pub kind: WarningKind,
    pub title: &'static str,
    pub advice: &'static str,
    pub count: usize,
    /// The heaviest few, in words.
    pub top: Vec<String>,
    /// The rest, in words.
    pub rest: Vec<String>,
}

/// Warnings grouped by kind (in the kinds' order), each group's heaviest `top` first.
pub fn group_warnings<'a>(
    warnings: impl IntoIterator<Item = &'a Warning>,
    top: usize,
) -> Vec<WarningGroup> {
    group_warnings_by(warnings, top, |_| false)
}

/// The same, with the warnings `matters` picks (those about the phases a page's answer is made
/// of) before the rest of their kind, each part heaviest first.
pub fn group_warnings_by<'a>(
    warnings: impl IntoIterator<Item = &'a Warning>,
    top: usize,
    matters: impl Fn(&Warning) -> bool,
) -> Vec<WarningGroup> {
    let mut by_kind: std::collections::BTreeMap<WarningKind, Vec<Warning>> = Default::default();
    for w in warnings {
        // An older file's sentence groups with the kind it states.
        let w = match w {
            Warning::Text(s) => Warning::from_sentence(s).unwrap_or_else(|| w.clone()),
            _ => w.clone(),
        };
        by_kind.entry(w.kind()).or_default().push(w);
    }
    by_kind
        .into_iter()
        .map(|(kind, mut ws)| {
            ws.sort_by(|a, b| {
                matters(b)
                    .cmp(&matters(a))
                    .then(b.weight().total_cmp(&a.weight()))
            });
            let words: Vec<String> = ws.iter().map(|w| w.to_string()).collect();
            let (head, tail) = words.split_at(top.min(words.len()));
            WarningGroup {
                kind,
                title: kind.title(),
                advice: kind.advice(),
                count: ws.len(),
                top: head.to_vec(),
                rest: tail.to_vec(),
            }
        })
        .collect()
}

/// The stored form: a tagged object, or a sentence (schema 2 and the `Text` fallback).
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Repr {
    Text(String),
    Tagged(Tagged),
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Tagged {
    Spread {
        phase: PhaseId,
        rsd_pct: f64,
        #[serde(default)]
        rejection_loop: bool,
    },
    Steal {
        phase: PhaseId,
        steal_pct: f64,
    },
    RunDelay {
        phase: PhaseId,
        delay_pct: f64,
    },
    Outliers {
        phase: PhaseId,
        severe: usize,
        samples: usize,
    },
    BudgetOverrun {
        phase: PhaseId,
        timed_ms: f64,
        budget_ms: u64,
    },
    ProcessSpread {
        name: String,
        rsd_pct: f64,
    },
    Imprecise {
        name: String,
        half_width_pct: f64,
        target_pct: f64,
        reason: super::StopReason,
    },
    SuitesLeftOut {
        backends: Vec<String>,
        suites: Vec<String>,
    },
    NotMeasured {
        what: String,
        reason: String,
    },
    GroupUnsupported {
        stack: String,
        version: String,
        group: String,
    },
    LeftoverNamespaces {
        removed: Vec<String>,
    },
    OffloadsOn {
        device: String,
        error: String,
    },
    NoCubic {
        used: String,
    },
    InvalidPoint {
        rtt_ms: f64,
        loss_pct: f64,
        measured_ms: f64,
        tolerance_ms: f64,
    },
    QueueDrops {
        rtt_ms: f64,
        loss_pct: f64,
        cell: String,
        dropped: u64,
    },
    BusyEndpoint {
        rtt_ms: f64,
        loss_pct: f64,
        cell: String,
        client_pct: f64,
        server_pct: f64,
    },
    SlowWake {
        p50_us: f64,
        p90_us: f64,
    },
    IdleWakeups {
        step: String,
        reason: String,
    },
    OneCore,
    LoadLimited {
        cell: String,
        concurrency: Vec<usize>,
    },
    MemoryLimited {
        cell: String,
        why: String,
    },
}

macro_rules! both_ways {
    ($($v:ident { $($f:ident),* }),* $(,)?) => {
        impl From<Repr> for Warning {
            fn from(r: Repr) -> Warning {
                match r {
                    Repr::Text(s) => Warning::Text(s),
                    $(Repr::Tagged(Tagged::$v { $($f),* }) => Warning::$v { $($f),* },)*
                    Repr::Tagged(Tagged::OneCore) => Warning::OneCore,
                }
            }
        }

        impl From<Warning> for Repr {
            fn from(w: Warning) -> Repr {
                match w {
                    Warning::Text(s) => Repr::Text(s),
                    $(Warning::$v { $($f),* } => Repr::Tagged(Tagged::$v { $($f),* }),)*
                    Warning::OneCore => Repr::Tagged(Tagged::OneCore),
                }
            }
        }
    };
}

both_ways! {
    Spread { phase, rsd_pct, rejection_loop },
    Steal { phase, steal_pct },
    RunDelay { phase, delay_pct },
    Outliers { phase, severe, samples },
    BudgetOverrun { phase, timed_ms, budget_ms },
    ProcessSpread { name, rsd_pct },
    Imprecise { name, half_width_pct, target_pct, reason },
    SuitesLeftOut { backends, suites },
    NotMeasured { what, reason },
    GroupUnsupported { stack, version, group },
    LeftoverNamespaces { removed },
    OffloadsOn { device, error },
    NoCubic { used },
    InvalidPoint { rtt_ms, loss_pct, measured_ms, tolerance_ms },
    QueueDrops { rtt_ms, loss_pct, cell, dropped },
    BusyEndpoint { rtt_ms, loss_pct, cell, client_pct, server_pct },
    SlowWake { p50_us, p90_us },
    IdleWakeups { step, reason },
    LoadLimited { cell, concurrency },
    MemoryLimited { cell, why },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Form, Operation};

    fn sign() -> PhaseId {
        PhaseId::new("openssl", "ML-DSA-65", Operation::SigSign, Form::Handshake)
    }

    #[test]
    fn a_sentence_reads_back_as_text_and_a_typed_warning_round_trips() {
        let old: Vec<Warning> = serde_json::from_str(r#"["something was odd"]"#).unwrap();
        assert_eq!(old, vec![Warning::Text("something was odd".into())]);
        let w = Warning::Spread {
            phase: sign(),
            rsd_pct: 40.0,
            rejection_loop: true,
        };
        let json = serde_json::to_string(&w).unwrap();
        assert!(json.contains(r#""kind":"spread""#), "{json}");
        assert_eq!(serde_json::from_str::<Warning>(&json).unwrap(), w);
        assert_eq!(
            serde_json::from_str::<Warning>(r#"{"kind":"one_core"}"#).unwrap(),
            Warning::OneCore
        );
        assert_eq!(
            serde_json::to_string(&Warning::Text("x".into())).unwrap(),
            r#""x""#
        );
        let idle = Warning::IdleWakeups {
            step: "network".into(),
            reason: "/dev/cpu_dma_latency: Permission denied".into(),
        };
        let json = serde_json::to_string(&idle).unwrap();
        assert!(json.contains(r#""kind":"idle_wakeups""#), "{json}");
        assert_eq!(serde_json::from_str::<Warning>(&json).unwrap(), idle);
        assert!(idle
            .to_string()
            .starts_with("network: the cores could not be kept out"));
    }

    #[test]
    fn warnings_group_by_kind_heaviest_first() {
        let spread = |rsd: f64, phase: PhaseId| Warning::Spread {
            phase,
            rsd_pct: rsd,
            rejection_loop: false,
        };
        let x = PhaseId::new("liboqs", "X25519", Operation::DhKeygen, Form::Primitive);
        let ws = [
            spread(12.0, x.clone()),
            Warning::OneCore,
            spread(30.0, x),
            Warning::Spread {
                phase: sign(),
                rsd_pct: 45.0,
                rejection_loop: true,
            },
        ];
        let g = group_warnings(&ws, 1);
        let kinds: Vec<WarningKind> = g.iter().map(|g| g.kind).collect();
        assert_eq!(
            kinds,
            [
                WarningKind::Spread,
                WarningKind::RejectionLoop,
                WarningKind::Capacity
            ]
        );
        assert_eq!((g[0].count, g[0].top.len(), g[0].rest.len()), (2, 1, 1));
        assert!(g[0].top[0].contains("30.0%") && g[0].top[0].contains("(primitive)"));
        assert!(g[0].rest[0].contains("12.0%"));
    }

    #[test]
    fn the_warnings_that_matter_come_first_in_their_kind() {
        let x = PhaseId::new("liboqs", "X25519", Operation::DhKeygen, Form::Handshake);
        let spread = |rsd: f64, phase: PhaseId| Warning::Spread {
            phase,
            rsd_pct: rsd,
            rejection_loop: false,
        };
        let ws = [
            spread(90.0, sign()),
            spread(12.0, x.clone()),
            spread(50.0, sign()),
        ];
        let g = group_warnings_by(&ws, 1, |w| w.phase() == Some(&x));
        assert!(g[0].top[0].contains("12.0%"), "{:?}", g[0].top);
        assert!(g[0].rest[0].contains("90.0%") && g[0].rest[1].contains("50.0%"));
    }

    #[test]
    fn an_older_files_sentences_read_as_the_warnings_they_state() {
        let cases = [
            Warning::Spread {
                phase: sign(),
                rsd_pct: 40.2,
                rejection_loop: true,
            },
            Warning::Spread {
                phase: PhaseId::new("go", "P-256", Operation::DhDerive, Form::Primitive),
                rsd_pct: 165.9,
                rejection_loop: false,
            },
            Warning::Steal {
                phase: sign(),
                steal_pct: 2.5,
            },
            Warning::RunDelay {
                phase: sign(),
                delay_pct: 1.5,
            },
            Warning::Outliers {
                phase: sign(),
                severe: 170,
                samples: 1000,
            },
            Warning::BudgetOverrun {
                phase: sign(),
                timed_ms: 2600.0,
                budget_ms: 2000,
            },
        ];
        for w in cases {
            assert_eq!(
                Warning::from_sentence(&w.to_string()),
                Some(w.clone()),
                "{w}"
            );
        }
        // As schema 2 wrote one, and sentences that are not phase warnings.
        let old = "openssl AES-256-GCM aead.key: 142 of 1000 samples are severe outliers (beyond 3 IQR); they are kept: the mean and p99 include them, the median barely moves";
        assert!(matches!(
            Warning::from_sentence(old),
            Some(Warning::Outliers { severe: 142, .. })
        ));
        for s in [
            "Go go1.27.3 does not negotiate MLKEM768: no Go row for it",
            "something was odd",
            "a b c d e: relative standard deviation 3%",
        ] {
            assert_eq!(Warning::from_sentence(s), None, "{s}");
        }
        let g = group_warnings(&[Warning::Text(old.into())], 3);
        assert_eq!(g[0].kind, WarningKind::Outliers);
    }
}
