//! The servers of servers/ (nginx, HAProxy, a user's own) as stacks: each server file becomes one
//! stack, its server the program the file names, run in the lab root (`crate::lab`), and its
//! client pqprof's OpenSSL client, which ends each connection with an HTTP request in place of the
//! echo (the servers answer HTTP). The handshake step then measures them as it measures the
//! library stacks, and their rows share the scenario identity, the evidence and `check`.

use super::{Availability, Config, TlsStack};
use crate::results::Mode;
use anyhow::{anyhow, bail, Context, Result};
use pqprof_core::lab::{Server, ServerKind};
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

    fn protocol(&self) -> &'static str {
        match self.server.kind {
            ServerKind::Tls => "tls13",
            ServerKind::Ssh => "ssh",
        }
    }

    /// The phases of the OpenSSL the library stacks measure: the servers Debian ships link
    /// Debian's libssl 3.5, the same library in another build, so the composition sets what the
    /// server itself adds beside what libssl's calls cost.
    fn composition(&self) -> crate::results::Stack {
        super::openssl::OpenSsl.composition()
    }

    fn round_trips(&self) -> f64 {
        super::openssl::OpenSsl.round_trips()
    }

    fn availability(&self) -> Result<Availability> {
        if self.server.kind == ServerKind::Ssh {
            bail!(
                "{}: pqprof's SSH client does not drive a server of servers/ yet",
                self.server.file.display()
            );
        }
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
        super::openssl::http_client(c, software)
    }

    fn start_server(&self, s: &super::child::Start) -> Result<super::child::Server> {
        if s.mode != Mode::Full {
            bail!("{} serves full handshakes only here", self.name);
        }
        let mut cmd = s.command(&super::child::pqprof_exe()?);
        cmd.arg("lab-server")
            .arg("--server")
            .arg(&self.server.file)
            .args(["--group", s.group])
            .arg("--identity")
            .arg(&s.files.dir);
        if let Some(b) = s.bind {
            cmd.args(["--bind", &b.to_string()]);
        }
        super::child::Server::launch(cmd, s)
            .with_context(|| format!("{} ({})", self.name, self.server.file.display()))
    }
}
