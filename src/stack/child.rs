//! The server of a scenario in a child process (pqprof's hidden `handshake-server` command, or an
//! outside program such as the Go peer), and the handle the client side keeps on it: a port line,
//! then control lines (`reset N`, `stats N`) answered one line each.

use super::{Config, Identity};
use crate::results::AllocCounters;
use crate::{alloc, insitu};
use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;

/// A running server child; killed and reaped on drop, whatever happens.
pub struct Server {
    pub child: Child,
    stdin: ChildStdin,
    /// Lines the server prints, read by a thread so a silent server cannot hang the client.
    lines: std::sync::mpsc::Receiver<String>,
    pub addr: SocketAddr,
}

/// How long the server may take to answer a control line (its port, reset, stats).
const ANSWER: std::time::Duration = std::time::Duration::from_secs(10);

fn read_lines(stdout: ChildStdout) -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct ServerStats {
    pub(crate) served: u64,
    pub(crate) cpu_ns: f64,
    #[serde(default)]
    pub(crate) mem: AllocCounters,
    /// The Go peer's server: its runtime's allocation counters since `reset`.
    #[serde(default)]
    pub(crate) go_mallocs: u64,
    #[serde(default)]
    pub(crate) go_alloc_bytes: u64,
    /// The connections served since `reset` that resumed a session.
    #[serde(default)]
    pub(crate) resumed: u64,
    /// In-situ records of every connection served since `reset`, in order (instrumented servers).
    #[serde(default)]
    pub(crate) insitu: Vec<insitu::Record>,
}

/// What a scenario's server is started with.
pub struct Start<'a> {
    pub group: &'a str,
    /// The identity's files (the server reads the folder; `Identity::read`).
    pub files: &'a super::identity::Files,
    /// Time every crypto call of each connection and report it with `stats`.
    pub instrumented: bool,
    /// `Some`: this command line instead of this binary's (the network grid starts the server in
    /// its namespace): the program, and the arguments to put before pqprof's own.
    pub wrap: Option<(&'a Path, Vec<String>)>,
    /// Address to listen on, a thread (SSH: a task) per connection, socket timeouts in seconds.
    pub bind: Option<std::net::IpAddr>,
    pub concurrent: bool,
    pub timeout_s: Option<u64>,
    /// Resumed handshakes: the server issues a ticket per connection.
    pub mode: crate::results::Mode,
}

impl<'a> Start<'a> {
    pub fn loopback(
        group: &'a str,
        files: &'a super::identity::Files,
        instrumented: bool,
    ) -> Start<'a> {
        Start {
            group,
            files,
            instrumented,
            wrap: None,
            bind: None,
            concurrent: false,
            timeout_s: None,
            mode: crate::results::Mode::Full,
        }
    }
}

/// What a capacity server (capacity/server.rs) is started with: `threads` workers that close each
/// connection after its echo, or with `hold` one that keeps every connection; pinned to `core`.
pub struct CapacityStart<'a> {
    pub(crate) group: &'a str,
    pub(crate) files: &'a super::identity::Files,
    pub(crate) threads: usize,
    pub(crate) hold: bool,
    pub(crate) core: Option<usize>,
}

