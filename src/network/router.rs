//! The hidden `netem-router` command: netem in user space, for kernels without `sch_netem`. It runs
//! in the router namespace, where `iptables -A FORWARD -j NFQUEUE --queue-num 0` hands it every
//! forwarded packet (crate `nfq`, pure Rust netlink). Each packet is dropped with probability p or
//! held and accepted after the one-way delay of its direction; verdicts go by packet id, out of
//! the kernel's order (the two directions interleave), which NFQUEUE allows. Release times never
//! go backwards within a direction, so each direction stays in order.
//!
//! Control lines on stdin: `set DELAY_C2S_NS DELAY_S2C_NS LOSS_C2S LOSS_S2C SEED`, `stats` (one
//! JSON line: counters since the last `set`, in all and per server port, so that the handshakes of
//! several scenarios, each with its server, can share one window), EOF to stop. SIGTERM / SIGINT stop too; held packets
//! are then accepted, not dropped.
//!
//! Scheduling: SCHED_FIFO and 1 ns timer slack, else wake-ups run 10-36 ms late whenever the
//! endpoints use the CPU (measured on the 2-core VM: mean lateness 35 us under FIFO, 140 us to
//! 9.6 ms without).

use anyhow::{anyhow, bail, Result};
use nfq::{Queue, Verdict};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::io::{ErrorKind, Write};

const C2S: usize = 0;
const S2C: usize = 1;

/// What the emulator saw since the last `set`, per server port (a TCP or UDP packet's destination port
/// client to server, its source port server to client: each cell's server has its own).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Stats {
    pub(crate) ports: BTreeMap<u16, Counters>,
    pub(crate) peak_held: usize,
    /// The kernel's own count of packets it dropped because the queue was full or nobody listened.
    pub(crate) kernel_queue_dropped: u64,
}

impl Stats {
    /// The counters of the server at `port` (none seen: zeros).
    pub(crate) fn port(&self, port: u16) -> Counters {
        self.ports.get(&port).cloned().unwrap_or_default()
    }
}

/// Counters per direction [client to server, server to client].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Counters {
    pub(crate) packets: [u64; 2],
    pub(crate) bytes: [u64; 2],
    /// Packets with a TCP payload (not pure ACKs), and SYN packets.
    pub(crate) data_packets: [u64; 2],
    pub(crate) syn_packets: [u64; 2],
    pub(crate) dropped: [u64; 2],
    /// Release lateness against the due time, nanoseconds: sum, max, count over 1 ms.
    pub(crate) late_sum_ns: u64,
    pub(crate) late_max_ns: u64,
    pub(crate) late_over_1ms: u64,
    pub(crate) released: u64,
    /// Per client port (a connection: the server's port is the key of these counters), each
    /// packet the emulator held, from its arrival to its release, CLOCK_MONOTONIC nanoseconds:
    /// the handshakes' wire time (`figures::network::wire_within`).
    #[serde(default)]
    pub(crate) held: BTreeMap<u16, Vec<[u64; 2]>>,
    /// Per client port, each run of the server's data packets that no client data packet
    /// interrupts, from the first's arrival to the last's: a TLS 1.3 server's first flight
    /// (ServerHello to Finished) is the first run after the ClientHello, and its span is the time
    /// the server took to write it, signing included (`Cell::server_flight_ns`).
    #[serde(default)]
    pub(crate) flights: BTreeMap<u16, Vec<[u64; 2]>>,
    /// Per client port, whether its last run of server data is still open (no client data since).
    #[serde(skip)]
    open: BTreeMap<u16, bool>,
}

