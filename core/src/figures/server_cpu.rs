//! A server's own CPU per handshake, from what its processes spent in each sample of a real
//! handshake scenario (`Scenario::server_cpu_samples_ns`, read after every round): the mean over
//! the samples with its t-interval, the handshakes one core of that server serves a second, and
//! the paired difference between two scenarios over the rounds both ran in (the hybrid against its
//! classical twin on the same server). A sample is a round of connections made in turn with the
//! other scenarios, so a slow stretch of the shared host moves a sample, and the interval over the
//! samples holds it; two scenarios' samples of one round share that stretch, and their difference
//! cancels it.

use crate::results::Scenario;
use crate::stats;

/// A scenario's server CPU per handshake.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerCpu {
    /// The mean over the samples of each sample's CPU per connection.
    pub per_handshake_ns: f64,
    /// The half-width of its 95% t-interval over the samples (`None` with one sample).
    pub half95_ns: Option<f64>,
    pub samples: usize,
}

impl ServerCpu {
    /// Handshakes one core of the server completes a second at this CPU per handshake, and the
    /// interval's ends turned the same way (the lower end from the higher CPU).
    pub fn per_core_second(&self) -> (f64, Option<(f64, f64)>) {
        let rate = |ns: f64| 1e9 / ns;
        let interval = self
            .half95_ns
            .filter(|h| *h < self.per_handshake_ns)
            .map(|h| {
                (
                    rate(self.per_handshake_ns + h),
                    rate(self.per_handshake_ns - h),
                )
            });
        (rate(self.per_handshake_ns), interval)
    }
}

/// Each sample's round and its server CPU per connection, or `None` where the scenario stores no
/// per-sample CPU (files before 2026-12-07, a server that could not say) or it does not line up
/// with the samples.
fn per_sample(s: &Scenario) -> Option<Vec<(usize, f64)>> {
    let cpu = &s.server_cpu_samples_ns;
    if cpu.is_empty() || cpu.len() != s.sample_sizes.len() || s.sample_sizes.contains(&0) {
        return None;
    }
    let round = |k: usize| {
        if s.sample_rounds.len() == cpu.len() {
            s.sample_rounds[k]
        } else {
            k
        }
    };
    Some(
        cpu.iter()
            .zip(&s.sample_sizes)
            .enumerate()
            .map(|(k, (&c, &n))| (round(k), c as f64 / n as f64))
            .collect(),
    )
}

/// The scenario's server CPU per handshake over its samples.
pub fn of(s: &Scenario) -> Option<ServerCpu> {
    let xs: Vec<f64> = per_sample(s)?.into_iter().map(|(_, x)| x).collect();
    Some(ServerCpu {
        per_handshake_ns: stats::mean(&xs),
        half95_ns: stats::mean_half95(&xs).map(|(_, h)| h),
        samples: xs.len(),
    })
}

/// What scenario `s` costs its server beside scenario `b`, over the rounds both ran in.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuChange {
    /// The mean of the rounds' differences in CPU per handshake, `s` less `b`.
    pub delta_ns: f64,
    pub delta_half95_ns: Option<f64>,
    /// The handshakes a core serves with `s` for each it serves with `b` (`b`'s CPU over `s`'s):
    /// the geometric mean of the rounds' ratios, and its 95% t-interval on the log scale.
    pub capacity_ratio: f64,
    pub capacity_interval: Option<(f64, f64)>,
    /// The rounds both ran in.
    pub pairs: usize,
}