/// Pins a child to one core before it runs (every thread it makes inherits the core): for a
/// program that cannot pin itself, such as the Go peer, whose runtime then sees one CPU.
pub(crate) fn pin(cmd: &mut Command, core: usize) -> &mut Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: an all-zero cpu_set_t is the empty set; CPU_SET writes inside it.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(core, &mut set);
        set
    };
    // SAFETY: sched_setaffinity is a system call, async-signal-safe, on the child itself (pid 0)
    // between fork and exec, with a valid set of its size.
    unsafe {
        cmd.pre_exec(move || {
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    }
}

/// The pqprof binary a child server runs: this one, or `PQPROF_BIN` (a test harness that drives
/// the stacks from its own process names the built binary there).
pub(crate) fn pqprof_exe() -> Result<std::path::PathBuf> {
    match std::env::var_os("PQPROF_BIN") {
        Some(p) => Ok(p.into()),
        None => Ok(std::env::current_exe()?),
    }
}

impl<'a> Start<'a> {
    /// The command that runs `program` as this scenario's server: `program` itself, or with
    /// `wrap` (the network grid's server namespace) the wrapper's command line before it.
    pub(crate) fn command(&self, program: &Path) -> Command {
        match &self.wrap {
            Some((wrapper, args)) => {
                let mut c = Command::new(wrapper);
                c.args(args).arg(program);
                c
            }
            None => Command::new(program),
        }
    }
}

impl Server {
    /// This binary's `handshake-server` for stack `stack`.
    pub(crate) fn start(stack: &str, s: &Start) -> Result<Server> {
        let mut cmd = s.command(&pqprof_exe()?);
        cmd.args(["handshake-server", "--stack", stack, "--group", s.group])
            .arg("--identity")
            .arg(&s.files.dir)
            .args(s.instrumented.then_some("--insitu"))
            .args(s.concurrent.then_some("--concurrent"))
            .args(["--mode", s.mode.name()]);
        if let Some(b) = s.bind {
            cmd.args(["--bind", &b.to_string()]);
        }
        if let Some(t) = s.timeout_s {
            cmd.args(["--timeout-s", &t.to_string()]);
        }
        Self::launch(cmd, s).with_context(|| format!("{stack} server for {}", s.group))
    }

    /// This binary's `capacity-server` for stack `stack` (it pins itself to the core).
    pub(crate) fn capacity(stack: &str, s: &CapacityStart) -> Result<Server> {
        let mut cmd = Command::new(pqprof_exe()?);
        cmd.args([
            "capacity-server",
            "--stack",
            stack,
            "--group",
            s.group,
            "--threads",
            &s.threads.to_string(),
        ])
        .arg("--identity")
        .arg(&s.files.dir)
        .args(s.hold.then_some("--hold"));
        if let Some(c) = s.core {
            cmd.args(["--core", &c.to_string()]);
        }
        Self::spawn(cmd).with_context(|| format!("capacity server for {stack} {}", s.group))
    }

    /// Starts a scenario's server command, whose first line is its port, at `s.bind` (loopback
    /// when none).
    pub(crate) fn launch(cmd: Command, s: &Start) -> Result<Server> {
        let mut server = Self::spawn(cmd)?;
        if let Some(b) = s.bind {
            server.addr.set_ip(b);
        }
        Ok(server)
    }

    pub(crate) fn spawn(mut cmd: Command) -> Result<Server> {
        crate::interrupt::die_with_parent(&mut cmd);
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("cannot start the handshake server")?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            bail!("server pipes")
        };
        let mut server = Server {
            child,
            stdin,
            lines: read_lines(stdout),
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        };
        let line = server
            .line()
            .context("the server did not report its port")?;
        // "port N" from a server; "ready" from a child that listens on no port (netem-router).
        let port: u16 = if line == "ready" {
            0
        } else {
            line.strip_prefix("port ")
                .and_then(|p| p.trim().parse().ok())
                .ok_or_else(|| anyhow!("server said {line:?}"))?
        };
        server.addr.set_port(port);
        Ok(server)
    }

    fn line(&mut self) -> Result<String> {
        // A dead server closes the pipe and a hung one says nothing: both are errors, not hangs.
        match self.lines.recv_timeout(ANSWER) {
            Ok(line) => Ok(line.trim().to_string()),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                bail!("the server did not answer within {} s", ANSWER.as_secs())
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                bail!("the server exited ({:?})", self.child.try_wait()?)
            }
        }
    }

    pub fn command(&mut self, cmd: &str) -> Result<String> {
        self.send(cmd)?;
        self.line()
    }

    /// Sends a control line without waiting for its answer (`answer` reads it): servers asked
    /// one after another each wait on their own (`stats N` waits up to 5 s for its last
    /// connections), so a caller with several asks them all first.
    pub(crate) fn send(&mut self, cmd: &str) -> Result<()> {
        let sent = writeln!(self.stdin, "{cmd}").and_then(|()| self.stdin.flush());
        if let Err(e) = sent {
            bail!(
                "cannot talk to the server ({e}); it exited: {:?}",
                self.child.try_wait()?
            );
        }
        Ok(())
    }

    /// The answer to the line `send` sent.
    pub(crate) fn answer(&mut self) -> Result<String> {
        self.line()
    }
}

/// The hidden `handshake-server` command: serve one stack and group on 127.0.0.1 until stdin closes.
/// Where and how the server listens: loopback and one connection at a time for `handshake`; an
/// address in the server namespace and a thread (task) per connection for `network`.
pub(crate) struct Listen {
    pub(crate) bind: std::net::IpAddr,
    pub(crate) concurrent: bool,
}

