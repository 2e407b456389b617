//! The `capacity` section (`pqprof capacity`): what a TLS server can sustain. Handshakes per core
//! in memory (client and server in one thread, no sockets), throughput and latency over loopback
//! sockets under stepped concurrency, and memory per established connection.

use super::{RealStack, Summary};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Capacity {
    pub date_utc: String,
    pub wall_seconds: f64,
    /// Cores of the machine (the "servers needed" figures assume all of them serve).
    pub cores: usize,
    /// The core in-memory handshakes and the socket server are pinned to.
    pub server_core: Option<usize>,
    /// The core the socket load generator is pinned to.
    pub load_core: Option<usize>,
    /// The open-file limit before and after pqprof raised it (memory per connection holds two
    /// sockets per connection, one in each process).
    pub fd_limit_before: u64,
    pub fd_limit: u64,
    pub in_memory: Vec<InMemory>,
    /// Resumed TLS 1.3 handshakes in memory (psk_dhe_ke with the ticket the handshake before
    /// brought, #34), each against the full row of its stack, group and authentication.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resumed: Vec<InMemory>,
    pub sockets: Vec<Sockets>,
    pub memory: Vec<Memory>,
    /// The servers people run (servers/*.toml: nginx, HAProxy) under h2load's load from the lab
    /// root (files from 2026-12-07 on): the cross-check of their CPU per handshake in the real
    /// handshakes (`figures::server_load`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<ServerLoad>,
    /// The SSH servers of servers/ (sshd), which h2load cannot load: their memory with connections
    /// held open after the key exchange (files from 2026-12-07 on).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers_held: Vec<ServerHeld>,
    /// What deserves caution: a load generator that could not keep up, a step cut short.
    #[serde(default)]
    pub notes: Vec<super::Warning>,
}

/// TLS 1.3 handshakes with client and server in one thread on one pinned core, connected by
/// memory buffers: each side's calls timed separately. Full handshakes in `in_memory`; resumed
/// ones in `resumed`, whose `baseline` and `against` are their full twin's own group and
/// authentication.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InMemory {
    pub stack: RealStack,
    /// The composition stack made of the code this stack runs (schema 3; before, the stack's own
    /// name, which every stack's composition had).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub composed_stack: String,
    pub group: String,
    /// The authentication the server presented (schema 3; before, a self-signed ECDSA P-256
    /// certificate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<String>,
    /// Per handshake, nanoseconds: every client-side call (connection made, records written and
    /// read), every server-side call, and the wall time of the whole handshake (both sides plus
    /// the loop that passes buffers between them). Same index, same handshake.
    #[serde(with = "super::packed::u64s")]
    pub client_ns: Vec<u64>,
    #[serde(with = "super::packed::u64s")]
    pub server_ns: Vec<u64>,
    #[serde(with = "super::packed::u64s")]
    pub wall_ns: Vec<u64>,
    pub client: Summary,
    pub server: Summary,
    pub wall: Summary,
    /// 95% bootstrap intervals of the medians (stats::median_ci95).
    pub server_median_ci95_ns: Option<(f64, f64)>,
    pub wall_median_ci95_ns: Option<(f64, f64)>,
    /// 1e9 / the mean wall time: handshakes (both sides) one core completes per second.
    pub handshakes_per_s: f64,
    /// From the t-interval of the mean wall time.
    pub handshakes_per_s_ci95: Option<(f64, f64)>,
    /// The rate's half-width against the target (files from 2026-12-01 on); batches: rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<super::Precision>,
    /// 1e9 / the mean server time: handshakes one core can serve per second.
    pub server_per_core_s: f64,
    /// 10,000 / (server_per_core_s x cores): machines like this one needed to serve 10,000
    /// handshakes of the row's kind per second.
    pub servers_for_10k: f64,
    /// The classical group of the same stack, and this group's figures against it (a resumed
    /// row: its own group, against its full twin).
    pub baseline: Option<String>,
    /// The row the figures are against, group and authentication (schema 3): the baseline group
    /// with the baseline authentication, or for another authentication the same group with the
    /// baseline one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub against: Option<super::Against>,
    /// server_per_core_s / the baseline's.
    pub vs_baseline: Option<f64>,
    /// Median server time minus the baseline's.
    pub server_delta_ns: Option<f64>,
    /// The same difference composed from the stack's own library phases (server side only:
    /// encapsulation, half of the symmetric work; see check::capacity), medians.
    pub composed_server_delta_ns: Option<f64>,
    pub failures: usize,
    /// Of the handshakes stored, how many the client saw resume a session (resumed rows; every
    /// one of them, or check fails the row).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumptions: Option<usize>,
}

impl InMemory {
    /// The composition stack its server-side difference is set beside.
    pub fn composed_stack(&self) -> String {
        if self.composed_stack.is_empty() {
            self.stack.name().to_string()
        } else {
            self.composed_stack.clone()
        }
    }
}

/// A server pinned to one core, loaded from another core over loopback TCP with a bounded number
/// of connections in flight.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Sockets {
    pub stack: RealStack,
    pub group: String,
    /// The authentication the server presented (schema 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<String>,
    /// Server worker threads (all on the server core).
    pub server_threads: usize,
    pub steps: Vec<LoadStep>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoadStep {
    pub concurrency: usize,
    /// Wall time the load ran, nanoseconds.
    pub duration_ns: f64,
    pub completed: u64,
    pub failed: u64,
    /// Connect to handshake complete, every completed connection, nanoseconds.
    #[serde(with = "super::packed::u64s")]
    pub latency_ns: Vec<u64>,
    pub p50_ns: f64,
    pub p90_ns: f64,
    pub p99_ns: f64,
    /// completed / duration.
    pub handshakes_per_s: f64,
    /// The server process's CPU time over the step (all threads), and per completed handshake.
    pub server_cpu_ns: f64,
    pub server_cpu_per_handshake_ns: f64,
    /// Server and load-generator CPU time / wall time, percent of one core.
    pub server_busy_pct: f64,
    pub client_busy_pct: f64,
    /// The load generator's core was busier than the server's: throughput is the generator's
    /// limit, not the server's; server CPU per handshake still holds.
    pub load_limited: bool,
}

