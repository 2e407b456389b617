//! The real client/server stacks pqprof runs handshakes on: one file each, behind one trait
//! (`TlsStack`), registered in one list (`all`). `handshake`, `capacity` and `network`, the CLI's
//! value lists and the plan read the registry; adding a stack is its file and a line in `all`.
//!
//! A stack makes clients (in this process) and servers (a child process: this binary's hidden
//! `handshake-server` command, which calls the stack's `serve`, or an outside program such as the
//! Go peer), and, where it can, an in-memory client and server pair (capacity, the paired timer
//! cost) and in-situ hooks (every crypto call timed where it happens).

pub mod child;
pub mod identity;
pub(crate) mod quic_wire;
pub mod tls;
pub mod wire;

pub use identity::Identity;

use crate::results::{AllocCounters, CallPhases, Evidence, Mode};
use anyhow::{anyhow, bail, Result};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::AtomicU64;
use std::sync::Mutex;

/// The registry: each stack's module and type, in the order the tables and the site show them. A
/// new stack is its file and one entry here.
macro_rules! registry {
    ($($module:ident :: $stack:ident),* $(,)?) => {
        $(pub mod $module;)*

        /// Every stack, in the registry's order: the library stacks, then a stack for each
        /// server of servers/ (`lab::stacks`).
        pub fn all() -> &'static [&'static dyn TlsStack] {
            static ALL: std::sync::OnceLock<Vec<&'static dyn TlsStack>> =
                std::sync::OnceLock::new();
            ALL.get_or_init(|| {
                let mut all: Vec<&'static dyn TlsStack> = vec![$(&$module::$stack),*];
                all.extend(lab::stacks());
                all
            })
        }
    };
}

mod lab;
pub(crate) use self::rustls::group as rustls_group;
pub(crate) use lab::server_main as lab_server;

registry!(
    rustls::Rustls,
    openssl::OpenSsl,
    russh::Russh,
    go::Go,
    quinn::Quinn,
    quicgo::QuicGo
);

/// The stack registered under `name`.
pub fn find(name: &str) -> Result<&'static dyn TlsStack> {
    all()
        .iter()
        .copied()
        .find(|s| s.name() == name)
        .ok_or_else(|| {
            anyhow!(
                "unknown stack {name:?}: one of {}",
                names(|_| true).join(", ")
            )
        })
}

/// The names of the stacks with a feature (the CLI's `--stack` values).
pub(crate) fn names(with: impl Fn(&Features) -> bool) -> Vec<&'static str> {
    all()
        .iter()
        .filter(|s| with(&s.features()))
        .map(|s| s.name())
        .collect()
}

/// What a stack can do beyond loopback handshakes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Features {
    /// Every crypto call timed in situ (an instrumented scenario beside the plain one).
    pub(crate) in_situ: bool,
    /// In its instrumented form the stack has a wrapper that runs without timing (rustls's timing
    /// provider unarmed), so the wrapper's own cost is measured apart from the timers'.
    pub(crate) unarmed_wrapper: bool,
    /// A client and a server in one thread over memory buffers (`Pair`).
    pub(crate) in_memory: bool,
    /// The capacity measurements over sockets (load steps, held connections), through a capacity
    /// server; a stack with `in_memory` alone is measured in memory only.
    pub(crate) capacity: bool,
    /// Through the emulated network (a server that serves many connections at once).
    pub(crate) network: bool,
    /// A server of servers/ that the capacity step measures itself (`capacity::h2load`): a TLS
    /// one under h2load from the lab root, its capacity its own under a load generator it does
    /// not embed, and every one's memory with connections held.
    pub(crate) under_load: bool,
    /// TLS 1.3 resumption (`Mode::Resumed`): its client keeps the ticket each connection brings
    /// for the next, and its server issues one ticket per connection.
    pub(crate) resumption: bool,
    /// Its client can offer the hybrid with X25519's key share alone, so that a server requiring
    /// the hybrid retries (`Mode::HelloRetry`). Go's cannot: crypto/tls ignores the order of
    /// CurvePreferences (Go 1.24 on) and sends the hybrid's share whenever it offers it.
    pub(crate) hello_retry: bool,
    /// Its client can offer the hybrid with its key share alone and X25519 without one, so that a
    /// server accepting X25519 alone retries (`Mode::HelloRetryClassical`). rustls's does with its
    /// hybrid's X25519 half not shared (`rustls::share_alone`); Go's cannot: it sends X25519's
    /// share whenever it offers X25519.
    pub(crate) hello_retry_classical: bool,
    /// Its client can offer the hybrid and X25519 with a key share each (`Mode::TwoShares`).
    pub(crate) two_shares: bool,
    /// QUIC: its client presents the NEW_TOKEN token the connection before brought
    /// (`Mode::Token`), and its server can answer a first Initial with a Retry (`Mode::Retry`).
    pub(crate) address_validation: bool,
}

