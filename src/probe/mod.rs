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

/// The slowest and fastest rates a probe takes: one connection in 100 s, 1,000 a second.
const RATES: (f64, f64) = (0.01, 1000.0);

/// At most this many connections (and rounds) in one probe: 10 hours at the default rate.
const MOST_CONNECTIONS: usize = 200_000;

/// Consecutive failed rounds after which a probe stops its rounds and writes what it has: the
/// server went away, or began refusing, and asking on would only be a load.
const FAILED_ROUNDS_STOP: usize = 3;

pub(crate) fn probe(opts: &Options) -> Result<()> {
    ensure!(
        (RATES.0..=RATES.1).contains(&opts.per_second),
        "--rate must be between {} and {} connections per second",
        RATES.0,
        RATES.1
    );
    ensure!(
        opts.max_connections <= MOST_CONNECTIONS,
        "--max-connections is at most {MOST_CONNECTIONS}"
    );
    let questions = figures::plan(0).len();
    ensure!(
        opts.max_connections >= questions,
        "--max-connections {} is under the {questions} connections that ask what the server takes",
        opts.max_connections
    );
    let (host, port) = host_and_port(&opts.target)?;
    let out = out_path(opts.out.as_deref(), &host, port)?;
    let addresses = resolve(&host, port)?;
    let sni = opts.sni.clone().unwrap_or_else(|| host.clone());
    let server_name = rustls::pki_types::ServerName::try_from(sni.clone())
        .map_err(|_| anyhow!("{sni:?} is not a server name (give --sni NAME)"))?;
    let (verifier, verification) = verification(opts)?;
    let verifier = Arc::new(verifier);
    let rounds = figures::rounds_within(opts.max_connections, opts.rounds);
    let planned = questions + 2 * rounds;
    eprintln!(
        "pqprof probe: {planned} TLS 1.3 handshakes with {} ({}), one at a time, at most {} per second (about {:.0} s): {questions} ask which groups it takes, then up to {rounds} paired rounds of X25519 and X25519MLKEM768. Nothing is sent after a handshake.",
        opts.target,
        addresses[0],
        opts.per_second,
        planned as f64 / opts.per_second
    );
    let mut asking = Asking {
        setup: connection::Setup {
            addresses: &addresses,
            server_name,
            verifier: &verifier,
            timeout: opts.timeout,
            keep_server_hello: true,
        },
        pacer: Pacer::new(opts.per_second),
        made: Vec::new(),
        answered: None,
    };
    let wall = Instant::now();
    asking.questions(&opts.target)?;
    asking.rounds(rounds)?;
    let made = asking.made;
    let address = asking.answered.unwrap_or(addresses[0]);
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
        mss_bytes: made.iter().map(|m| m.mss).find(|&m| m > 0).unwrap_or(0),
        chain: made
            .iter()
            .find(|m| !m.chain.is_empty())
            .map(|m| certificates(&m.chain))
            .unwrap_or_default(),
        connections: made.into_iter().map(|m| m.record).collect(),
        findings: Default::default(),
    };
    p.findings = figures::findings(&p);
    write(&out, p)
}

/// The connections of one probe so far, and how the next is made.
struct Asking<'a> {
    setup: connection::Setup<'a>,
    pacer: Pacer,
    made: Vec<connection::Made>,
    /// The address that answered first: every later connection goes there.
    answered: Option<SocketAddr>,
}

impl Asking<'_> {
    fn one(&mut self, s: &Scenario) -> &connection::Made {
        let start_ms = self.pacer.wait();
        let answered: Vec<SocketAddr> = self.answered.into_iter().collect();
        let setup = connection::Setup {
            addresses: if answered.is_empty() {
                self.setup.addresses
            } else {
                &answered
            },
            server_name: self.setup.server_name.clone(),
            verifier: self.setup.verifier,
            timeout: self.setup.timeout,
            keep_server_hello: self.setup.keep_server_hello,
        };
        let m = connection::make(s, &setup, start_ms);
        self.answered = self.answered.or(m.address);
        self.made.push(m);
        &self.made[self.made.len() - 1]
    }

    /// The questions: every group alone, then the two of preference. A peer that is no TLS 1.3
    /// server, or cannot be reached, ends the probe here, with nothing written.
    fn questions(&mut self, target: &str) -> Result<()> {
        for s in figures::plan(0) {
            crate::interrupt::check()?;
            if let Some(why) = &self.one(&s).fatal {
                bail!("{target}: {why} (nothing written)");
            }
        }
        if self.made.iter().all(|m| m.record.error.is_some()) {
            bail!(
                "{target}: no handshake completed; the first said: {} (nothing written)",
                self.made[0].record.error.as_deref().unwrap_or("?")
            );
        }
        Ok(())
    }

    /// The paired rounds of the groups the server took alone; each failure is its round's, and
    /// `FAILED_ROUNDS_STOP` in a row end the rounds (what was measured is kept).
    fn rounds(&mut self, rounds: usize) -> Result<()> {
        let questions = self.made.len();
        self.setup.keep_server_hello = false;
        let taken = taken_alone(&self.made);
        let in_rounds: Vec<Scenario> = figures::plan(rounds)
            .into_iter()
            .skip(questions)
            .filter(|s| matches!(s, Scenario::Round(g, _) if taken.contains(g)))
            .collect();
        let progress_every = (in_rounds.len() / 4).max(1);
        let mut failed_in_a_row = 0;
        for (i, s) in in_rounds.iter().enumerate() {
            crate::interrupt::check()?;
            let failed = self.one(s).record.error.clone();
            match failed {
                Some(why) => {
                    failed_in_a_row += 1;
                    if failed_in_a_row >= FAILED_ROUNDS_STOP {
                        eprintln!(
                            "  {FAILED_ROUNDS_STOP} round handshakes failed in a row, the last: {why}; the rounds stop here"
                        );
                        break;
                    }
                }
                None => failed_in_a_row = 0,
            }
            if (i + 1) % progress_every == 0 {
                eprintln!("  {} of {} round handshakes", i + 1, in_rounds.len());
            }
        }
        Ok(())
    }
}