impl Counters {
    /// Another window's counts of the same server (a cell's next round) added to these.
    pub(crate) fn merge(&mut self, o: Counters) {
        for d in [C2S, S2C] {
            self.packets[d] += o.packets[d];
            self.bytes[d] += o.bytes[d];
            self.data_packets[d] += o.data_packets[d];
            self.syn_packets[d] += o.syn_packets[d];
            self.dropped[d] += o.dropped[d];
        }
        self.late_sum_ns += o.late_sum_ns;
        self.late_max_ns = self.late_max_ns.max(o.late_max_ns);
        self.late_over_1ms += o.late_over_1ms;
        self.released += o.released;
        // A client port a later round reused keeps both rounds' spans: each handshake's wire time
        // takes only those within its own clock (figures::network::wire_within).
        for (port, spans) in o.held {
            self.held.entry(port).or_default().extend(spans);
        }
        for (port, runs) in o.flights {
            self.flights.entry(port).or_default().extend(runs);
        }
    }

    /// A data packet of a connection at `t` (its arrival): the server's extends its open run of
    /// server data or starts one; the client's closes it.
    fn data(&mut self, d: usize, client_port: u16, t: u64) {
        let open = self.open.entry(client_port).or_insert(false);
        if d == C2S {
            *open = false;
            return;
        }
        let runs = self.flights.entry(client_port).or_default();
        match runs.last_mut() {
            Some(run) if *open => run[1] = t,
            _ => runs.push([t, t]),
        }
        *open = true;
    }

    fn seen(&mut self, d: usize, bytes: u64, data: bool, syn: bool, dropped: bool) {
        self.packets[d] += 1;
        self.bytes[d] += bytes;
        self.data_packets[d] += data as u64;
        self.syn_packets[d] += syn as u64;
        self.dropped[d] += dropped as u64;
    }

    fn released(&mut self, late: u64, client_port: Option<u16>, span: [u64; 2]) {
        if let Some(p) = client_port {
            join(self.held.entry(p).or_default(), span);
        }
        self.late_sum_ns += late;
        self.late_max_ns = self.late_max_ns.max(late);
        self.late_over_1ms += (late > 1_000_000) as u64;
        self.released += 1;
    }
}

/// Adds a span to a connection's, joined with those at the end it overlaps (releases come in time
/// order, so a connection's spans stay a few: one per stretch of its handshake on the wire).
fn join(spans: &mut Vec<[u64; 2]>, [mut a, mut b]: [u64; 2]) {
    while let Some(&[x, y]) = spans.last() {
        if y < a || x > b {
            break;
        }
        (a, b) = (a.min(x), b.max(y));
        spans.pop();
    }
    spans.push([a, b]);
}

/// splitmix64 (Steele, Lea, Flood 2014): seedable Bernoulli draws, reproducible per seed and server
/// port (the ports are the servers' ephemeral ones, so not from one run to the next).
struct Rng(u64);
impl Rng {
    /// The draws of the server at `port` (none: packets without one) under `seed`.
    fn for_port(seed: u64, port: Option<u16>) -> Rng {
        // Mixed, not added: ports a few apart would otherwise draw one sequence, shifted.
        Rng(mix64(seed ^ mix64(port.map_or(0, |p| u64::from(p) + 1))))
    }

    fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let z = self.0;
        (mix64(z) >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// splitmix64's finalizer.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `nfq::Queue` does not expose its socket: the process's one NETLINK_NETFILTER socket is it.
fn find_nfq_fd() -> Result<i32> {
    let opt = |fd: i32, name: i32| -> Option<i32> {
        let mut v: i32 = 0;
        let mut len = std::mem::size_of::<i32>() as libc::socklen_t;
        // SAFETY: valid out-pointers of the sizes given.
        let r = unsafe {
            libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                name,
                &mut v as *mut i32 as *mut libc::c_void,
                &mut len,
            )
        };
        (r == 0).then_some(v)
    };
    let mut found = None;
    for e in std::fs::read_dir("/proc/self/fd")? {
        let Some(fd) = e?.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if opt(fd, libc::SO_DOMAIN) == Some(libc::AF_NETLINK)
            && opt(fd, libc::SO_PROTOCOL) == Some(libc::NETLINK_NETFILTER)
        {
            if found.is_some() {
                bail!("more than one netfilter netlink socket");
            }
            found = Some(fd);
        }
    }
    found.ok_or_else(|| anyhow!("the NFQUEUE netlink socket was not found"))
}

/// The kernel's drop count for queue 0 (/proc/net/netfilter/nfnetlink_queue, sixth field).
fn kernel_queue_dropped() -> u64 {
    let s = std::fs::read_to_string("/proc/net/netfilter/nfnetlink_queue").unwrap_or_default();
    s.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.len() >= 6 && f[0] == "0")
        .and_then(|f| f[5].parse().ok())
        .unwrap_or(0)
}