/// Whether a stack can run here, which groups it negotiates and which certificates it serves.
#[derive(Debug, Clone)]
pub struct Availability {
    /// The library's version, as a row names it.
    pub(crate) version: String,
    /// `None`: every group of its protocol's suites.
    pub(crate) groups: Option<Vec<String>>,
    /// The authentication algorithms (suites/auth.toml's `algorithm`) whose certificates it serves
    /// and verifies; `None`: every one.
    pub(crate) auths: Option<Vec<String>>,
    /// Authentication algorithms it serves but cannot complete a handshake with, each with why.
    pub(crate) refused: Vec<(String, String)>,
}

impl Availability {
    pub fn negotiates(&self, group: &str) -> bool {
        self.groups
            .as_ref()
            .is_none_or(|g| g.iter().any(|x| x == group))
    }

    /// Whether it serves and verifies a certificate of `algorithm`.
    pub fn authenticates(&self, algorithm: &str) -> bool {
        self.auths
            .as_ref()
            .is_none_or(|a| a.iter().any(|x| x == algorithm))
            && !self.refused.iter().any(|(x, _)| x == algorithm)
    }

    /// Why an authentication is not measured on this stack, as a note.
    pub(crate) fn unauthenticated(
        &self,
        stack: &str,
        auth: &crate::auth::Auth,
    ) -> crate::results::Warning {
        let refused = self.refused.iter().find(|(x, _)| *x == auth.algorithm);
        crate::results::Warning::NotMeasured {
            what: format!("{stack} with the {} certificate", auth.name),
            reason: refused.map_or_else(
                || {
                    format!(
                        "{stack} {} does not serve {} certificates",
                        self.version, auth.algorithm
                    )
                },
                |(_, why)| why.clone(),
            ),
        }
    }
}

/// How a client or a server is configured: one group, the identity, and the in-situ hooks.
#[derive(Clone, Copy)]
pub struct Config<'a> {
    pub group: &'a str,
    pub identity: &'a Identity,
    /// The stack's in-situ form (rustls: the timing provider; OpenSSL: always).
    pub wrapped: bool,
    /// The client arms the recorder around each connection (a wrapped form unarmed measures the
    /// wrapper alone).
    pub armed: bool,
    /// Full handshakes (no tickets issued, none offered) or resumed ones.
    pub mode: Mode,
}