/// The groups the server took when each was offered alone.
fn taken_alone(made: &[connection::Made]) -> Vec<&'static str> {
    figures::GROUPS
        .iter()
        .map(|g| g.name)
        .filter(|&g| {
            made.iter().any(|m| {
                Scenario::of(&m.record) == Some(Scenario::Alone(g))
                    && m.record.error.is_none()
                    && m.record.negotiated.as_deref() == Some(g)
            })
        })
        .collect()
}

/// How the chain is checked, and how the report says so.
fn verification(opts: &Options) -> Result<(verifier::Verifier, String)> {
    if opts.insecure {
        return Ok((
            verifier::Verifier::insecure(),
            "not verified (--insecure)".to_string(),
        ));
    }
    let ca = opts
        .ca
        .clone()
        .unwrap_or_else(|| PathBuf::from(verifier::SYSTEM_ROOTS));
    let v = verifier::Verifier::with_roots(&ca)
        .context("give --ca FILE with the server's root, or --insecure")?;
    Ok((v, format!("verified against {}", ca.display())))
}

/// The probe's file: the one asked for or a new one in results/probes/, which must not exist and
/// whose folder must take a file, checked before the first connection (a server's time is not
/// spent on a probe that cannot be written).
fn out_path(asked: Option<&Path>, host: &str, port: u16) -> Result<PathBuf> {
    let out = asked.map_or_else(|| default_path(host, port), Path::to_path_buf);
    ensure!(
        !out.exists(),
        "{} exists: a probe never overwrites one (give --out another file)",
        out.display()
    );
    let dir = out
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("cannot make {}", dir.display()))?;
    crate::results::check_writable(dir)?;
    Ok(out)
}

/// Checks the probe as `pqprof check` will, then writes it whole or not at all.
fn write(out: &Path, p: Probe) -> Result<()> {
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
    crate::results::write_new(out, &serde_json::to_vec_pretty(&file)?)?;
    println!("{}", pqprof_core::tables::probe::terminal(&file.probe));
    eprintln!("wrote {} (pqprof check {0} recomputes it)", out.display());
    Ok(())
}

/// Starts connections no closer than 1/rate apart: each waits for its slot, counted from the
/// first, and says when it started (ms after the first).
struct Pacer {
    first: Option<Instant>,
    slots: Slots,
}

impl Pacer {
    fn new(per_second: f64) -> Pacer {
        Pacer {
            first: None,
            slots: Slots::new(per_second),
        }
    }

    fn wait(&mut self) -> f64 {
        let first = *self.first.get_or_insert_with(Instant::now);
        std::thread::sleep(self.slots.wait(first.elapsed()));
        let started = first.elapsed();
        self.slots.started(started);
        started.as_secs_f64() * 1e3
    }
}

/// The pacing itself, on times since the first connection: how long to wait before the next, and
/// the next slot once one has started. A connection that took longer than its gap moves every
/// later slot: never two in a burst.
struct Slots {
    gap: Duration,
    next: Duration,
}

impl Slots {
    fn new(per_second: f64) -> Slots {
        Slots {
            gap: Duration::from_secs_f64(1.0 / per_second),
            next: Duration::ZERO,
        }
    }

    fn wait(&self, now: Duration) -> Duration {
        self.next.saturating_sub(now)
    }

    fn started(&mut self, at: Duration) {
        self.next = at + self.gap;
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

/// Every address of `host`, in the resolver's order.
fn resolve(host: &str, port: u16) -> Result<Vec<SocketAddr>> {
    let all: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|e| anyhow!("cannot resolve {host}: {e}"))?
        .collect();
    ensure!(!all.is_empty(), "cannot resolve {host}: no address");
    Ok(all)
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
        assert_eq!(ok("[::1]"), ("::1".into(), 443));
        // An IPv6 address without brackets is the address alone, on 443.
        assert_eq!(ok("::1"), ("::1".into(), 443));
        let err = |t: &str| host_and_port(t).unwrap_err().to_string();
        assert!(err("example.org:https").contains("\"https\" is not a port"));
        assert!(err("example.org:0").contains("port 0 is not a port"));
        assert!(err("example.org:").contains("\"\" is not a port"));
        assert!(err("https://example.org").contains("give HOST[:PORT]"));
        assert!(err(":443").contains("no host"));
        assert!(err("[::1").contains("closes with ]"));
        assert!(err("[::1]443").contains("after ] comes :PORT"));
    }

    #[test]
    fn slots_are_a_gap_apart_and_a_late_start_moves_the_next() {
        let ms = Duration::from_millis;
        let mut s = Slots::new(5.0);
        // The first goes at once; the next waits for its slot, 200 ms after the first started.
        assert_eq!(s.wait(ms(0)), ms(0));
        s.started(ms(0));
        assert_eq!(s.wait(ms(30)), ms(170));
        s.started(ms(200));
        // A connection that took 500 ms: the next goes at once, the one after 200 ms later.
        assert_eq!(s.wait(ms(700)), ms(0));
        s.started(ms(700));
        assert_eq!(s.wait(ms(701)), ms(199));
    }
}
