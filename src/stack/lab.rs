//! The servers of servers/ (nginx, HAProxy, a user's own) as stacks: each server file becomes one
//! stack, its server the program the file names, run in the lab root (`crate::lab`), and its
//! client pqprof's OpenSSL client, which ends each connection with an HTTP request in place of the
//! echo (the servers answer HTTP). The handshake step then measures them as it measures the
//! library stacks, and their rows share the scenario identity, the evidence and `check`.

use super::{Availability, Config, TlsStack};
use crate::results::Mode;
use anyhow::{anyhow, bail, Context, Result};
use pqprof_core::lab::{Server, ServerKind};
use std::io::{BufRead, Write};
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::OnceLock;

pub(crate) struct LabServer {
    server: Server,
    name: &'static str,
    /// What `availability` found, once: the version, or why the server cannot run here.
    found: OnceLock<std::result::Result<String, String>>,
}

/// A stack for every server file of `crate::lab::servers_dir()`; a file that does not load is left
/// out with its one-line reason on standard error.
pub(crate) fn stacks() -> Vec<&'static dyn TlsStack> {
    let (servers, errors) = pqprof_core::lab::load_all(&crate::lab::servers_dir());
    for e in errors {
        eprintln!("pqprof: {e} (that server is left out)");
    }
    servers
        .into_iter()
        .map(|server| {
            let name: &'static str = Box::leak(server.name.clone().into_boxed_str());
            let s: &'static dyn TlsStack = Box::leak(Box::new(LabServer {
                server,
                name,
                found: OnceLock::new(),
            }));
            s
        })
        .collect()
}

impl LabServer {
    fn version(&self) -> Result<String> {
        self.found
            .get_or_init(|| {
                let root = crate::lab::root().map_err(|e| format!("{e:#}"))?;
                crate::lab::version(&self.server, &root).map_err(|e| format!("{e:#}"))
            })
            .clone()
            .map_err(|e| anyhow!(e))
    }
}

impl TlsStack for LabServer {
    fn name(&self) -> &'static str {
        self.name
    }

    fn features(&self) -> super::Features {
        super::Features {
            under_load: true,
            // Through the emulated router: its own server, in the server namespace, on
            // `{address}`, serving the grid's concurrent connections its own way.
            network: true,
            // Where its file says how it logs a resumed connection, so that its own count
            // holds each connection to the scenario.
            resumption: self.server.kind == ServerKind::Tls && self.server.resumed_log.is_some(),
            ..super::Features::default()
        }
    }

    fn protocol(&self) -> &'static str {
        match self.server.kind {
            ServerKind::Tls => "tls13",
            ServerKind::Ssh => "ssh",
        }
    }

    /// TLS: the phases of the OpenSSL the library stacks measure. The servers Debian ships link
    /// Debian's libssl 3.5, the same library in another build, so the composition sets what the
    /// server itself adds beside what libssl's calls cost. SSH: OpenSSH 10's own key exchange,
    /// whose ML-KEM-768 is libcrux's verified code (OpenSSH's `libcrux_mlkem768_sha3.h`) and
    /// whose X25519 is its own reference code (`smult_curve25519_ref.c`), composed here with
    /// OpenSSL's X25519, the nearest pqprof measures; the host key signs through libcrypto.
    fn composition(&self) -> crate::results::Stack {
        match self.server.kind {
            ServerKind::Tls => super::openssl::OpenSsl.composition(),
            ServerKind::Ssh => crate::results::Stack::new(
                "openssh",
                "libcrux's ML-KEM-768 (OpenSSH 10 vendors it) and OpenSSL for X25519 and the host key",
                "libcrux",
                "openssl",
                &["ssh"],
            ),
        }
    }

    fn round_trips(&self) -> f64 {
        match self.server.kind {
            ServerKind::Tls => super::openssl::OpenSsl.round_trips(),
            ServerKind::Ssh => super::russh::Russh.round_trips(),
        }
    }

    /// nginx and HAProxy answer HTTP: pqprof's echo is no request of theirs.
    fn application(&self) -> super::Application {
        super::Application::Http
    }

    fn availability(&self) -> Result<Availability> {
        let version = self.version()?;
        Ok(Availability {
            version: format!("{} {version}", self.name),
            groups: Some(self.server.groups.keys().cloned().collect()),
            auths: Some(self.server.chains.clone()),
            refused: Vec::new(),
        })
    }

    fn client(&self, c: Config) -> Result<Box<dyn super::Client>> {
        let software = format!("{} {}", self.name, self.version()?);
        match self.server.kind {
            ServerKind::Tls => super::openssl::http_client(c, software),
            // russh's client; the server's host key is the identity's key, and sshd refuses
            // `none` authentication (that refusal, one round trip, ends each connection).
            ServerKind::Ssh => Ok(Box::new(super::russh::Client::for_server(
                c.group,
                super::russh::Foreign {
                    software,
                    host_key: format!("{} host key", c.identity.auth.algorithm),
                },
            )?)),
        }
    }

    fn start_server(&self, s: &super::child::Start) -> Result<super::child::Server> {
        let resumes = s.mode == Mode::Resumed && self.features().resumption;
        if s.mode != Mode::Full && !resumes {
            bail!("{} serves full handshakes only here", self.name);
        }
        let mut cmd = s.command(&super::child::pqprof_exe()?);
        cmd.arg("lab-server")
            .arg("--server")
            .arg(&self.server.file)
            .args(["--group", s.group, "--mode", s.mode.name()])
            .arg("--identity")
            .arg(&s.files.dir);
        if let Some(b) = s.bind {
            cmd.args(["--bind", &b.to_string()]);
        }
        super::child::Server::launch(cmd, s)
            .with_context(|| format!("{} ({})", self.name, self.server.file.display()))
    }
}