impl<'a> Config<'a> {
    pub fn plain(group: &'a str, identity: &'a Identity) -> Config<'a> {
        Config {
            group,
            identity,
            wrapped: false,
            armed: false,
            mode: Mode::Full,
        }
    }

    /// The groups a TLS client offers, in order, and how many of them (from the first) get a key
    /// share: the scenario's alone; for two key shares X25519 after it, both with a share
    /// (`figures::modes::second_share`); for a HelloRetryRequest X25519 before it, X25519's share
    /// alone. A server accepts the scenario's group only.
    pub(crate) fn offered(&self) -> (Vec<&'a str>, usize) {
        let second = crate::figures::modes::second_share("tls13");
        match self.mode {
            Mode::TwoShares => (std::iter::once(self.group).chain(second).collect(), 2),
            Mode::HelloRetry => (second.into_iter().chain([self.group]).collect(), 1),
            // The hybrid first with its share, then the scenario's X25519 without one.
            Mode::HelloRetryClassical => (
                crate::figures::modes::predicted_hybrid("tls13")
                    .into_iter()
                    .chain([self.group])
                    .collect(),
                1,
            ),
            Mode::Full | Mode::Resumed | Mode::Token | Mode::Retry => (vec![self.group], 1),
        }
    }

    /// The in-situ form, armed: every crypto call of each connection timed.
    pub fn timed(group: &'a str, identity: &'a Identity) -> Config<'a> {
        Config {
            wrapped: true,
            armed: true,
            ..Config::plain(group, identity)
        }
    }
}

/// One connection a client made.
pub struct One {
    pub total_ns: f64,
    /// Until the handshake (TLS) or key exchange (SSH) completed.
    pub ready_ns: f64,
    pub sent: u64,
    pub received: u64,
    pub(crate) cpu_ns: f64,
    pub(crate) mem: AllocCounters,
    pub evidence: Option<Evidence>,
    /// The client's in-situ record (instrumented scenarios).
    pub(crate) insitu: Option<crate::insitu::Record>,
    /// Go's allocations (the Go peer's runtime counters), per connection.
    pub(crate) go_allocs: f64,
    pub(crate) go_bytes: f64,
    /// The client's port, where the connection has one (0: not known): the emulator's key to the
    /// connection's packets.
    pub(crate) port: u16,
    /// When the connection's clock started, `alloc::monotonic_ns` (0: not known).
    pub(crate) started_ns: u64,
    /// Whether its handshake resumed a session, where the stack's client says (rustls's and
    /// OpenSSL's): a resumed cell counts one that fell back to a full handshake as failed, not
    /// as a resumption's time.
    pub(crate) resumed: Option<bool>,
}

/// One handshake in memory, nanoseconds: each side's calls and the wall time of the exchange.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub client_ns: u64,
    pub server_ns: u64,
    pub wall_ns: u64,
    /// The client resumed a session (a pair made with `Mode::Resumed` resumes each handshake with
    /// the ticket the one before brought).
    pub resumed: bool,
}

/// Runs one side's part of an in-memory handshake, adding its time to that side's.
pub(crate) fn side<R>(acc: &mut std::time::Duration, f: impl FnOnce() -> R) -> R {
    let t = std::time::Instant::now();
    let r = f();
    *acc += t.elapsed();
    r
}

/// How a load connection's socket ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Teardown {
    /// An orderly close (FIN): the client's side stays in TIME_WAIT.
    Close,
    /// A reset (SO_LINGER 0): no TIME_WAIT, so that thousands of connections a second do not use
    /// up the ephemeral ports.
    Reset,
}

/// A client of one stack and group, ready to make connections.
pub trait Client: Send + Sync {
    /// One connection: connect, handshake, echo 32 bytes, close; evidence only when asked.
    fn connect(&self, addr: SocketAddr, evidence: bool) -> Result<One>;

    /// Makes ready, untimed, what this thread's first connection to `addr` would otherwise start
    /// (the Go peer's client process, which must start in the calling thread's network namespace
    /// and inherits its core).
    fn ready(&self, _addr: SocketAddr) -> Result<()> {
        Ok(())
    }

    /// CPU time this client has spent outside this process so far, nanoseconds: what the Go peer's
    /// client processes report having spent since each started (their connections, and reading
    /// commands and writing answers). A client in this process spends its CPU in this process's
    /// counters, and has none here.
    fn outside_cpu_ns(&self) -> f64 {
        0.0
    }