/// Memory of K established, idle connections on the server, stepped up.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Memory {
    pub stack: RealStack,
    pub group: String,
    /// The authentication the server presented (schema 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<String>,
    /// Step 0 (no connections held) first.
    pub steps: Vec<MemoryStep>,
    /// At the largest step: (step - step 0) / connections.
    pub per_connection: PerConnection,
    /// Server heap in use during each handshake above what was in use when it started (its
    /// peak), and what was still in use after it (retained), bytes; the first connections.
    #[serde(with = "super::packed::i64s")]
    pub peak_bytes: Vec<i64>,
    #[serde(with = "super::packed::i64s")]
    pub retained_bytes: Vec<i64>,
    pub peak_median_bytes: f64,
    pub retained_median_bytes: f64,
    pub failures: usize,
    /// Why the largest step is smaller than asked, if it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limited_by: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemoryStep {
    pub connections: usize,
    /// The server's live heap: Rust allocations (counting allocator) and C allocations inside
    /// OpenSSL (CRYPTO_set_mem_functions, malloc_usable_size), bytes.
    pub heap_rust_bytes: i64,
    pub heap_c_bytes: i64,
    /// The Go peer's server: Go's live heap after collections (runtime.MemStats.HeapAlloc after
    /// runtime.GC), bytes; its Rust and C heaps are zero (files before Go served capacity: 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub heap_go_bytes: i64,
    /// The server process's resident set (/proc/self/statm), bytes.
    pub rss_bytes: u64,
    /// Kernel TCP memory of the whole machine (/proc/net/sockstat "TCP ... mem", pages): both ends
    /// of every loopback connection.
    pub kernel_tcp_pages: u64,
    /// Kernel slab memory of the whole machine (/proc/meminfo "Slab"), bytes: the socket
    /// structures themselves, which the TCP page count leaves out.
    pub kernel_slab_bytes: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PerConnection {
    pub connections: usize,
    /// Rust, C and Go heap together.
    pub heap_bytes: f64,
    pub heap_rust_bytes: f64,
    pub heap_c_bytes: f64,
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub heap_go_bytes: f64,
    pub rss_bytes: f64,
    /// Both ends' kernel socket buffer memory, bytes (pages x page_bytes).
    pub kernel_bytes: f64,
    /// Both ends' kernel slab growth (socket structures), bytes; machine-wide, so noisier.
    pub kernel_slab_bytes: f64,
    pub page_bytes: u64,
}

fn is_zero(x: &i64) -> bool {
    *x == 0
}

fn is_zero_f64(x: &f64) -> bool {
    *x == 0.0
}

/// A lab server under h2load (nghttp2's load generator, from the same root) for one group and
/// chain: rounds of `connections` connections, all opened at once, each one TLS 1.3 handshake and
/// one request, the server pinned to the server core and h2load to the load core. The server
/// takes both groups (the hybrid first); h2load offers only `group`, so every connection that
/// succeeded negotiated it. The rounds of one server and chain take turns with the other group's.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServerLoad {
    /// The server's name in servers/ ("nginx") and its version as its binary prints it.
    pub server: String,
    pub version: String,
    /// The groups the server was configured with, in its order, and the one h2load offered.
    pub server_groups: Vec<String>,
    pub group: String,
    pub auth: String,
    /// h2load's `--version` ("h2load nghttp2/1.64.0") and the protocol it reported.
    pub tool: String,
    pub tls_version: String,
    pub connections: usize,
    pub rounds: Vec<ServerLoadRound>,
    /// The server's memory with connections of this group and chain held open, after the rounds
    /// (`None` where they could not be held).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<Held>,
}

/// An SSH server's memory with connections of one key exchange held open: each connection its
/// key exchange and a refused `none` authentication on russh's client, then idle (sshd keeps it
/// for its LoginGraceTime), so that the figure is what a connection costs the server up to
/// login, where the key exchange's method is the one difference.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ServerHeld {
    /// The server's name in servers/ ("sshd") and its version as its binary prints it.
    pub server: String,
    pub version: String,
    /// The methods the server was configured with, in its order, and the one the client offered.
    pub server_groups: Vec<String>,
    pub group: String,
    /// The host key's algorithm.
    pub auth: String,
    pub held: Held,
}

/// A lab server's memory at each count of idle connections held open (0 first), each connection
/// a handshake and one request on pqprof's OpenSSL client (a TLS server's) or a key exchange on
/// russh's (an SSH server's, `ServerHeld`): the resident and proportional set
/// sizes of every process of the server (from /proc/PID/smaps_rollup; the proportional one
/// shares the pages nginx's master and worker share). Kernel socket memory is not in them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Held {
    pub connections: Vec<usize>,
    /// The established connections on the server's port at each step (its side of each, from
    /// /proc/net/tcp): the evidence that the server still held every one.
    pub established: Vec<usize>,
    pub rss_bytes: Vec<u64>,
    pub pss_bytes: Vec<u64>,
}

/// One h2load run: its own elapsed time ("finished in"), its counts, and what the server's
/// processes spent meanwhile (their CPU read before h2load started and after it ended).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ServerLoadRound {
    /// The turn it ran in among the server's rounds of both groups.
    pub turn: usize,
    pub elapsed_ns: u64,
    pub succeeded: u64,
    pub failed: u64,
    pub server_cpu_ns: u64,
}
