//! An experiment, not part of a run: loopback TLS connections (rustls) against server threads of
//! this process, with the plain provider, the timing provider unarmed and the timing provider armed
//! (both sides), in blocks of 16 whose order turns. Prints, per variant, the wall time and the
//! client thread's CPU per connection (getrusage: user and system, and minor page faults) and the
//! paired difference of block medians over plain (mean and 95% half-width), so the timers' cost on
//! loopback can be placed. With `one plain|wrapped N` it runs only that variant, for a per-thread
//! instruction profile (`valgrind --tool=callgrind --separate-threads=yes`).
//! Usage: cargo run --release --example loop_profile [GROUP] [N | one VARIANT N]

use pqprof::stack::{self, Config, Identity, TlsStack};
use pqprof::stats;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::AtomicU64;

fn server(
    group: &str,
    id: &Identity,
    wrapped: bool,
    armed: bool,
    room: usize,
) -> anyhow::Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let acceptor = stack::rustls::Rustls.acceptor(Config {
        wrapped,
        ..Config::plain(group, id)
    })?;
    // Room made up front, as `pqprof handshake`'s servers do: a growing vector costs handshakes.
    let sink = pqprof::insitu::sink(if armed { room } else { 0 });
    std::thread::spawn(move || {
        stack::tls::serve_with(
            acceptor,
            listener,
            &AtomicU64::new(0),
            armed.then_some(&sink),
            false,
        )
    });
    Ok(addr)
}

/// (user, system) CPU of this thread in microseconds, and its minor faults.
fn usage() -> (f64, f64, i64) {
    // SAFETY: an all-zero rusage is valid, and getrusage only writes it.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable rusage for this call.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
    let us = |t: libc::timeval| t.tv_sec as f64 * 1e6 + t.tv_usec as f64;
    (us(u.ru_utime), us(u.ru_stime), u.ru_minflt)
}

fn main() -> anyhow::Result<()> {
    let a: Vec<String> = std::env::args().collect();
    let group = a.get(1).map_or("X25519", String::as_str).to_string();
    let id = Identity::baseline()?;
    let rustls = stack::rustls::Rustls;
    let clients = [
        rustls.client(Config::plain(&group, &id))?,
        rustls.client(Config {
            wrapped: true,
            ..Config::plain(&group, &id)
        })?,
        rustls.client(Config::timed(&group, &id))?,
    ];
    if a.get(2).is_some_and(|s| s == "one") {
        let v = usize::from(a.get(3).is_some_and(|s| s == "wrapped"));
        let addr = server(&group, &id, v == 1, false, 0)?;
        let n: usize = a.get(4).and_then(|s| s.parse().ok()).unwrap_or(100);
        for _ in 0..n {
            clients[v].connect(addr, false)?;
        }
        return Ok(());
    }
    let n: usize = a.get(2).and_then(|s| s.parse().ok()).unwrap_or(3000);
    let addrs = [
        server(&group, &id, false, false, 0)?,
        server(&group, &id, true, false, 0)?,
        server(&group, &id, true, true, n + 1000)?,
    ];
    let mut sum = [(0.0, 0.0, 0i64, 0.0); 3];
    let mut medians = [Vec::new(), Vec::new(), Vec::new()];
    for b in 0..n / 16 {
        for v in pqprof::handshake::block_order(b, clients.len()) {
            let u0 = usage();
            let mut wall = 0.0;
            let mut block = Vec::new();
            for _ in 0..16 {
                let t = clients[v].connect(addrs[v], false)?.total_ns;
                wall += t;
                block.push(t);
            }
            medians[v].push(stats::median(&block));
            let u1 = usage();
            sum[v].0 += u1.0 - u0.0;
            sum[v].1 += u1.1 - u0.1;
            sum[v].2 += u1.2 - u0.2;
            sum[v].3 += wall / 1e3;
        }
    }
    let per = (n / 16 * 16) as f64;
    for (v, name) in ["plain", "wrapped", "armed"].iter().enumerate() {
        let d: Vec<f64> = medians[v]
            .iter()
            .zip(&medians[0])
            .map(|(a, b)| a - b)
            .collect();
        let (m, half) = stats::mean_half95(&d).unwrap_or((0.0, 0.0));
        println!(
            "{group} {name}: wall {:.1} us, client CPU {:.1} us (user {:.1}, system {:.1}), minor faults {:.2} per connection; block medians over plain {:+.2} us +- {:.2}",
            sum[v].3 / per,
            (sum[v].0 + sum[v].1) / per,
            sum[v].0 / per,
            sum[v].1 / per,
            sum[v].2 as f64 / per,
            m / 1e3,
            half / 1e3
        );
    }
    Ok(())
}