    /// `n` measured connections, one after another.
    fn connect_many(&self, addr: SocketAddr, n: usize) -> Result<Vec<One>> {
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            crate::interrupt::check()?;
            v.push(self.connect(addr, false)?);
        }
        Ok(v)
    }

    /// Connect, handshake, echo, close as `teardown` says: the time from connect to handshake
    /// complete (capacity's load steps).
    fn connect_with(&self, _addr: SocketAddr, _teardown: Teardown) -> Result<f64> {
        bail!("this stack has no load client")
    }

    /// Connect, handshake, echo, and keep the connection open (memory per connection).
    fn open(&self, _addr: SocketAddr) -> Result<Box<dyn Send>> {
        bail!("this stack cannot hold connections")
    }
}

/// A server's configuration for one group, in the server's process.
pub trait Acceptor: Send + Sync {
    /// One connection: the handshake, then the 32-byte echo; the connection stays open.
    fn serve_one(&self, stream: TcpStream) -> Result<Box<dyn Served>>;
}

/// A connection the server has completed, still open.
pub trait Served: Send {
    /// Whether its handshake resumed a session (`Mode::Resumed`: the server counts these, so a
    /// resumed scenario can show that every connection resumed).
    fn resumed(&self) -> bool {
        false
    }

    /// close_notify (or its like), then the socket closes.
    fn close(self: Box<Self>);
}

/// A client and a server of one stack in one thread, passing records through memory.
pub trait Pair {
    /// One handshake (full, or in a pair made with `Mode::Resumed` resumed with the ticket the
    /// handshake before brought); with `check`, the negotiated group is verified.
    fn handshake(&self, check: bool) -> Result<Sample>;

    /// `n` handshakes one after another, unchecked, each failure in its place. A pair in another
    /// process (the Go peer's) makes them in one request, so that no round trip to this process
    /// falls between them.
    fn handshakes(&self, n: usize) -> Vec<Result<Sample>> {
        (0..n).map(|_| self.handshake(false)).collect()
    }
}

/// Where the in-situ records of a server's connections go, one per connection in order.
pub(crate) type Sink = Mutex<Vec<crate::insitu::Record>>;

/// What a connection carries after its handshake: pqprof's 32-byte echo, or an HTTP request and
/// its answer (the servers of servers/). A client meets only servers of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Application {
    Echo,
    Http,
}

/// A real TLS 1.3 or SSH stack.
pub trait TlsStack: Sync {
    /// The name results and the CLI know it by ("rustls").
    fn name(&self) -> &'static str;
    /// The protocol of the suites it runs ("tls13", "ssh").
    fn protocol(&self) -> &'static str;
    /// The composition stack (`plan::stacks`) made of the libraries this stack calls, which its
    /// real handshakes are set beside.
    fn composition(&self) -> crate::results::Stack;

    /// What carries its handshakes: TCP, or QUIC over UDP.
    fn transport(&self) -> crate::results::Transport {
        crate::results::Transport::Tcp
    }

    /// The composition's name.
    fn composed_stack(&self) -> String {
        self.composition().name
    }
    /// Round trips before the client completes, TCP connect included (the network model).
    fn round_trips(&self) -> f64;

    /// What its connections carry after the handshake.
    fn application(&self) -> Application {
        Application::Echo
    }

    fn features(&self) -> Features {
        Features::default()
    }

    /// Why it does not make handshakes of mode `m` (one its `features` lack), as a note says it.
    fn cannot(&self, m: Mode) -> String {
        format!(
            "{} does not make {} handshakes here",
            self.name(),
            m.suffix()
        )
    }

    /// Whether it runs here (the Go peer needs its binary) and which groups it negotiates.
    fn availability(&self) -> Result<Availability>;

    /// What each in-situ label of this stack's hooks stands for in phase terms.
    fn call_phases(&self) -> Vec<CallPhases> {
        Vec::new()
    }

    fn client(&self, c: Config) -> Result<Box<dyn Client>>;

    /// A server configuration, in the server's process (stacks served by this binary).
    fn acceptor(&self, _c: Config) -> Result<Box<dyn Acceptor>> {
        bail!("{} has no server in this binary", self.name())
    }