/// What the counters need of a packet, from the IPv4 + TCP or UDP headers NFQUEUE copied (128
/// bytes).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Packet {
    /// It has a TCP payload (not a pure ACK), or it is a UDP datagram with a payload (QUIC: every
    /// packet, its ACKs included, is a datagram).
    pub(crate) data: bool,
    pub(crate) syn: bool,
    /// TCP's or UDP's (source, destination) ports.
    pub(crate) ports: Option<(u16, u16)>,
}

pub(crate) fn classify(ip: &[u8]) -> Packet {
    if ip.len() < 20 || ip[0] >> 4 != 4 || !matches!(ip[9], 6 | 17) {
        return Packet::default();
    }
    let ihl = (ip[0] & 0x0f) as usize * 4;
    let total = u16::from_be_bytes([ip[2], ip[3]]) as usize;
    let Some(l4) = ip.get(ihl..) else {
        return Packet::default();
    };
    let ports = |h: &[u8]| {
        Some((
            u16::from_be_bytes([h[0], h[1]]),
            u16::from_be_bytes([h[2], h[3]]),
        ))
    };
    if ip[9] == 17 {
        // UDP: an 8-byte header.
        if l4.len() < 8 {
            return Packet::default();
        }
        return Packet {
            data: total > ihl + 8,
            syn: false,
            ports: ports(l4),
        };
    }
    if l4.len() < 14 {
        return Packet::default();
    }
    let doff = (l4[12] >> 4) as usize * 4;
    Packet {
        data: total > ihl + doff,
        syn: l4[13] & 0x02 != 0,
        ports: ports(l4),
    }
}

struct Held {
    key: (u64, u64),
    /// The server port the packet's counters go to, and the client's.
    port: Option<u16>,
    client_port: Option<u16>,
    /// When the emulator received it.
    arrived: u64,
    msg: nfq::Message,
}
impl PartialEq for Held {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl Eq for Held {}
impl PartialOrd for Held {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Held {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.key.cmp(&o.key)
    }
}

/// Waking early for a release, then spinning to it: a VM's vCPU takes tens of microseconds to wake
/// from idle even with 1 ns timer slack (a 2.6 ms sleep overshot by 90 us at the median, 1.4 ms at
/// the p99, on a Zen 3 VM), and every held packet would carry that as extra delay. The timeout is
/// set this far before the release, a running estimate of the overshoot; the wake-up then spins
/// (`woke`) for what remains, at most `MAX_NS`, and stops early when a packet arrives, so that
/// it is taken in at once: a slow host costs CPU, not delay.
#[derive(Default)]
struct Early {
    /// Mean overshoot of the last wake-ups (an exponential average, 1/8 each), ns.
    mean_ns: u64,
}

impl Early {
    const MAX_NS: u64 = 250_000;

    /// How long before a release to wake: 1.5 times the mean overshoot, at most `MAX_NS`.
    fn ns(&self) -> u64 {
        (self.mean_ns + self.mean_ns / 2).min(Self::MAX_NS)
    }