/// The hidden `lab-server` command: one scenario's server, as `handshake-server` serves a library
/// stack's. Prints `port N`, then answers `reset N` with `ok` and `stats N` with the server's CPU
/// since the reset and the connections it served (the client made the N connections; a server
/// that resumes counts them, and those that resumed, from its own log), until standard input
/// closes; then stops the server.
pub(crate) fn server_main(
    file: &Path,
    group: &str,
    identity: &Path,
    bind: IpAddr,
    mode: crate::results::Mode,
) -> Result<()> {
    let server = pqprof_core::lab::load(file)?;
    let root = crate::lab::root()?;
    let port = crate::lab::free_port(bind)?;
    // A list ("X25519MLKEM768,X25519") serves each, in the server's order of preference: a
    // probe's target configured as operators configure it.
    let groups: Vec<&str> = group.split(',').collect();
    let addr = SocketAddr::new(bind, port);
    let v = crate::lab::values(
        &server,
        &groups,
        addr,
        mode == crate::results::Mode::Resumed,
    )?;
    let dir = identity.join(format!("lab-{}-{}", server.name, std::process::id()));
    let running = crate::lab::start(&server, &root, &dir, identity, &v, addr);
    let mut running = match running {
        Ok(r) => r,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(e);
        }
    };
    println!("port {port}");
    std::io::stdout().flush()?;
    let top = running.unshare.id();
    let mut cpu0 = crate::lab::tree_cpu_ns(top);
    // Resumed handshakes: the server's own log counts the connections and those that resumed.
    let log = server
        .resumed_log
        .as_ref()
        .filter(|_| mode == crate::results::Mode::Resumed);
    let counted = |at_least: u64| log.map(|l| crate::lab::resumed_count(l, &dir, at_least));
    let mut counted0 = (0, 0);
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let line = line?;
        let mut words = line.split_whitespace();
        let cmd = words.next().unwrap_or("");
        let n: u64 = words.next().and_then(|w| w.parse().ok()).unwrap_or(0);
        if let Ok(Some(status)) = running.unshare.try_wait() {
            bail!("{} died ({status}): {}", server.name, running.last_words());
        }
        match cmd {
            "reset" => {
                // `reset N`: N connections since the last reset first (child.rs's meaning).
                counted0 = counted(counted0.0 + n).unwrap_or_default();
                cpu0 = crate::lab::tree_cpu_ns(top);
                println!("ok");
            }
            // `cpu N` after every round, `stats N` at the end: the same figures here.
            "stats" | "cpu" => {
                // The client has finished its N exchanges; the server may still be closing the
                // last connection: its CPU is read once it stops growing (at most 100 ms).
                let cpu = crate::lab::settled_cpu_ns(top);
                // With its log, what the server counted; without, each of the client's N
                // connections completed a handshake and a GET this server answered with a 200.
                let (served, resumed) = match counted(counted0.0 + n) {
                    Some((all, resumed)) => (
                        all.saturating_sub(counted0.0),
                        resumed.saturating_sub(counted0.1),
                    ),
                    None => (n, 0),
                };
                let s = super::child::ServerStats {
                    served,
                    cpu_ns: cpu - cpu0,
                    mem: Default::default(),
                    go_mallocs: 0,
                    go_alloc_bytes: 0,
                    resumed,
                    insitu: Vec::new(),
                };
                println!("{}", serde_json::to_string(&s)?);
            }
            _ => println!("?"),
        }
        std::io::stdout().flush()?;
    }
    running.stop();
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
