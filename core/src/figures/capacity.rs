//! Capacity figures a producer stores and `check` recomputes.

use crate::results::{MemoryStep, PerConnection, Results, TrackKind};
use crate::stats;

/// 1e9 / mean, and its interval from the t-interval of the mean.
pub fn rate_per_s(samples_ns: &[u64]) -> Option<(f64, Option<(f64, f64)>)> {
    let xs: Vec<f64> = samples_ns.iter().map(|&x| x as f64).collect();
    let xs = stats::Sample::new(&xs).ok()?;
    let ci = xs
        .mean_half95()
        .map(|(m, half)| (1e9 / (m + half), 1e9 / (m - half).max(f64::MIN_POSITIVE)));
    Some((1e9 / xs.mean(), ci))
}

/// Server side of one full-handshake suite minus another's (`auth::full_suite` names them), both
/// composed from the phases of the library the real stack calls.
pub fn composed_server_delta(
    results: &Results,
    composed_stack: &str,
    full: &str,
    baseline_full: &str,
) -> Option<f64> {
    let find = |name: &str| {
        results
            .suites
            .iter()
            .find(|s| s.kind == TrackKind::Full && s.stack == composed_stack && s.name == name)
    };
    let a = crate::compose::server_side_median_ns(find(full)?, &results.phases)?;
    let b = crate::compose::server_side_median_ns(find(baseline_full)?, &results.phases)?;
    Some(a - b)
}

/// Memory per held connection: the growth from the first memory step (no connection) to the last,
/// over the connections the last holds; kernel TCP memory in pages of `page_bytes`.
pub fn per_connection(first: &MemoryStep, last: &MemoryStep, page_bytes: u64) -> PerConnection {
    let k = last.connections.max(1) as f64;
    let heap_rust = (last.heap_rust_bytes - first.heap_rust_bytes) as f64 / k;
    let heap_c = (last.heap_c_bytes - first.heap_c_bytes) as f64 / k;
    let heap_go = (last.heap_go_bytes - first.heap_go_bytes) as f64 / k;
    let grew = |a: u64, b: u64| (b as f64 - a as f64) / k;
    PerConnection {
        connections: last.connections,
        heap_bytes: heap_rust + heap_c + heap_go,
        heap_rust_bytes: heap_rust,
        heap_c_bytes: heap_c,
        heap_go_bytes: heap_go,
        rss_bytes: grew(first.rss_bytes, last.rss_bytes),
        kernel_bytes: grew(first.kernel_tcp_pages, last.kernel_tcp_pages) * page_bytes as f64,
        kernel_slab_bytes: grew(first.kernel_slab_bytes, last.kernel_slab_bytes),
        page_bytes,
    }
}