    /// A timeout's wake-up at `now`, for a release due at `due`, `slept` whether the timeout
    /// asked for was above zero (one of zero is no wake-up, and says nothing of the host): records
    /// the overshoot past the wake-up asked for, then spins until `due` or until the queue's
    /// socket `fd` has a packet. Returns whether it has.
    fn woke(&mut self, due: u64, now: u64, slept: bool, fd: i32) -> bool {
        if slept {
            let asked = due.saturating_sub(self.ns());
            let over = now.saturating_sub(asked).min(4 * Self::MAX_NS);
            self.mean_ns = (self.mean_ns * 7 + over) / 8;
        }
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        while crate::alloc::monotonic_ns() < due {
            // SAFETY: one valid pollfd, no wait.
            if unsafe { libc::poll(&mut p, 1, 0) } > 0 {
                return true;
            }
            std::hint::spin_loop();
        }
        false
    }
}

/// The queue, its socket, a signalfd for SIGTERM and SIGINT, and the client interface's index: the
/// emulator's set-up, at SCHED_FIFO with 1 ns timer slack.
fn open(client_if: &str) -> Result<(Queue, i32, i32, u32)> {
    let name = std::ffi::CString::new(client_if)?;
    // SAFETY: a valid C string.
    let client_ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) };
    if client_ifindex == 0 {
        bail!("no interface {client_if} in this namespace");
    }
    // SAFETY: plain prctl / sched calls on this thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
        let p = libc::sched_param { sched_priority: 50 };
        if libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) != 0 {
            eprintln!(
                "netem-router: SCHED_FIFO refused ({}); delays will be less exact",
                std::io::Error::last_os_error()
            );
        }
    }
    // SAFETY: building a signal set and a signalfd for it.
    let sigfd = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        libc::signalfd(-1, &set, libc::SFD_NONBLOCK | libc::SFD_CLOEXEC)
    };
    let mut q = Queue::open()?;
    q.bind(0)?;
    // bind() copies whole packets (64 KiB each while held); the headers are enough, and an
    // unmodified verdict re-injects the kernel's own copy.
    q.set_copy_range(0, 128)?;
    q.set_queue_max_len(0, 8192)?;
    // Never fail open: a full queue must drop (and be counted), not pass packets undelayed.
    q.set_fail_open(0, false)?;
    q.set_nonblocking(true);
    let fd = find_nfq_fd()?;
    let rcvbuf: i32 = 8 << 20;
    // SAFETY: a valid socket and option value.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVBUFFORCE,
            &rcvbuf as *const i32 as *const libc::c_void,
            4,
        )
    };
    Ok((q, fd, sigfd, client_ifindex))
}

/// What the emulator holds and counts between two `set` lines.
struct Emulator {
    client_ifindex: u32,
    delay: [u64; 2],
    loss: [f64; 2],
    /// One draw sequence per server port, from the seed and the port: which packets a cell loses
    /// then depends on its own packets alone, not on the other cells sharing its window.
    draws_seed: u64,
    rngs: BTreeMap<Option<u16>, Rng>,
    heap: BinaryHeap<Reverse<Held>>,
    last_due: [u64; 2],
    seq: u64,
    c: Stats,
    queue_dropped0: u64,
}

impl Emulator {
    fn new(client_ifindex: u32) -> Emulator {
        Emulator {
            client_ifindex,
            delay: [0; 2],
            loss: [0.0; 2],
            draws_seed: 1,
            rngs: BTreeMap::new(),
            heap: BinaryHeap::new(),
            last_due: [0; 2],
            seq: 0,
            c: Stats::default(),
            queue_dropped0: kernel_queue_dropped(),
        }
    }

    /// Accepts every held packet due by `now`, counting how late each went.
    fn release_due(&mut self, q: &mut Queue, now: u64) {
        while self.heap.peek().is_some_and(|h| h.0.key.0 <= now) {
            let Some(Reverse(h)) = self.heap.pop() else {
                break;
            };
            if let Some(p) = h.port {
                self.c.ports.entry(p).or_default().released(
                    now - h.key.0,
                    h.client_port,
                    [h.arrived, now],
                );
            }
            let _ = q.verdict(h.msg);
        }
    }