/// `s` against `b` on the same server, paired by round; `None` without a round in common, or
/// where only one of them records its rounds (positions are rounds only where neither does).
pub fn change(s: &Scenario, b: &Scenario) -> Option<CpuChange> {
    let rounds = |x: &Scenario| x.sample_rounds.len() == x.sample_sizes.len();
    if rounds(s) != rounds(b) {
        return None;
    }
    let (xs, ys) = (per_sample(s)?, per_sample(b)?);
    let pairs: Vec<(f64, f64)> = xs
        .iter()
        .filter_map(|&(r, x)| Some((x, ys.iter().find(|(q, _)| *q == r)?.1)))
        .collect();
    if pairs.is_empty() || pairs.iter().any(|&(x, y)| x <= 0.0 || y <= 0.0) {
        return None;
    }
    let deltas: Vec<f64> = pairs.iter().map(|(x, y)| x - y).collect();
    let logs: Vec<f64> = pairs.iter().map(|(x, y)| (y / x).ln()).collect();
    Some(CpuChange {
        delta_ns: stats::mean(&deltas),
        delta_half95_ns: stats::mean_half95(&deltas).map(|(_, h)| h),
        capacity_ratio: stats::mean(&logs).exp(),
        capacity_interval: stats::mean_half95(&logs).map(|(m, h)| ((m - h).exp(), (m + h).exp())),
        pairs: pairs.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(cpu: &[u64], sizes: &[usize], rounds: &[usize]) -> Scenario {
        let mut s = Scenario::bare("nginx", "X25519");
        s.server_cpu_samples_ns = cpu.to_vec();
        s.sample_sizes = sizes.to_vec();
        s.sample_rounds = rounds.to_vec();
        s
    }

    #[test]
    fn cpu_per_handshake_is_the_mean_of_the_samples_with_a_t_interval() {
        // 100, 200 and 300 ns over 1, 2 and 3 connections: 100 ns a connection in each.
        let flat = of(&scenario(&[100, 200, 300], &[1, 2, 3], &[0, 1, 2])).unwrap();
        assert_eq!((flat.per_handshake_ns, flat.half95_ns), (100.0, Some(0.0)));
        // 1,000, 2,000, 3,000 ns over 10 each: 100, 200, 300; mean 200, sd 100, t(2) 4.303:
        // half = 4.303 x 100 / sqrt(3) = 248.434.
        let c = of(&scenario(&[1000, 2000, 3000], &[10, 10, 10], &[0, 1, 2])).unwrap();
        assert_eq!(c.per_handshake_ns, 200.0);
        assert!((c.half95_ns.unwrap() - 248.434).abs() < 1e-3, "{c:?}");
        assert_eq!(c.samples, 3);
        // A core at 200 ns a handshake: 5 million a second; the interval's ends turned around
        // (448.434 ns: 2.230 million; below zero at the other end: no interval).
        let (rate, interval) = c.per_core_second();
        assert_eq!(rate, 5e6);
        assert_eq!(interval, None);
        let narrow = ServerCpu {
            half95_ns: Some(50.0),
            ..c
        };
        assert_eq!(narrow.per_core_second().1, Some((1e9 / 250.0, 1e9 / 150.0)));
    }

    #[test]
    fn nothing_where_the_samples_do_not_line_up() {
        assert_eq!(of(&scenario(&[], &[10], &[0])), None);
        assert_eq!(of(&scenario(&[5, 6], &[10], &[0])), None);
        assert_eq!(of(&scenario(&[5], &[0], &[0])), None);
        // One sample: a figure, no interval.
        let one = of(&scenario(&[500], &[5], &[0])).unwrap();
        assert_eq!((one.per_handshake_ns, one.half95_ns), (100.0, None));
    }

    #[test]
    fn a_change_pairs_the_rounds_both_ran_in() {
        // s per connection: rounds 0, 1, 2 at 300, 330, 360; b: rounds 1, 2, 3 at 220, 240, 999.
        let s = scenario(&[3000, 3300, 3600], &[10, 10, 10], &[0, 1, 2]);
        let b = scenario(&[2200, 2400, 9990], &[10, 10, 10], &[1, 2, 3]);
        let c = change(&s, &b).unwrap();
        // Rounds 1 and 2: differences 110 and 120, mean 115, sd 7.0711, t(1) 12.706:
        // half = 12.706 x 7.0711 / sqrt(2) = 63.53.
        assert_eq!(c.pairs, 2);
        assert_eq!(c.delta_ns, 115.0);
        assert!((c.delta_half95_ns.unwrap() - 63.53).abs() < 1e-2, "{c:?}");
        // Ratios 220/330 and 240/360: both 2/3, so the capacity ratio is 2/3 with no spread.
        assert!((c.capacity_ratio - 2.0 / 3.0).abs() < 1e-12);
        let (lo, hi) = c.capacity_interval.unwrap();
        assert!((lo - 2.0 / 3.0).abs() < 1e-12 && (hi - 2.0 / 3.0).abs() < 1e-12);
        // No round in common: no change.
        let later = scenario(&[100], &[1], &[7]);
        assert_eq!(change(&s, &later), None);
    }
}