impl Default for Listen {
    fn default() -> Listen {
        Listen {
            bind: std::net::IpAddr::from([127, 0, 0, 1]),
            concurrent: false,
        }
    }
}

pub(crate) fn server_main(
    stack: &'static dyn super::TlsStack,
    group: &str,
    identity: &Path,
    instrumented: bool,
    listen: Listen,
    mode: crate::results::Mode,
) -> Result<()> {
    alloc::enable(true);
    // Room for `pqprof handshake`'s default 20 x 100 connections and more; past it the vector grows.
    let records: &'static Mutex<Vec<insitu::Record>> =
        Box::leak(Box::new(insitu::sink(if instrumented { 4096 } else { 0 })));
    let served = Box::leak(Box::new(std::sync::atomic::AtomicU64::new(0)));
    let listener = super::Listener::bind(stack.transport(), listen.bind)
        .with_context(|| format!("cannot bind a port on {}", listen.bind))?;
    let concurrent = listen.concurrent;
    println!("port {}", listener.local_addr()?.port());
    std::io::stdout().flush()?;
    let id = Identity::read(identity)?;
    let group = group.to_string();
    let served_ref: &'static std::sync::atomic::AtomicU64 = served;
    std::thread::spawn(move || {
        let sink = instrumented.then_some(records);
        let c = Config {
            wrapped: instrumented,
            mode,
            ..Config::plain(&group, &id)
        };
        let r = stack.serve(c, listener, served_ref, sink, concurrent);
        if let Err(e) = r {
            eprintln!("server: {e:#}");
            std::process::exit(2);
        }
    });
    // For the robustness test: a server that dies mid-run (PQPROF_SERVER_DIES_AFTER=N connections).
    if let Some(n) = std::env::var("PQPROF_SERVER_DIES_AFTER")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        std::thread::spawn(move || loop {
            if served_ref.load(std::sync::atomic::Ordering::Relaxed) >= n {
                std::process::exit(3);
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        });
    }
    let (mut mem0, mut cpu0, mut served0) = (alloc::counters(), alloc::process_cpu_ns(), 0);
    let resumed = || super::tls::RESUMED.load(std::sync::atomic::Ordering::Relaxed);
    let mut resumed0 = 0;
    // `reset N` / `stats N`: first wait until N connections have been served since the last reset
    // (the client knows how many it made; the server may still be closing the last one). The
    // naps double from 200 µs to 10 ms: a quinn server whose client's close was lost counts that
    // connection only at its idle timeout, and 5 s of 200 µs naps cost the server process up to a
    // core's worth of the cell's window, which its CPU per handshake then counted (quinn's hybrid
    // at 5.6 ms and 1% loss read 94% busy on the Xeon model 207, 2026-12-04).
    let wait_for = |n: u64, since: u64| {
        let t0 = std::time::Instant::now();
        let mut nap = std::time::Duration::from_micros(200);
        while served.load(std::sync::atomic::Ordering::Acquire) - since < n
            && t0.elapsed() < std::time::Duration::from_secs(5)
        {
            std::thread::sleep(nap);
            nap = (nap * 2).min(std::time::Duration::from_millis(10));
        }
    };
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
        match cmd {
            "reset" => {
                wait_for(n, served0);
                (mem0, cpu0, served0) = (
                    alloc::counters(),
                    alloc::process_cpu_ns(),
                    served.load(std::sync::atomic::Ordering::Acquire),
                );
                resumed0 = resumed();
                records.lock().map_err(|_| anyhow!("poisoned"))?.clear();
                println!("ok");
            }
            // `cpu N`: the same figures without the in-situ records, read after every round for
            // the server's CPU per sample.
            "stats" | "cpu" => {
                wait_for(n, served0);
                let insitu = if cmd == "stats" {
                    records.lock().map_err(|_| anyhow!("poisoned"))?.clone()
                } else {
                    Vec::new()
                };
                let s = ServerStats {
                    served: served.load(std::sync::atomic::Ordering::Acquire) - served0,
                    cpu_ns: alloc::process_cpu_ns() - cpu0,
                    mem: alloc::counters().since(mem0),
                    insitu,
                    go_mallocs: 0,
                    go_alloc_bytes: 0,
                    resumed: resumed() - resumed0,
                };
                println!("{}", serde_json::to_string(&s)?);
            }
            _ => println!("?"),
        }
        std::io::stdout().flush()?;
    }
    Ok(())
}
