//! The servers people run under load (#65): each TLS server of servers/ the step was asked for
//! (nginx, HAProxy, a user's own), started in the lab root with both socket groups (the hybrid
//! first, as operators configure it) and pinned to the server core, loaded by h2load from the same
//! root on the load core: rounds of `CONNECTIONS` connections opened at once, each one handshake
//! and one request, h2load offering one group, the groups taking turns. The server's processes'
//! CPU is read before and after each round; h2load reports its own elapsed time and counts
//! (`parse::h2load`). `figures::server_load` sets the rate against the capacity the real
//! handshakes give the same server. Then a fresh server of each holds idle connections, and its
//! processes' memory is read at each count: for an SSH server (sshd), which h2load cannot load,
//! that is all.

use super::Options;
use crate::results::{Held, ServerHeld, ServerLoad, ServerLoadRound, Warning};
use crate::stack::identity::Chains;
use anyhow::{anyhow, bail, Context, Result};
use pqprof_core::lab::{Server, ServerKind};
use pqprof_core::parse::h2load;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::process::{Command, Stdio};

/// Connections a round: all opened at once, enough that the server is never idle waiting for one
/// (h2load's `-c N -n N`: one request each; `-c 10 -n 2000` makes 10 handshakes, not 2,000).
const CONNECTIONS: usize = 200;

/// Rounds of each group for each server and chain.
const ROUNDS: usize = 4;

/// The chain besides the baseline's the servers are loaded with (#65: ECDSA and ML-DSA-65).
const OTHER_CHAIN: &str = "ML-DSA-65";

/// The idle connections a fresh server holds at each memory step (servers/nginx.conf.in allows
/// 4,096 a worker).
const HELD: [usize; 3] = [0, 200, 400];

/// The idle connections a fresh SSH server holds at each memory step: sshd runs processes of its
/// own for each (servers/sshd_config.in's MaxStartups allows 4,096 before login).
const HELD_SSH: [usize; 3] = [0, 25, 50];

/// The key exchanges an SSH server's connections are held with, the hybrid first as OpenSSH 10
/// orders them by default (sshd_config(5), KexAlgorithms).
const SSH_GROUPS: [&str; 2] = ["mlkem768x25519-sha256", "curve25519-sha256"];

/// Every asked-for lab TLS server under h2load, with each chain it serves of the baseline's and
/// `OTHER_CHAIN`, and every asked-for SSH server's memory with connections held. A server that
/// cannot be measured here (no lab root, no h2load in it, a server that will not start) is a
/// note, and the others go on.
pub(super) fn servers(
    opts: &Options,
    chains: &Chains,
    cores: (Option<usize>, Option<usize>),
    notes: &mut Vec<Warning>,
    progress: &mut dyn FnMut(&str),
) -> Result<(Vec<ServerLoad>, Vec<ServerHeld>)> {
    let asked: Vec<&str> = opts.servers.iter().map(|s| s.name()).collect();
    let (servers, _) = pqprof_core::lab::load_all(&crate::lab::servers_dir());
    let servers: Vec<Server> = servers
        .into_iter()
        .filter(|s| asked.contains(&s.name.as_str()))
        .collect();
    if servers.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let mut not_measured = |what: &str, e: anyhow::Error| {
        notes.push(Warning::NotMeasured {
            what: what.to_string(),
            reason: format!("{e:#}"),
        })
    };
    let root = match crate::lab::root() {
        Ok(r) => r,
        Err(e) => {
            not_measured("the lab servers", e);
            return Ok((Vec::new(), Vec::new()));
        }
    };
    let tls: Vec<&Server> = servers
        .iter()
        .filter(|s| s.kind == ServerKind::Tls)
        .collect();
    let tool = match tls.is_empty() {
        true => None,
        false => match tool_version(&root) {
            Ok(t) => Some(t),
            Err(e) => {
                not_measured("the lab's TLS servers under h2load", e);
                None
            }
        },
    };
    // The hybrid first, the baseline last: the order operators configure.
    let mut groups: Vec<&str> = opts.socket_groups.iter().map(String::as_str).collect();
    groups.sort_by_key(|g| *g == pqprof_core::figures::probe::CLASSICAL);
    let mut out = Vec::new();
    for server in tls.iter().filter(|_| tool.is_some()) {
        for auth in [opts.auths.baseline.as_str(), OTHER_CHAIN] {
            crate::interrupt::check()?;
            if !server.chains.iter().any(|c| c == auth) {
                continue;
            }
            let Ok((id, files)) = chains.get(auth) else {
                continue;
            };
            progress(&format!("capacity: {} + {auth} under h2load", server.name));
            let tool = tool.as_deref().unwrap_or_default();
            let mut rows = match load(server, &root, &files.dir, &groups, auth, tool, cores.1) {
                Ok(rows) => rows,
                Err(e) => {
                    let what = format!("{} + {auth} under h2load", server.name);
                    not_measured(&what, interrupted(e)?);
                    continue;
                }
            };
            for row in &mut rows {
                progress(&format!(
                    "capacity: {} {} + {auth}, memory of held connections",
                    server.name, row.group
                ));
                match held(server, &root, (id, &files.dir), &groups, &row.group, &HELD) {
                    Ok(h) => row.held = Some(h),
                    Err(e) => {
                        let what = format!(
                            "{} {} + {auth} with connections held",
                            server.name, row.group
                        );
                        not_measured(&what, interrupted(e)?)
                    }
                }
            }
            out.extend(rows);
        }
    }
    let mut ssh_held = Vec::new();
    for server in servers.iter().filter(|s| s.kind == ServerKind::Ssh) {
        // The host key the handshake step's scenarios use: the baseline's where the server
        // takes it.
        let baseline = opts.auths.baseline.as_str();
        let Some(auth) = server
            .chains
            .iter()
            .find(|c| *c == baseline)
            .or(server.chains.first())
        else {
            continue;
        };
        let what = format!("{} with connections held", server.name);
        let (id, files) = match chains.get(auth) {
            Ok(chain) => chain,
            Err(e) => {
                not_measured(&what, e);
                continue;
            }
        };
        let version = match crate::lab::version(server, &root) {
            Ok(v) => v,
            Err(e) => {
                not_measured(&what, e);
                continue;
            }
        };
        let groups: Vec<&str> = SSH_GROUPS
            .into_iter()
            .filter(|g| server.groups.contains_key(*g))
            .collect();
        if groups.is_empty() {
            let why = format!("its [groups] has neither of {}", SSH_GROUPS.join(", "));
            not_measured(&what, anyhow!(why));
        }
        for group in &groups {
            crate::interrupt::check()?;
            progress(&format!(
                "capacity: {} {group}, memory of held connections",
                server.name
            ));
            match held(server, &root, (id, &files.dir), &groups, group, &HELD_SSH) {
                Ok(held) => ssh_held.push(ServerHeld {
                    server: server.name.clone(),
                    version: version.clone(),
                    server_groups: groups.iter().map(|g| g.to_string()).collect(),
                    group: group.to_string(),
                    auth: auth.clone(),
                    held,
                }),
                Err(e) => {
                    let what = format!("{} {group} with connections held", server.name);
                    not_measured(&what, interrupted(e)?)
                }
            }
        }
    }
    Ok((out, ssh_held))
}