    /// The answer (one JSON line) to a control line.
    fn control(&mut self, line: &str) -> Result<String> {
        let w: Vec<&str> = line.split_whitespace().collect();
        Ok(match w.as_slice() {
            ["set", d0, d1, l0, l1, seed] => {
                match (
                    d0.parse(),
                    d1.parse(),
                    l0.parse::<f64>(),
                    l1.parse::<f64>(),
                    seed.parse(),
                ) {
                    (Ok(a), Ok(b), Ok(x), Ok(y), Ok(s))
                        if (0.0..=1.0).contains(&x) && (0.0..=1.0).contains(&y) =>
                    {
                        (self.delay, self.loss, self.draws_seed) = ([a, b], [x, y], s);
                        self.rngs.clear();
                        self.c = Stats::default();
                        self.queue_dropped0 = kernel_queue_dropped();
                        "\"ok\"".to_string()
                    }
                    _ => "\"bad set\"".to_string(),
                }
            }
            ["stats"] => {
                self.c.peak_held = self.c.peak_held.max(self.heap.len());
                self.c.kernel_queue_dropped =
                    kernel_queue_dropped().saturating_sub(self.queue_dropped0);
                serde_json::to_string(&self.c)?
            }
            _ => "\"?\"".to_string(),
        })
    }

    /// Takes up to 256 waiting packets off the queue: each dropped with its direction's loss
    /// probability, or held until its direction's delay has passed (never before the direction's
    /// last, so each direction stays in order).
    fn intake(&mut self, q: &mut Queue) {
        for _ in 0..256 {
            let mut msg = match q.recv() {
                Ok(m) => m,
                Err(_) => break,
            };
            let t = crate::alloc::monotonic_ns();
            let d = if msg.get_indev() == self.client_ifindex {
                C2S
            } else {
                S2C
            };
            let p = classify(msg.get_payload());
            let port = p.ports.map(|(src, dst)| if d == C2S { dst } else { src });
            let client_port = p.ports.map(|(src, dst)| if d == C2S { src } else { dst });
            let seed = self.draws_seed;
            let drop = self.loss[d] > 0.0
                && self
                    .rngs
                    .entry(port)
                    .or_insert_with(|| Rng::for_port(seed, port))
                    .next_f64()
                    < self.loss[d];
            let len = msg.get_original_len() as u64;
            if let Some(port) = port {
                let c = self.c.ports.entry(port).or_default();
                c.seen(d, len, p.data, p.syn, drop);
                // Its arrival, lost or not: the sender wrote it then.
                if let Some(cp) = client_port.filter(|_| p.data) {
                    c.data(d, cp, t);
                }
            }
            if drop {
                msg.set_verdict(Verdict::Drop);
                let _ = q.verdict(msg);
                continue;
            }
            msg.set_verdict(Verdict::Accept);
            let due = (t + self.delay[d]).max(self.last_due[d]);
            self.last_due[d] = due;
            self.seq += 1;
            self.heap.push(Reverse(Held {
                key: (due, self.seq),
                port,
                client_port,
                arrived: t,
                msg,
            }));
        }
        self.c.peak_held = self.c.peak_held.max(self.heap.len());
    }
}

/// A ppoll timeout of `ns`.
fn timespec(ns: u64) -> libc::timespec {
    libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    }
}

