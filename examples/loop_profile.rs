//! An experiment, not part of a run: N loopback TLS connections (rustls) against a server thread of
//! this process, plain provider or timing provider unarmed, for a per-thread instruction profile
//! (`valgrind --tool=callgrind --separate-threads=yes`). Usage: loop_profile GROUP plain|wrapped N

use pqprof::handshake::tls;
use pqprof::results::RealStack;
use std::net::TcpListener;
use std::sync::atomic::AtomicU64;

fn main() -> anyhow::Result<()> {
    let a: Vec<String> = std::env::args().collect();
    let group = a.get(1).map_or("X25519", String::as_str).to_string();
    let wrapped = a.get(2).is_some_and(|s| s == "wrapped");
    let n: usize = a.get(3).and_then(|s| s.parse().ok()).unwrap_or(100);
    let id = tls::identity()?;
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let acceptor = tls::acceptor(RealStack::Rustls, &group, &id, wrapped)?;
    std::thread::spawn(move || {
        let served = AtomicU64::new(0);
        tls::serve_with(acceptor, listener, &served, None, false)
    });
    let client = if wrapped { tls::Client::wrapped_unarmed(RealStack::Rustls, &group, &id)? } else { tls::Client::new(RealStack::Rustls, &group, &id, false)? };
    let mut cpu = 0.0;
    for _ in 0..n {
        cpu += client.connect(addr, false)?.cpu_ns;
    }
    println!("{n} connections, client CPU {:.1} us each", cpu / n as f64 / 1e3);
    Ok(())
}