/// An error that is an interruption (Ctrl-C, SIGTERM) as the error it is, to stop the step: the
/// section is then not written. Any other, for a note.
fn interrupted(e: anyhow::Error) -> Result<anyhow::Error> {
    crate::interrupt::check()?;
    if e.downcast_ref::<crate::interrupt::Interrupted>().is_some() {
        return Err(e);
    }
    Ok(e)
}

/// "h2load nghttp2/1.64.0", as the root's h2load prints it.
fn tool_version(root: &Path) -> Result<String> {
    let out = Command::new("chroot")
        .arg(root)
        .args(["h2load", "--version"])
        .output()
        .context("cannot run chroot")?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().next().unwrap_or("").trim();
    if !out.status.success() || !line.starts_with("h2load") {
        bail!("no h2load in the lab root ({})", root.display());
    }
    Ok(line.to_string())
}

/// One server and chain: started once with every group, one unmeasured round of each group,
/// then `ROUNDS` rounds of each group in turn.
fn load(
    server: &Server,
    root: &Path,
    identity: &Path,
    groups: &[&str],
    auth: &str,
    tool: &str,
    load_core: Option<usize>,
) -> Result<Vec<ServerLoad>> {
    let bind = IpAddr::from([127, 0, 0, 1]);
    let port = crate::lab::free_port(bind)?;
    let values = crate::lab::values(server, groups, SocketAddr::new(bind, port), false)?;
    let version = crate::lab::version(server, root)?;
    let dir = identity.join(format!("h2load-{}-{}", server.name, std::process::id()));
    let started = crate::lab::start(
        server,
        root,
        &dir,
        identity,
        &values,
        SocketAddr::new(bind, port),
    );
    // The server runs on the server core: its processes inherit this thread's pinning
    // (`measure::pin`, the capacity step's first act).
    let result = started.and_then(|mut running| {
        let top = running.unshare.id();
        // One round of each group unmeasured first: the server's first connections grow its heap
        // and set up what it keeps, which no group's first measured round should carry.
        for g in groups {
            h2load_once(root, g, port, load_core)?;
        }
        let mut rows: Vec<ServerLoad> = groups
            .iter()
            .map(|g| ServerLoad {
                server: server.name.clone(),
                version: version.clone(),
                server_groups: groups.iter().map(|g| g.to_string()).collect(),
                group: g.to_string(),
                auth: auth.to_string(),
                tool: tool.to_string(),
                tls_version: String::new(),
                connections: CONNECTIONS,
                rounds: Vec::new(),
                held: None,
            })
            .collect();
        for turn in 0..ROUNDS * groups.len() {
            crate::interrupt::check()?;
            // ABBA: the groups' order reversed every other round, so that neither always runs
            // first or after the other.
            let (round, k) = (turn / groups.len(), turn % groups.len());
            let k = if round % 2 == 0 {
                k
            } else {
                groups.len() - 1 - k
            };
            let row = &mut rows[k];
            let before = crate::lab::settled_cpu_ns(top);
            let run = h2load_once(root, &row.group, port, load_core)?;
            let after = crate::lab::settled_cpu_ns(top);
            if let Ok(Some(status)) = running.unshare.try_wait() {
                bail!("{} died ({status}): {}", server.name, running.last_words());
            }
            // A round with a failed connection measures no capacity of this server: the server
            // and chain are left out, with why (check refuses such a round in a file).
            if run.succeeded != run.total || run.total != CONNECTIONS as u64 {
                bail!(
                    "{} of {CONNECTIONS} connections offering {} succeeded: {}",
                    run.succeeded,
                    row.group,
                    running.last_words()
                );
            }
            row.tls_version = run.tls_version.unwrap_or_default();
            row.rounds.push(ServerLoadRound {
                turn,
                elapsed_ns: run.elapsed_ns,
                succeeded: run.succeeded,
                failed: run.total - run.succeeded,
                server_cpu_ns: (after - before).max(0.0).round() as u64,
            });
        }
        running.stop();
        Ok(rows)
    });
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// A fresh server (configured as for the rounds) holding `steps` idle connections of `group`,
/// each opened by the server's stack's client (`Client::open`: for a TLS server a handshake and
/// one request kept alive on pqprof's OpenSSL client, for SSH a key exchange on russh's): its
/// processes' memory and its established connections at each step. Fresh, since memory a server
/// freed stays in its heap and the next connections reuse it.
fn held(
    server: &Server,
    root: &Path,
    (id, identity): (&crate::stack::Identity, &Path),
    groups: &[&str],
    group: &str,
    steps: &[usize],
) -> Result<Held> {
    let stack = crate::stack::find(&server.name)?;
    let client = stack.client(crate::stack::Config::plain(group, id))?;
    let bind = IpAddr::from([127, 0, 0, 1]);
    let addr = SocketAddr::new(bind, crate::lab::free_port(bind)?);
    let values = crate::lab::values(server, groups, addr, false)?;
    let dir = identity.join(format!("held-{}-{}", server.name, std::process::id()));
    let started = crate::lab::start(server, root, &dir, identity, &values, addr);
    let result = started.and_then(|mut running| {
        let top = running.unshare.id();
        let mut held = Held {
            connections: Vec::new(),
            established: Vec::new(),
            rss_bytes: Vec::new(),
            pss_bytes: Vec::new(),
        };
        let mut open: Vec<Box<dyn Send>> = Vec::new();
        for &n in steps {
            while open.len() < n {
                crate::interrupt::check()?;
                open.push(client.open(addr).with_context(|| {
                    format!(
                        "connection {} of {n}: {}",
                        open.len() + 1,
                        running.last_words()
                    )
                })?);
            }
            // Let the server settle what the last connections queued: its processes hold every
            // one (at most 2 s), and a moment more.
            let t0 = std::time::Instant::now();
            let mut established = crate::lab::established(top, addr.port());
            while established != n && t0.elapsed() < std::time::Duration::from_secs(2) {
                std::thread::sleep(std::time::Duration::from_millis(20));
                established = crate::lab::established(top, addr.port());
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
            let (rss, pss) = crate::lab::tree_memory_bytes(top);
            if established != n || pss == 0 {
                bail!(
                    "with {n} connections held the server had {established} established and a \
                     proportional set size of {pss} bytes: {}",
                    running.last_words()
                );
            }
            held.connections.push(n);
            held.established.push(established);
            held.rss_bytes.push(rss);
            held.pss_bytes.push(pss);
        }
        drop(open);
        running.stop();
        Ok(held)
    });
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// One h2load run from the root on the load core, offering `group` alone.
fn h2load_once(root: &Path, group: &str, port: u16, core: Option<usize>) -> Result<h2load::Run> {
    let mut cmd = Command::new("chroot");
    // HTTP/1.1 (`--h1`), as the real handshakes' client speaks it, so that both set the same
    // work per connection; a connection silent for 10 s, or open for 30, ends.
    cmd.arg(root)
        .args([
            "h2load", "--h1", "--groups", group, "-t", "1", "-N", "10", "-T", "30",
        ])
        .args([
            "-c",
            &CONNECTIONS.to_string(),
            "-n",
            &CONNECTIONS.to_string(),
        ])
        .arg(format!("https://127.0.0.1:{port}/"))
        .stdin(Stdio::null());
    crate::interrupt::die_with_parent(&mut cmd);
    if let Some(core) = core {
        crate::stack::child::pin(&mut cmd, core);
    }
    let out = cmd.output().context("cannot run h2load in the lab root")?;
    let text = String::from_utf8_lossy(&out.stdout);
    h2load::parse(&text).map_err(|e| {
        let said = String::from_utf8_lossy(&out.stderr);
        anyhow!(
            "h2load: {e} ({})",
            said.lines().next().unwrap_or("nothing on stderr").trim()
        )
    })
}