pub(crate) fn router_main(client_if: &str) -> Result<()> {
    let (mut q, fd, sigfd, client_ifindex) = open(client_if)?;
    println!("ready");
    std::io::stdout().flush()?;
    let mut e = Emulator::new(client_ifindex);
    let mut early = Early::default();
    let mut line = Vec::new();
    loop {
        e.release_due(&mut q, crate::alloc::monotonic_ns());
        let mut fds = [fd, sigfd, 0].map(|fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        });
        let due = e.heap.peek().map(|h| h.0.key.0);
        let wait = due.map(|due| {
            due.saturating_sub(early.ns())
                .saturating_sub(crate::alloc::monotonic_ns())
        });
        let ts = wait.map(timespec);
        let tsp = ts
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: three valid pollfds; tsp is null or points at `ts`, alive here.
        let n = unsafe { libc::ppoll(fds.as_mut_ptr(), 3, tsp, std::ptr::null()) };
        if n < 0 {
            let err = std::io::Error::last_os_error();
            if err.kind() == ErrorKind::Interrupted {
                continue;
            }
            return Err(err.into());
        }
        if fds[1].revents & libc::POLLIN != 0 {
            break;
        }
        if let (0, Some(due)) = (n, due) {
            let slept = wait.is_some_and(|w| w > 0);
            if early.woke(due, crate::alloc::monotonic_ns(), slept, fd) {
                fds[0].revents |= libc::POLLIN;
            }
        }
        if fds[2].revents != 0 {
            let mut b = [0u8; 512];
            // SAFETY: reading into a buffer of the given size.
            let r = unsafe { libc::read(0, b.as_mut_ptr() as *mut libc::c_void, b.len()) };
            if r <= 0 {
                break;
            }
            line.extend_from_slice(&b[..r as usize]);
            while let Some(pos) = line.iter().position(|&x| x == b'\n') {
                let cmd: Vec<u8> = line.drain(..=pos).collect();
                println!("{}", e.control(&String::from_utf8_lossy(&cmd))?);
                std::io::stdout().flush()?;
            }
        }
        if fds[0].revents & libc::POLLIN != 0 {
            e.intake(&mut q);
        }
    }
    // Held packets are accepted on the way out: closing the queue would drop them.
    while let Some(Reverse(h)) = e.heap.pop() {
        let _ = q.verdict(h.msg);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{classify, Counters, Packet, Rng};

    #[test]
    fn each_port_draws_its_own_sequence_from_the_seed() {
        let draws = |seed, port| {
            let mut r = Rng::for_port(seed, port);
            (0..4).map(|_| r.next_f64()).collect::<Vec<_>>()
        };
        assert_eq!(draws(7, Some(443)), draws(7, Some(443)));
        assert_ne!(draws(7, Some(443)), draws(7, Some(444)));
        assert_ne!(draws(7, Some(443)), draws(8, Some(443)));
        assert_ne!(draws(7, None), draws(7, Some(0)));
        // Nor is a port's sequence its neighbour's, shifted by a draw.
        assert_ne!(draws(7, Some(443))[1..], draws(7, Some(444))[..3]);
        assert!(draws(7, Some(443)).iter().all(|x| (0.0..1.0).contains(x)));
    }

    #[test]
    fn counters_count_each_direction_and_release() {
        let mut c = Counters::default();
        c.seen(0, 60, false, true, false);
        c.seen(1, 1500, true, false, true);
        c.seen(1, 100, true, false, false);
        c.released(2_000_000, Some(40000), [10, 20]);
        c.released(500, None, [30, 40]);
        assert_eq!(c.packets, [1, 2]);
        assert_eq!(c.bytes, [60, 1600]);
        assert_eq!(c.data_packets, [0, 2]);
        assert_eq!(c.syn_packets, [1, 0]);
        assert_eq!(c.dropped, [0, 1]);
        assert_eq!(
            (c.released, c.late_sum_ns, c.late_max_ns, c.late_over_1ms),
            (2, 2_000_500, 2_000_000, 1)
        );
        // Held spans by client port; a packet without ports has none.
        assert_eq!(c.held.get(&40000), Some(&vec![[10, 20]]));
        assert_eq!(c.held.len(), 1);
        // Overlapping and touching spans join; one apart stays apart.
        let mut v = Vec::new();
        for s in [[0, 10], [5, 12], [12, 15], [20, 30], [18, 31]] {
            super::join(&mut v, s);
        }
        assert_eq!(v, vec![[0, 15], [18, 31]]);
    }

    #[test]
    fn a_later_rounds_counters_add_to_the_first() {
        let mut a = Counters::default();
        a.seen(0, 60, false, true, false);
        a.released(2_000_000, Some(40000), [10, 20]);
        let mut b = Counters::default();
        b.seen(0, 100, true, false, true);
        b.seen(1, 1500, true, false, false);
        b.released(300, Some(40000), [50, 60]);
        b.released(700, Some(40001), [55, 65]);
        a.merge(b);
        assert_eq!(a.packets, [2, 1]);
        assert_eq!(a.bytes, [160, 1500]);
        assert_eq!(a.data_packets, [1, 1]);
        assert_eq!(a.syn_packets, [1, 0]);
        assert_eq!(a.dropped, [1, 0]);
        assert_eq!(
            (a.released, a.late_sum_ns, a.late_max_ns, a.late_over_1ms),
            (3, 2_001_000, 2_000_000, 1)
        );
        // A port both rounds used keeps both spans; each handshake takes those in its own clock.
        assert_eq!(a.held.get(&40000), Some(&vec![[10, 20], [50, 60]]));
        assert_eq!(a.held.get(&40001), Some(&vec![[55, 65]]));
    }

    #[test]
    fn a_servers_runs_of_data_end_at_the_clients_next_data() {
        let mut c = Counters::default();
        // ClientHello, the server's flight in three packets (its ACKs between are not data),
        // the client's Finished, then a ticket: two runs.
        use super::{C2S, S2C};
        c.data(C2S, 40000, 5);
        for t in [10, 12, 30] {
            c.data(S2C, 40000, t);
        }
        c.data(C2S, 40000, 40);
        c.data(S2C, 40000, 50);
        // Another connection's packets do not close this one's run.
        c.data(S2C, 40001, 60);
        c.data(S2C, 40000, 70);
        assert_eq!(c.flights.get(&40000), Some(&vec![[10, 30], [50, 70]]));
        assert_eq!(c.flights.get(&40001), Some(&vec![[60, 60]]));
        // A later round's runs add to the first's.
        let mut b = Counters::default();
        b.data(S2C, 40000, 90);
        c.merge(b);
        assert_eq!(
            c.flights.get(&40000),
            Some(&vec![[10, 30], [50, 70], [90, 90]])
        );
    }

    #[test]
    fn headers_tell_data_from_acks_and_find_syns() {
        // IPv4, IHL 5, total 60, TCP; TCP data offset 10 words (40 bytes), SYN.
        let mut syn = vec![0u8; 60];
        syn[0] = 0x45;
        syn[2..4].copy_from_slice(&60u16.to_be_bytes());
        syn[9] = 6;
        syn[20 + 12] = 10 << 4;
        syn[20 + 13] = 0x02;
        syn[20..22].copy_from_slice(&40000u16.to_be_bytes());
        syn[22..24].copy_from_slice(&443u16.to_be_bytes());
        let p = classify(&syn);
        assert_eq!((p.data, p.syn, p.ports), (false, true, Some((40000, 443))));
        // A pure ACK: total 52 = 20 + 32, ACK flag only.
        let mut ack = vec![0u8; 52];
        ack[0] = 0x45;
        ack[2..4].copy_from_slice(&52u16.to_be_bytes());
        ack[9] = 6;
        ack[20 + 12] = 8 << 4;
        ack[20 + 13] = 0x10;
        let p = classify(&ack);
        assert_eq!((p.data, p.syn, p.ports), (false, false, Some((0, 0))));
        // The same headers with 100 bytes of payload behind them (only the headers are copied).
        ack[2..4].copy_from_slice(&152u16.to_be_bytes());
        assert_eq!((classify(&ack).data, classify(&ack).syn), (true, false));
        // A UDP datagram (QUIC) of 1,200 bytes of payload: data, its ports.
        let mut udp = vec![0u8; 28];
        udp[0] = 0x45;
        udp[2..4].copy_from_slice(&1228u16.to_be_bytes());
        udp[9] = 17;
        udp[20..22].copy_from_slice(&50000u16.to_be_bytes());
        udp[22..24].copy_from_slice(&4433u16.to_be_bytes());
        assert_eq!(
            classify(&udp),
            Packet {
                data: true,
                syn: false,
                ports: Some((50000, 4433))
            }
        );
        // Not TCP or UDP, not IPv4, too short.
        let mut icmp = ack.clone();
        icmp[9] = 1;
        assert_eq!(classify(&icmp), Packet::default());
        assert_eq!(classify(&[0x60; 40]), Packet::default());
        assert_eq!(classify(&[0x45; 10]), Packet::default());
    }
}