    /// An in-memory pair (`Features::in_memory`).
    fn pair(&self, _c: Config) -> Result<Box<dyn Pair>> {
        bail!("{} has no in-memory pair", self.name())
    }

    /// Starts the server of one scenario: by default this binary's `handshake-server` child.
    fn start_server(&self, s: &child::Start) -> Result<child::Server> {
        child::Server::start(self.name(), s)
    }

    /// Starts a capacity server (`Features::capacity`): by default this binary's
    /// `capacity-server` child, which serves through `acceptor`.
    fn start_capacity_server(&self, s: &child::CapacityStart) -> Result<child::Server> {
        child::Server::capacity(self.name(), s)
    }

    /// The server loop in the `handshake-server` child: serves until the process ends, one
    /// connection at a time (recording each into `sink` when instrumented) or, with
    /// `concurrent`, each on its own thread.
    fn serve(
        &self,
        c: Config,
        listener: Listener,
        served: &'static AtomicU64,
        sink: Option<&'static Sink>,
        concurrent: bool,
    ) -> Result<()> {
        tls::serve_with(self.acceptor(c)?, listener.tcp()?, served, sink, concurrent)
    }
}

/// The socket a `handshake-server` child serves on, bound before it prints its port (so that a
/// client's first packet never finds the port closed): a TCP listener, or for QUIC a UDP socket.
pub enum Listener {
    Tcp(TcpListener),
    /// The UDP socket, and a TCP listener on the same port that holds the number while the server
    /// lives: the emulator counts each server's packets by port (router.rs), so no TCP server of
    /// the same window may share it.
    Udp(std::net::UdpSocket, TcpListener),
}

impl Listener {
    /// A socket of `transport` on an ephemeral port of `ip`.
    pub(crate) fn bind(
        transport: crate::results::Transport,
        ip: std::net::IpAddr,
    ) -> Result<Listener> {
        match transport {
            crate::results::Transport::Tcp => Ok(Listener::Tcp(TcpListener::bind((ip, 0))?)),
            crate::results::Transport::Quic => {
                let mut last = None;
                for _ in 0..16 {
                    let tcp = TcpListener::bind((ip, 0))?;
                    match std::net::UdpSocket::bind(tcp.local_addr()?) {
                        Ok(udp) => return Ok(Listener::Udp(udp, tcp)),
                        Err(e) => last = Some(e),
                    }
                }
                Err(anyhow!(
                    "no port of {ip} free for both TCP and UDP in 16 tries: {last:?}"
                ))
            }
        }
    }

    pub(crate) fn local_addr(&self) -> std::io::Result<SocketAddr> {
        match self {
            Listener::Tcp(l) => l.local_addr(),
            Listener::Udp(u, _) => u.local_addr(),
        }
    }

    pub(crate) fn tcp(self) -> Result<TcpListener> {
        match self {
            Listener::Tcp(l) => Ok(l),
            Listener::Udp(..) => bail!("a TCP server was given a UDP socket"),
        }
    }

    /// The UDP socket and the TCP listener that holds its port number (keep it open).
    pub(crate) fn udp(self) -> Result<(std::net::UdpSocket, TcpListener)> {
        match self {
            Listener::Udp(u, t) => Ok((u, t)),
            Listener::Tcp(_) => bail!("a QUIC server was given a TCP listener"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_stack_is_found_by_its_name() {
        let names = names(|_| true);
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "{names:?}");
        for n in names {
            assert_eq!(find(n).unwrap().name(), n);
        }
        let e = find("nope")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("one of rustls"), "{e}");
        // Every stack composes against a stack the plan knows, over its own protocol.
        let plan = crate::plan::stacks();
        for s in all() {
            let c = plan.iter().find(|p| p.name == s.composed_stack());
            assert!(c.is_some_and(|c| c.composes(s.protocol())), "{}", s.name());
        }
    }
}
