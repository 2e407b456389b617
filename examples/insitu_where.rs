//! An experiment, not part of a run: why a key-exchange call costs more inside a loopback handshake
//! than in the phase loop. It makes rustls handshakes in memory (client and server on this pinned
//! thread, so nothing waits) in runs of three, and before each run does one of these, all in turn so
//! drift hits them alike:
//! - `none`: nothing (back to back, as consecutive in-memory handshakes);
//! - `spin`: 300 us of a busy loop that touches no crypto code or data;
//! - `sleep`: 300 us asleep (the thread blocks and the core idles, as a side between flights);
//! - `sleep+spin`: 300 us asleep, then 500 us of the busy loop before the handshake;
//! - `rtt`: four 1,200-byte round trips over loopback TCP to a thread on the other core;
//! - `loopback`: one whole rustls handshake over loopback TCP with a server thread on the other core.
//!
//! It prints the median of the in-situ key-exchange calls in the first, second and third in-memory
//! handshake after each. If the first is slow and the next ones are not, the call pays for the state
//! the interruption left (caches, predictors), not for anything in the call; if `sleep+spin` is as
//! slow as `sleep`, the cost is not a clock that ramps up after idling.
//! Usage: cargo run --release --example insitu_where [GROUP] [ROUNDS]

use pqprof::insitu::{self, CallLabel};
use pqprof::stack::{self, rustls::Rustls, Config, Identity, TlsStack};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

const MODES: [&str; 6] = ["none", "spin", "sleep", "sleep+spin", "rtt", "loopback"];
const LABELS: [&str; 4] = ["kem.keygen", "kem.decaps", "dh.keygen", "dh.derive"];
const RUN: usize = 3;

fn busy(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// A thread on `core` that echoes what it reads on each connection, in 1,200-byte pieces.
fn echo_server(core: Option<core_affinity::CoreId>) -> anyhow::Result<TcpStream> {
    let l = TcpListener::bind("127.0.0.1:0")?;
    let addr = l.local_addr()?;
    std::thread::spawn(move || {
        if let Some(c) = core {
            core_affinity::set_for_current(c);
        }
        if let Ok((mut s, _)) = l.accept() {
            let _ = s.set_nodelay(true);
            let mut b = [0u8; 1200];
            while s.read_exact(&mut b).is_ok() && s.write_all(&b).is_ok() {}
        }
    });
    let s = TcpStream::connect(addr)?;
    s.set_nodelay(true)?;
    Ok(s)
}

fn main() -> anyhow::Result<()> {
    let a: Vec<String> = std::env::args().collect();
    let group = a
        .get(1)
        .map_or("X25519MLKEM768", String::as_str)
        .to_string();
    let rounds: usize = a.get(2).and_then(|s| s.parse().ok()).unwrap_or(300);
    let core = pqprof::measure::pin();
    let other =
        core_affinity::get_core_ids().and_then(|ids| ids.into_iter().find(|c| Some(c.id) != core));
    let id = Identity::baseline()?;
    let pair = Rustls.pair(Config {
        wrapped: true,
        ..Config::plain(&group, &id)
    })?;
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let acceptor = Rustls.acceptor(Config::plain(&group, &id))?;
    std::thread::spawn(move || {
        if let Some(c) = other {
            core_affinity::set_for_current(c);
        }
        stack::tls::serve_with(acceptor, listener, &AtomicU64::new(0), None, false)
    });
    let client = Rustls.client(Config::plain(&group, &id))?;
    let mut echo = echo_server(other)?;
    pair.handshake(true)?;
    client.connect(addr, false)?;
    let idx: Vec<usize> = LABELS
        .iter()
        .map(|l| {
            CallLabel::from_name(l)
                .map(|c| c as usize)
                .ok_or_else(|| anyhow::anyhow!("no label {l}"))
        })
        .collect::<Result<_, _>>()?;
    // [mode][label][position] -> per-call times.
    let mut t = vec![vec![vec![Vec::new(); RUN]; LABELS.len()]; MODES.len()];
    for _ in 0..rounds {
        for (m, mode) in MODES.iter().enumerate() {
            match *mode {
                "spin" => busy(Duration::from_micros(300)),
                "sleep" => std::thread::sleep(Duration::from_micros(300)),
                "sleep+spin" => {
                    std::thread::sleep(Duration::from_micros(300));
                    busy(Duration::from_micros(500));
                }
                "rtt" => {
                    let mut b = [7u8; 1200];
                    for _ in 0..4 {
                        echo.write_all(&b)?;
                        echo.read_exact(&mut b)?;
                    }
                }
                "loopback" => drop(client.connect(addr, false)?),
                _ => {}
            }
            for p in 0..RUN {
                insitu::arm();
                pair.handshake(false)?;
                let r = insitu::take();
                for (per_label, &l) in t[m].iter_mut().zip(&idx) {
                    if r.calls[l] > 0 {
                        per_label[p].push(r.ns[l] as f64 / f64::from(r.calls[l]));
                    }
                }
            }
        }
    }
    println!("rustls {group}, core {core:?}: in-memory handshakes in runs of {RUN}, {rounds} runs after each; median per call, us, in the 1st / 2nd / 3rd handshake of a run");
    for (k, l) in LABELS.iter().enumerate() {
        if t[0][k][0].is_empty() {
            continue;
        }
        println!("{l}");
        let base = pqprof::stats::median(&t[0][k][0]);
        for (m, mode) in MODES.iter().enumerate() {
            let med: Vec<f64> = t[m][k]
                .iter()
                .map(|v| pqprof::stats::median(v) / 1e3)
                .collect();
            println!(
                "  after {mode:11} {:7.2} {:7.2} {:7.2}   first / none-first {:.3}",
                med[0],
                med[1],
                med[2],
                med[0] * 1e3 / base
            );
        }
    }
    Ok(())
}
