//! An experiment, not part of a run: the in-situ key-exchange calls of rustls handshakes made in
//! memory (client and server in this pinned thread, every flight right after the other), against
//! the same calls inside loopback handshakes (the results file's instrumented scenarios) and the
//! phase loop. If a call costs more in situ on loopback than in memory, the difference is the state
//! a loopback handshake leaves the core in (sockets, wake-ups, the other side), not the call.
//! Usage: cargo run --release --example insitu_inmem [GROUP] [N]

use pqprof::insitu::{self, CallLabel};
use pqprof::stack::{rustls::Rustls, Config, Identity, TlsStack};

fn main() -> anyhow::Result<()> {
    let a: Vec<String> = std::env::args().collect();
    let group = a.get(1).map_or("X25519MLKEM768", String::as_str);
    let n: usize = a.get(2).and_then(|s| s.parse().ok()).unwrap_or(1000);
    pqprof::measure::pin();
    let id = Identity::baseline()?;
    let pair = Rustls.pair(Config {
        wrapped: true,
        ..Config::plain(group, &id)
    })?;
    pair.handshake(true)?;
    let mut per: Vec<Vec<f64>> = vec![Vec::new(); CallLabel::COUNT];
    for _ in 0..n {
        insitu::arm();
        pair.handshake(false)?;
        let r = insitu::take();
        for (l, v) in per.iter_mut().enumerate() {
            if r.calls[l] > 0 {
                v.push(r.ns[l] as f64 / f64::from(r.calls[l]));
            }
        }
    }
    println!("rustls {group}, {n} in-memory handshakes, both sides; median per call:");
    for (l, v) in per.iter().enumerate() {
        let name = CallLabel::ALL[l].name();
        if v.is_empty() || !["kem.", "dh."].iter().any(|p| name.starts_with(p)) {
            continue;
        }
        println!("  {name:12} {:8.2} us", pqprof::stats::median(v) / 1e3);
    }
    Ok(())
}
