//! `pqprof probe HOST[:PORT]`: any TLS 1.3 endpoint a user names, asked which key-exchange groups
//! it takes (each alone), which it prefers when offered the hybrid and X25519 with a share each,
//! whether it retries for the hybrid offered without a share, how big its ClientHello and its
//! flight are against TCP's initial window, and what the hybrid adds to the handshake's latency
//! over paired rounds. Polite: one connection at a time, at most `--rate` a second and
//! `--max-connections` in all, said before the first. The connections and their findings go to a
//! file of their own in results/probes/, which `pqprof check` recomputes.

mod connection;

mod verifier;

use anyhow::{anyhow, bail, ensure, Context, Result};
use pqprof_core::figures::probe::{self as figures, Scenario};
use pqprof_core::results::{Probe, ProbeCertificate, ProbeFile, PROBE_SCHEMA_VERSION};
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the user asked (`pqprof probe --help`).
pub(crate) struct Options {
    pub(crate) target: String,
    pub(crate) sni: Option<String>,
    pub(crate) ca: Option<PathBuf>,
    pub(crate) insecure: bool,
    pub(crate) per_second: f64,
    pub(crate) max_connections: usize,
    pub(crate) rounds: usize,
    pub(crate) timeout: Duration,
    pub(crate) out: Option<PathBuf>,
}

pub(crate) fn probe(opts: &Options) -> Result<()> {
    ensure!(
        opts.per_second > 0.0 && opts.per_second.is_finite(),
        "--rate must be a positive number of connections per second"
    );
    let (host, port) = host_and_port(&opts.target)?;
    let address = resolve(&host, port)?;
    let sni = opts.sni.clone().unwrap_or_else(|| host.clone());
    let server_name = rustls::pki_types::ServerName::try_from(sni.clone())
        .map_err(|_| anyhow!("{sni:?} is not a server name (give --sni NAME)"))?;
    let (verifier, verification) = if opts.insecure {
        (
            verifier::Verifier::insecure(),
            "not verified (--insecure)".to_string(),
        )
    } else {
        let ca = opts
            .ca
            .clone()
            .unwrap_or_else(|| PathBuf::from(verifier::SYSTEM_ROOTS));
        let v = verifier::Verifier::with_roots(&ca)
            .context("give --ca FILE with the server's root, or --insecure")?;
        (v, format!("verified against {}", ca.display()))
    };
    let verifier = Arc::new(verifier);
    let out = match &opts.out {
        Some(p) => p.clone(),
        None => default_path(&host, port),
    };
    if out.exists() {
        bail!("{} exists: a probe never overwrites one", out.display());
    }
    let rounds = figures::rounds_within(opts.max_connections, opts.rounds);
    let questions = figures::plan(0).len();
    ensure!(
        opts.max_connections >= questions,
        "--max-connections {} is under the {questions} connections that ask what the server takes",
        opts.max_connections
    );
    let planned = questions + 2 * rounds;
    eprintln!(
        "pqprof probe: {planned} TLS 1.3 handshakes with {} ({address}), one at a time, at most {} per second (about {:.0} s): {questions} ask which groups it takes, then up to {rounds} paired rounds of X25519 and X25519MLKEM768. Nothing is sent after a handshake.",
        opts.target,
        opts.per_second,
        planned as f64 / opts.per_second
    );
    let setup = |keep_server_hello| connection::Setup {
        address,
        server_name: server_name.clone(),
        verifier: &verifier,
        timeout: opts.timeout,
        keep_server_hello,
    };
    let wall = Instant::now();
    let mut pacer = Pacer::new(opts.per_second);
    let mut made: Vec<connection::Made> = Vec::new();
    for s in figures::plan(0) {
        crate::interrupt::check()?;
        let start_ms = pacer.wait();
        let m = connection::make(&s, &setup(true), start_ms);
        if let Some(why) = &m.fatal {
            bail!("{}: {why} (nothing written)", opts.target);
        }
        made.push(m);
    }
    if made.iter().all(|m| m.record.error.is_some()) {
        bail!(
            "{}: no handshake completed; the first said: {} (nothing written)",
            opts.target,
            made[0].record.error.as_deref().unwrap_or("?")
        );
    }
    // The rounds pair the groups the server took alone; a group it refused has no latency.
    let took = |g: &str| {
        made.iter().any(|m| {
            Scenario::of(&m.record) == Some(Scenario::Alone(g_static(g)))
                && m.record.negotiated.as_deref() == Some(g)
        })
    };
    let in_rounds: Vec<Scenario> = figures::plan(rounds)
        .into_iter()
        .skip(questions)
        .filter(|s| matches!(s, Scenario::Round(g, _) if took(g)))
        .collect();
    let progress_every = (in_rounds.len() / 4).max(1);
    for (i, s) in in_rounds.iter().enumerate() {
        crate::interrupt::check()?;
        let start_ms = pacer.wait();
        let m = connection::make(s, &setup(false), start_ms);
        if let Some(why) = &m.fatal {
            bail!("{}: {why} (nothing written)", opts.target);
        }
        made.push(m);
        if (i + 1) % progress_every == 0 {
            eprintln!("  {} of {} round handshakes", i + 1, in_rounds.len());
        }
    }
    let chain = made
        .iter()
        .find(|m| !m.chain.is_empty())
        .map(|m| certificates(&m.chain))
        .unwrap_or_default();
    let mss_bytes = made.iter().map(|m| m.mss).find(|&m| m > 0).unwrap_or(0);
    let mut p = Probe {
        target: opts.target.clone(),
        address: address.to_string(),
        sni,
        verification,
        date_utc: crate::host::utc_now(),
        pqprof_version: env!("CARGO_PKG_VERSION").into(),
        host: crate::host::describe(),
        wall_seconds: wall.elapsed().as_secs_f64(),
        per_second: opts.per_second,
        max_connections: opts.max_connections,
        mss_bytes,
        connections: made.into_iter().map(|m| m.record).collect(),
        chain,
        findings: Default::default(),
    };
    p.findings = figures::findings(&p);
    let problems = pqprof_core::check::probe::check(&p);
    ensure!(
        problems.is_empty(),
        "the probe's own check failed (nothing written): {}",
        problems
            .iter()
            .map(|p| p.line())
            .collect::<Vec<_>>()
            .join("; ")
    );
    let file = ProbeFile {
        probe_schema_version: PROBE_SCHEMA_VERSION,
        probe: p,
    };
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot make {}", dir.display()))?;
    }
    crate::results::write_new(&out, &serde_json::to_vec_pretty(&file)?)?;
    println!("{}", pqprof_core::tables::probe::terminal(&file.probe));
    eprintln!("wrote {} (pqprof check {0} recomputes it)", out.display());
    Ok(())
}

