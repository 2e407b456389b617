//! The hidden `capacity-server` command: a TLS server pinned to one core, in its own process so its
//! CPU time and memory are its own. Two modes:
//! - pool (`--threads T`): T threads accept and serve connections, each closed after its echo;
//! - hold (`--hold`): one thread serves connections one after another and keeps each open, with the
//!   heap it used at its peak and after it recorded per connection.
//!
//! Control lines on stdin, one JSON answer each on stdout: `cpu`, `mem N` (after N connections
//! were served or failed), `release` (close every held connection).

use crate::alloc;
use crate::stack::{tls, Config, Identity, Served, TlsStack};
use anyhow::{anyhow, Context, Result};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

/// Per-connection memory records kept (the first connections of a run).
pub(crate) const KEPT_RECORDS: usize = 1000;

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct CpuAnswer {
    pub(crate) served: u64,
    pub(crate) failed: u64,
    pub(crate) cpu_ns: f64,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct MemAnswer {
    pub(crate) held: usize,
    pub(crate) failed: u64,
    pub(crate) heap_rust_bytes: i64,
    pub(crate) heap_c_bytes: i64,
    /// The Go peer's server (peers/go capacity.go): Go's live heap; none here.
    #[serde(default)]
    pub(crate) heap_go_bytes: i64,
    pub(crate) rss_bytes: u64,
    pub(crate) peak_bytes: Vec<i64>,
    pub(crate) retained_bytes: Vec<i64>,
}

#[derive(Default)]
struct Held {
    connections: Vec<Box<dyn Served>>,
    peak: Vec<i64>,
    retained: Vec<i64>,
}

/// Resident set of this process, bytes (/proc/self/statm, second field, in pages).
pub(crate) fn rss_bytes() -> u64 {
    let pages = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .nth(1)
                .and_then(|p| p.parse::<u64>().ok())
        })
        .unwrap_or(0);
    pages * page_bytes()
}

pub(crate) fn page_bytes() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

pub(crate) fn server_main(
    stack: &dyn TlsStack,
    group: &str,
    identity: &Path,
    threads: usize,
    hold: bool,
    core: Option<usize>,
) -> Result<()> {
    if let Some(c) = core {
        // Before any thread starts: every thread this process makes inherits the core.
        core_affinity::set_for_current(core_affinity::CoreId { id: c });
    }
    let id = Identity::read(identity)?;
    let acceptor: Arc<dyn crate::stack::Acceptor> =
        Arc::from(stack.acceptor(Config::plain(group, &id))?);
    let listener = TcpListener::bind("127.0.0.1:0").context("cannot bind a loopback port")?;
    println!("port {}", listener.local_addr()?.port());
    std::io::stdout().flush()?;
    let served: &'static AtomicU64 = Box::leak(Box::new(AtomicU64::new(0)));
    let failed: &'static AtomicU64 = Box::leak(Box::new(AtomicU64::new(0)));
    // Room for every connection a run holds, taken before the first measurement so the list's
    // growth is not counted as memory per connection.
    let held: Arc<Mutex<Held>> = Arc::new(Mutex::new(Held {
        connections: Vec::with_capacity(if hold { 20_000 } else { 0 }),
        ..Held::default()
    }));
    if hold {
        let (acceptor, held) = (acceptor.clone(), held.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else {
                    failed.fetch_add(1, Relaxed);
                    continue;
                };
                let start = alloc::reset_peak();
                match acceptor.serve_one(stream) {
                    Ok(conn) => {
                        // Another thread's allocation can land between its add and its max, or
                        // between reset_peak's read and store: the mark is at least what is live now.
                        let now = alloc::live_total();
                        let (peak, after) = (alloc::peak().max(now) - start, now - start);
                        let Ok(mut h) = held.lock() else { return };
                        if h.peak.len() < KEPT_RECORDS {
                            h.peak.push(peak);
                            h.retained.push(after);
                        }
                        h.connections.push(conn);
                        served.fetch_add(1, Relaxed);
                    }
                    Err(e) => {
                        eprintln!("capacity server: {e:#}");
                        failed.fetch_add(1, Relaxed);
                    }
                }
            }
        });
    } else {
        let listener = Arc::new(listener);
        for _ in 0..threads.max(1) {
            let (acceptor, listener) = (acceptor.clone(), listener.clone());
            std::thread::spawn(move || loop {
                let Ok((stream, _)) = listener.accept() else {
                    failed.fetch_add(1, Relaxed);
                    continue;
                };
                match acceptor.serve_one(stream) {
                    Ok(conn) => {
                        conn.close();
                        served.fetch_add(1, Relaxed);
                    }
                    Err(_) => {
                        failed.fetch_add(1, Relaxed);
                    }
                }
            });
        }
    }
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let mut words = line.split_whitespace();
        let (cmd, n) = (
            words.next().unwrap_or(""),
            words
                .next()
                .and_then(|w| w.parse::<u64>().ok())
                .unwrap_or(0),
        );
        let answer = match cmd {
            "cpu" => serde_json::to_string(&CpuAnswer {
                served: served.load(Relaxed),
                failed: failed.load(Relaxed),
                cpu_ns: alloc::process_cpu_ns(),
            })?,
            "mem" => {
                // The client knows how many it opened; the last may still be finishing here.
                let t0 = std::time::Instant::now();
                while served.load(Relaxed) + failed.load(Relaxed) < n && t0.elapsed() < tls::TIMEOUT
                {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                let h = held.lock().map_err(|_| anyhow!("poisoned"))?;
                let (rust, c) = alloc::live();
                serde_json::to_string(&MemAnswer {
                    held: h.connections.len(),
                    failed: failed.load(Relaxed),
                    heap_rust_bytes: rust,
                    heap_c_bytes: c,
                    heap_go_bytes: 0,
                    rss_bytes: rss_bytes(),
                    peak_bytes: h.peak.clone(),
                    retained_bytes: h.retained.clone(),
                })?
            }
            "release" => {
                let conns =
                    std::mem::take(&mut held.lock().map_err(|_| anyhow!("poisoned"))?.connections);
                for c in conns {
                    c.close();
                }
                "\"ok\"".to_string()
            }
            _ => "\"?\"".to_string(),
        };
        println!("{answer}");
        std::io::stdout().flush()?;
    }
    Ok(())
}
