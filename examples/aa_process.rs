//! An experiment, not part of a run: how far apart two server processes of the same scenario are.
//! Starts P `handshake-server` children of one stack and group (the same identity), and makes
//! loopback connections to them from one client in blocks of B, the order of the processes turning
//! every block. Prints each process's median and, for every process against the first, the median
//! of the paired block-median differences. A process effect shows as a difference that the pairing
//! does not remove.
//! Usage: PQPROF_BIN=target/release/pqprof cargo run --release --example aa_process -- \
//!        [STACK] [GROUP] [PROCESSES] [BLOCKS] [PER_BLOCK]

use pqprof::stack::{self, child, Config, Identity};
use pqprof::stats;

fn main() -> anyhow::Result<()> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, d: &str| a.get(i).cloned().unwrap_or_else(|| d.to_string());
    let st = stack::find(&arg(0, "rustls"))?;
    let group = arg(1, "X25519");
    let procs: usize = arg(2, "4").parse()?;
    let blocks: usize = arg(3, "200").parse()?;
    let per_block: usize = arg(4, "4").parse()?;
    let id = Identity::baseline()?;
    let files = stack::identity::Files::write(&id, "aa")?;
    let client = st.client(Config::plain(&group, &id))?;
    let mut servers = Vec::new();
    for _ in 0..procs {
        let s = st.start_server(&child::Start::loopback(&group, &files, false))?;
        client.connect(s.addr, true)?;
        servers.push(s);
    }
    let mut series = vec![Vec::new(); procs];
    let mut all = vec![Vec::new(); procs];
    for b in 0..blocks + 2 {
        let mut order: Vec<usize> = (0..procs).collect();
        order.rotate_left(b % procs);
        if (b / procs) % 2 == 1 {
            order.reverse();
        }
        for p in order {
            let v: Vec<f64> = client
                .connect_many(servers[p].addr, per_block)?
                .iter()
                .map(|o| o.total_ns)
                .collect();
            if b >= 2 {
                series[p].push(stats::median(&v));
                all[p].extend(v);
            }
        }
    }
    for p in 0..procs {
        let d: Vec<f64> = series[p]
            .iter()
            .zip(&series[0])
            .map(|(x, y)| x - y)
            .collect();
        let (m, lo, hi) = stats::median_interval(&d).unwrap_or((0.0, 0.0, 0.0));
        println!(
            "process {p}: median {:.1} us; paired vs 0: {:+.1} us ({:+.1} .. {:+.1}), {:+.2}%",
            stats::median(&all[p]) / 1e3,
            m / 1e3,
            lo / 1e3,
            hi / 1e3,
            m / stats::median(&all[0]) * 100.0
        );
    }
    Ok(())
}