/// The plan's name for a group (its scenarios hold `&'static str`).
fn g_static(g: &str) -> &'static str {
    figures::group(g).map_or("", |g| g.name)
}

/// Starts connections no closer than 1/rate apart: each waits for its slot, counted from the
/// first, and says when it started (ms after the first).
struct Pacer {
    first: Option<Instant>,
    gap: Duration,
    next: Duration,
}

impl Pacer {
    fn new(per_second: f64) -> Pacer {
        Pacer {
            first: None,
            gap: Duration::from_secs_f64(1.0 / per_second),
            next: Duration::ZERO,
        }
    }

    fn wait(&mut self) -> f64 {
        let first = *self.first.get_or_insert_with(Instant::now);
        // A connection that took longer than its gap moves every later slot: never two in a burst.
        let now = first.elapsed();
        if now < self.next {
            std::thread::sleep(self.next - now);
        }
        let started = first.elapsed();
        self.next = started + self.gap;
        started.as_secs_f64() * 1e3
    }
}

/// "HOST", "HOST:PORT", "[V6]:PORT" or "V6": the host and the port (443 by default).
fn host_and_port(target: &str) -> Result<(String, u16)> {
    if target.contains("://") {
        bail!(
            "{target}: give HOST[:PORT]; a probe speaks TLS 1.3 over TCP (QUIC and SSH are not probed yet)"
        );
    }
    let bad_port = |p: &str| anyhow!("{target}: {p:?} is not a port (1-65535)");
    let (host, port) = if let Some(rest) = target.strip_prefix('[') {
        let (h, after) = rest
            .split_once(']')
            .ok_or_else(|| anyhow!("{target}: an IPv6 address opens with [ and closes with ]"))?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().map_err(|_| bad_port(p))?,
            None if after.is_empty() => 443,
            None => bail!("{target}: after ] comes :PORT or nothing"),
        };
        (h.to_string(), port)
    } else if target.matches(':').count() > 1 {
        (target.to_string(), 443)
    } else if let Some((h, p)) = target.split_once(':') {
        (h.to_string(), p.parse().map_err(|_| bad_port(p))?)
    } else {
        (target.to_string(), 443)
    };
    ensure!(!host.is_empty(), "{target}: no host");
    ensure!(port != 0, "{target}: port 0 is not a port");
    Ok((host, port))
}

fn resolve(host: &str, port: u16) -> Result<SocketAddr> {
    (host, port)
        .to_socket_addrs()
        .map_err(|e| anyhow!("cannot resolve {host}: {e}"))?
        .next()
        .ok_or_else(|| anyhow!("cannot resolve {host}: no address"))
}

/// results/probes/<host>-<port>-<UTC time>.json
fn default_path(host: &str, port: u16) -> PathBuf {
    let slug: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    Path::new("results")
        .join("probes")
        .join(format!("{slug}-{port}-{}.json", crate::host::utc_now()))
}

fn certificates(chain: &[Vec<u8>]) -> Vec<ProbeCertificate> {
    chain
        .iter()
        .map(|der| {
            let (key, signature) = pqprof_core::parse::x509::algorithms(der)
                .unwrap_or_else(|| ("unreadable".into(), "unreadable".into()));
            ProbeCertificate {
                bytes: der.len() as u64,
                key,
                signature,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_is_a_host_and_a_port() {
        let ok = |t: &str| host_and_port(t).unwrap();
        assert_eq!(ok("example.org"), ("example.org".into(), 443));
        assert_eq!(ok("example.org:8443"), ("example.org".into(), 8443));
        assert_eq!(ok("[::1]:4433"), ("::1".into(), 4433));
        assert_eq!(ok("::1"), ("::1".into(), 443));
        let err = |t: &str| host_and_port(t).unwrap_err().to_string();
        assert!(err("example.org:https").contains("\"https\" is not a port"));
        assert!(
            err("example.org:0").contains("is not a port")
                || err("example.org:0").contains("port 0")
        );
        assert!(err("https://example.org").contains("give HOST[:PORT]"));
        assert!(err(":443").contains("no host"));
    }

    #[test]
    fn the_pacer_never_starts_two_closer_than_its_gap() {
        let mut p = Pacer::new(200.0);
        let starts: Vec<f64> = (0..5).map(|_| p.wait()).collect();
        for w in starts.windows(2) {
            assert!(w[1] - w[0] >= 5.0 - 1e-9, "{starts:?}");
        }
    }
}
