//! The command line (clap).

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "pqprof",
    version,
    about = "What a hybrid or post-quantum TLS 1.3 / SSH key exchange costs on this machine, phase by phase"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure every phase of the suites and write the results JSON.
    Run(RunArgs),
    /// List suites, algorithms, backends and what each backend supports.
    List {
        /// Suite file or folder.
        #[arg(long, default_value = "suites")]
        suites: PathBuf,
    },
    /// Validate results files (schema, statistics against the raw samples, the identity) and,
    /// with --site, a rendered site against its JSON.
    Check {
        /// Results files.
        files: Vec<PathBuf>,
        /// A rendered site folder to check as well.
        #[arg(long)]
        site: Option<PathBuf>,
        /// Resample every suite's composed interval (tens of seconds for a default run), not
        /// only the cheap ones and a sample of the full handshakes.
        #[arg(long)]
        full: bool,
        /// The seed that picks the sampled full handshakes (default: a new one each time, printed
        /// so a check can be repeated).
        #[arg(long, conflicts_with = "full")]
        seed: Option<u64>,
    },
    /// Compare two runs: every phase and suite in both, ratio B/A with its interval and a verdict.
    Compare {
        a: PathBuf,
        b: PathBuf,
        /// table, md or json.
        #[arg(long, value_parser = compare_format, default_value = "table")]
        format: crate::comparison::Format,
        /// Changes below this percentage are called noise even when the interval excludes 1
        /// (back-to-back runs differ by up to ~4% on a 2-core shared VM; see smoke/reliability.sh).
        #[arg(long, default_value_t = crate::comparison::DEFAULT_NOISE_FLOOR_PCT)]
        threshold: f64,
        /// Write here instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// A section of a run, or a probe, as JSON, CSV or Markdown: the figures its page shows,
    /// units in the column names, intervals as two columns, one row per scenario.
    Export {
        /// A results file, or a probe's (results/probes/*.json).
        file: PathBuf,
        /// json, csv or md.
        #[arg(long, value_parser = export_format)]
        format: crate::export::Format,
        /// answer, handshakes, capacity, network, composition, phases or suites (repeatable:
        /// phases and suites share their columns); default phases and suites. A probe's file
        /// has one section, probe.
        #[arg(long = "section", value_parser = export_section)]
        sections: Vec<crate::export::Section>,
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// League tables: every backend's phases against the fastest measured in the run and the best
    /// published cycle count (references/cycles.toml, compiled in).
    League {
        /// Results file (default: the newest in results/, .json or .json.gz).
        file: Option<PathBuf>,
    },
    /// Spread of every composed median across runs of the same measurement (reliability), and how
    /// often one run's intervals held the other runs' phase medians (coverage).
    Spread(SpreadArgs),
    /// Cross-check against liboqs's speed tools, openssl speed and published reference cycles;
    /// adds a `crosscheck` section to the results file.
    Crosscheck(CrosscheckArgs),
    /// Real handshakes on loopback with every registered stack, beside the composed figures;
    /// adds a `handshakes` section to the results file.
    #[command(about = handshake_about())]
    Handshake(HandshakeArgs),
    /// Server capacity: in-memory handshakes per core, throughput and latency under load over
    /// loopback, memory per held connection; adds a `capacity` section to the results file.
    Capacity(CapacityArgs),
    /// Handshakes through an emulated network (client, router and server namespaces; delay and
    /// loss in user space on NFQUEUE) on a grid of RTT and loss; adds a `network` section.
    Network(NetworkArgs),
    /// Memory per operation: peak heap and peak stack bytes of one call of every KEM, DH and
    /// signature phase, per backend of the results file; adds a `memory` section.
    Memory(MemoryArgs),
    /// One backend's part of `memory`, started by it as a child process.
    #[command(hide = true)]
    MemoryChild(MemoryChildArgs),
    /// The emulator of `network`, started by it in the router namespace.
    #[command(hide = true)]
    NetemRouter {
        #[arg(long, default_value = "r-c")]
        client_if: String,
    },
    /// The server side of `capacity`, started by it as a child process.
    #[command(hide = true)]
    CapacityServer(CapacityServerArgs),
    /// The server side of `handshake`, started by it as a child process.
    #[command(hide = true)]
    HandshakeServer(HandshakeServerArgs),
    /// A server of servers/ (nginx, HAProxy, ...) in the lab root, started by `handshake` as a
    /// child process.
    #[command(hide = true)]
    LabServer(LabServerArgs),
    /// Ask a TLS 1.3 endpoint (HOST[:PORT]) which key-exchange groups it takes, whether it
    /// retries, how big its flights are against TCP's initial window, and what X25519MLKEM768
    /// adds to its handshake's latency; one connection at a time, at most --rate a second.
    /// Writes a new file in results/probes/.
    Probe(ProbeArgs),
    /// A server of one of pqprof's stacks with a fresh chain, for `probe` to ask (its tests).
    #[command(hide = true)]
    ProbeTarget(ProbeTargetArgs),
    /// `probe` through the emulated network: a server of one stack behind a link of --rtt-ms,
    /// probed from the client namespace (root; its tests hold the window verdicts to it).
    #[command(hide = true)]
    ProbeEmulated(ProbeEmulatedArgs),
    /// Render the static site from results files.
    Render(RenderArgs),
    /// Print a fresh default results path (results/<host>-<UTC time>-<host fingerprint>.json.gz).
    #[command(hide = true)]
    ResultsPath {
        #[command(flatten)]
        emulation: EmulationArgs,
    },
    /// Print the OpenSSL this binary links ("OpenSSL 3.5.5 27 Jan 2026"; tools/openssl4.sh).
    #[command(hide = true)]
    OpensslVersion,
    /// One phase's counted calls, run by `run --counter instructions` under valgrind.
    #[command(hide = true)]
    CountPhase(CountPhaseArgs),
}

/// `pqprof crosscheck`'s arguments.
#[derive(Debug, Args)]
pub struct CrosscheckArgs {
    /// Results file to add the section to (default: the newest in results/, .json or .json.gz).
    #[arg(long)]
    pub(crate) results: Option<PathBuf>,
    #[arg(long, default_value = "references/cycles.toml")]
    pub(crate) references: PathBuf,
    /// Seconds per tool run (whole seconds: speed_kem's unit).
    #[arg(long, default_value_t = 1)]
    pub(crate) duration: u64,
    /// Alternating rounds (ours, theirs, ours, theirs, ...) before any verdict is final.
    #[arg(long, default_value_t = 5)]
    pub(crate) rounds: usize,
    /// Rounds a tool run may go on to while one of its phases is still undecided (its 95%
    /// interval straddles the tolerance); `--max-rounds` equal to `--rounds` fixes the count.
    #[arg(long, default_value_t = 15)]
    pub(crate) max_rounds: usize,
    /// Only the tool runs of these algorithms (repeatable; default all).
    #[arg(long = "only")]
    pub(crate) only: Vec<String>,
    /// Agreement tolerance between the two means, percent.
    #[arg(long, default_value_t = 5.0)]
    pub(crate) tolerance: f64,
    /// Exit non-zero when any phase disagrees.
    #[arg(long)]
    pub(crate) strict: bool,
    /// Skip openssl speed (building the openssl app takes about 5 minutes the first time).
    #[arg(long)]
    pub(crate) no_openssl: bool,
    /// Replace a crosscheck section the results file already has.
    #[arg(long)]
    pub(crate) force: bool,
}

/// `pqprof handshake`'s arguments.
#[derive(Debug, Args)]
pub struct HandshakeArgs {
    /// Results file to add the section to (default: the newest in results/, .json or .json.gz).
    #[arg(long)]
    pub(crate) results: Option<PathBuf>,
    #[arg(long, default_value = "suites")]
    pub(crate) suites: PathBuf,
    /// First rounds every scenario gets, each a round of all of them in turn (the order
    /// rotated between rounds; at least 4 where --budget-s cannot hold them all); seed 000
    /// used 20 x 100.
    #[arg(long, default_value_t = 12, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub(crate) samples: u32,
    /// Then more rounds of the scenarios whose median's 95% half-width is wider than this,
    /// percent, the widest first.
    #[arg(long, default_value_t = 1.0)]
    pub(crate) precision: f64,
    /// The most samples a scenario gets.
    #[arg(long, default_value_t = 120, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub(crate) max_samples: u32,
    /// The step's time, seconds, from the process's start to its end: set-up, the first rounds
    /// (which stop after 4 where they would leave less than 35% of it), the timers' paired cost
    /// and the precision rounds in what is left, the answer table's scenarios first, and 2% kept
    /// for closing (the servers' stats, stopping them, writing) (0: exactly --samples, no
    /// precision rounds).
    #[arg(long, default_value_t = 90)]
    pub(crate) budget_s: u64,
    /// Handshakes per sample. A difference's interval is over rounds (the host's speed moves
    /// between them), so shorter rounds buy more of them: on the noisy Zen 5 VM (2026-12-02,
    /// `tools/noise.sh`, two runs each) 50 a round with up to 120 rounds put 7 of the answer's
    /// 7 differences within target in both runs, 100 with up to 60 put 6 of 7.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub(crate) per_sample: u32,
    /// Replace a handshakes section the results file already has.
    #[arg(long)]
    pub(crate) force: bool,
    /// Only these stacks (repeatable; default every stack).
    #[arg(long = "stack", value_parser = stacks(|_| true))]
    pub(crate) stacks: Vec<String>,
}

/// `pqprof capacity`'s arguments.
#[derive(Debug, Args)]
pub struct CapacityArgs {
    /// Results file to add the section to (default: the newest in results/, .json or .json.gz).
    #[arg(long)]
    pub(crate) results: Option<PathBuf>,
    /// Replace a capacity section the results file already has.
    #[arg(long)]
    pub(crate) force: bool,
    /// A short form (CI): fewer rounds, two load steps, up to 1,000 held connections.
    #[arg(long)]
    pub(crate) quick: bool,
    /// Only these stacks (repeatable; default every stack with a capacity measurement: in memory, and over sockets where it has a capacity server; and every server of servers/ from the lab root: TLS ones under h2load, each one's memory with connections held).
    #[arg(long = "stack", value_parser = stacks(|f| f.capacity || f.in_memory || f.under_load))]
    pub(crate) stacks: Vec<String>,
    /// Suite folder or file: the groups' names and the authentications (auth.toml) to pair.
    #[arg(long, default_value = "suites")]
    pub(crate) suites: PathBuf,
    /// Connections held at each memory step (repeatable; default 100, 1000, 10000).
    #[arg(long = "connections", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub(crate) connections: Vec<u32>,
    /// The whole step's time, seconds, from the process's start, 2% of it kept for closing (0:
    /// the fixed design). The in-memory and socket measurements shrink their timed spans to
    /// their shares of it, and the memory steps leave out their largest where the time left
    /// will not hold it; the section says so.
    #[arg(long, default_value_t = 0)]
    pub(crate) budget_s: u64,
}

/// `pqprof network`'s arguments.
#[derive(Debug, Args)]
pub struct NetworkArgs {
    /// Results file to add the section to (default: the newest in results/, .json or .json.gz).
    #[arg(long)]
    pub(crate) results: Option<PathBuf>,
    /// Replace a network section the results file already has.
    #[arg(long)]
    pub(crate) force: bool,
    /// default (RTT 5.6, 78.7 ms x loss 0, 1, 5, 20%), paquin (4 RTTs x 25 losses), quick (CI).
    #[arg(long, default_value = "default")]
    pub(crate) grid: String,
    /// Handshakes per scenario and point (at most; see --cell-seconds): four times as many at
    /// the zero point, six times at 0% and 1% loss.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub(crate) per_point: u32,
    /// A scenario's point starts only the handshakes whose slot falls within this many
    /// seconds of its first (at the zero point, back to back: until this many seconds have
    /// passed), and at least 10 (0: all those --per-point asks for). Those started finish,
    /// so the sample is not biased.
    #[arg(long, default_value_t = 2.0)]
    pub(crate) cell_seconds: f64,
    /// The whole step's time, seconds, from the process's start, 2% of it kept for closing (0:
    /// none): each cell then gets at most an even share of what is left, fewer handshakes where
    /// the time is short (each cell records its count and interval).
    #[arg(long, default_value_t = 0)]
    pub(crate) budget_s: u64,
    /// The most handshakes of a cell in flight at once (its client threads; see --load-pct;
    /// with more, the emulator released packets later at 78.7 ms). The next cell of the point
    /// starts while the last of these finish.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub(crate) parallel: u32,
    /// The endpoints' offered load, percent of one core: a cell starts a handshake every
    /// zero-point median / load, so no handshake waits for another's compute (2 cores, shared
    /// with the router). At 25% the 5.6 ms cells of rustls and quinn read up to 0.4 ms over
    /// their model, at 10% or less within 0.25 ms (Xeon model 207, #38).
    #[arg(long, default_value_t = 10.0)]
    pub(crate) load_pct: f64,
    /// Bottleneck rate, Mbit/s (tbf on the router's egress); unlimited by default.
    #[arg(long)]
    pub(crate) rate_mbit: Option<f64>,
    /// Every TLS group, not only X25519 and X25519MLKEM768.
    #[arg(long)]
    pub(crate) all_groups: bool,
    /// Every authentication of suites/auth.toml at every point, not only at 0% and 5% loss.
    #[arg(long)]
    pub(crate) all_auths: bool,
    /// Only these stacks (repeatable; default every stack that runs through the emulated network).
    #[arg(long = "stack", value_parser = stacks(|f| f.network))]
    pub(crate) stacks: Vec<String>,
    /// Suite folder or file: the groups' names and the authentications (auth.toml) to pair.
    #[arg(long, default_value = "suites")]
    pub(crate) suites: PathBuf,
    /// Only remove namespaces a killed run left behind, then exit.
    #[arg(long)]
    pub(crate) cleanup: bool,
}

/// `pqprof memory`'s arguments.
#[derive(Debug, Args)]
pub struct MemoryArgs {
    /// Results file to add the section to (default: the newest in results/, .json or .json.gz).
    #[arg(long)]
    pub(crate) results: Option<PathBuf>,
    /// Replace a memory section the results file already has.
    #[arg(long)]
    pub(crate) force: bool,
    /// Probed calls per phase (their stack figures must agree).
    #[arg(long, default_value_t = crate::memory::CALLS as u32, value_parser = clap::value_parser!(u32).range(2..=100))]
    pub(crate) calls: u32,
    /// Backend child processes at a time (default: the machine's cores, at most 2).
    #[arg(long)]
    pub(crate) jobs: Option<usize>,
    /// Only these algorithms (repeatable; default every KEM, DH and signature algorithm).
    #[arg(long = "algorithm")]
    pub(crate) algorithms: Vec<String>,
}

/// `pqprof render`'s arguments.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// Results files, or folders of them (each folder's *.json and *.json.gz, not its subfolders).
    #[arg(required = true)]
    pub(crate) files: Vec<PathBuf>,
    /// Every run on the front page and the compare page, not only the newest complete run of
    /// each machine.
    #[arg(long)]
    pub(crate) all: bool,
    /// Site folder.
    #[arg(long, default_value = "site")]
    pub(crate) out: PathBuf,
    /// Link to the tool's source, with {commit} for the run's commit
    /// (for example https://example.org/pqprof/tree/{commit}).
    #[arg(long)]
    pub(crate) source_url: Option<String>,
    /// The run every other is compared with on the compare page (default: the oldest).
    #[arg(long)]
    pub(crate) baseline: Option<PathBuf>,
}

/// `pqprof count-phase`'s arguments.
#[derive(Debug, Args)]
pub struct CountPhaseArgs {
    #[arg(long)]
    pub(crate) backend: String,
    #[arg(long)]
    pub(crate) algorithm: String,
    #[arg(long)]
    pub(crate) operation: String,
    #[arg(long, value_parser = ["handshake", "primitive"])]
    pub(crate) form: String,
    #[arg(long)]
    pub(crate) calls: usize,
    #[arg(long, default_value_t = 0)]
    pub(crate) payload: usize,
    #[arg(long, default_value_t = 0)]
    pub(crate) aad: usize,
}

/// `pqprof handshake-server`'s arguments.
#[derive(Debug, Args)]
pub struct HandshakeServerArgs {
    #[arg(long)]
    pub(crate) stack: String,
    #[arg(long)]
    pub(crate) group: String,
    /// The identity's folder (chain, key, root; see stack::identity::Files).
    #[arg(long)]
    pub(crate) identity: PathBuf,
    /// Time every crypto call of each connection and report it with `stats`.
    #[arg(long)]
    pub(crate) insitu: bool,
    /// Address to listen on (the network grid's server namespace).
    #[arg(long, default_value = "127.0.0.1")]
    pub(crate) bind: std::net::IpAddr,
    /// A thread (SSH: a task) per connection instead of one connection at a time.
    #[arg(long)]
    pub(crate) concurrent: bool,
    /// Socket timeouts, seconds.
    #[arg(long, default_value_t = 5)]
    pub(crate) timeout_s: u64,
    /// The handshakes' mode (`Mode::name`): `resumed` issues a TLS 1.3 ticket per connection and
    /// resumes the connections that offer one; QUIC's `token` sends NEW_TOKEN tokens and accepts
    /// them, `retry` answers each first Initial with a Retry.
    #[arg(long, default_value = "full", value_parser = parse_mode)]
    pub(crate) mode: crate::results::Mode,
}

/// `pqprof probe`'s arguments.
#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// The endpoint: HOST, HOST:PORT or [IPv6]:PORT (port 443 by default; an IPv6 address
    /// without brackets is the address alone).
    pub(crate) target: String,
    /// The server name to send and verify (default: the host).
    #[arg(long)]
    pub(crate) sni: Option<String>,
    /// Trusted roots, PEM or DER (default: /etc/ssl/certs/ca-certificates.crt).
    #[arg(long, conflicts_with = "insecure")]
    pub(crate) ca: Option<PathBuf>,
    /// Do not verify the chain (the report says so); the CertificateVerify is still checked.
    #[arg(long)]
    pub(crate) insecure: bool,
    /// Connections started per second, at most.
    #[arg(long, default_value_t = 5.0)]
    pub(crate) rate: f64,
    /// Connections in all, at most.
    #[arg(long, default_value_t = 300)]
    pub(crate) max_connections: usize,
    /// Paired latency rounds (X25519 and X25519MLKEM768, one handshake each), at most.
    #[arg(long, default_value_t = 60)]
    pub(crate) rounds: usize,
    /// Seconds to wait for the server at each step.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=600))]
    pub(crate) timeout_s: u64,
    /// The probe's file (default: a new file in results/probes/, named after the host, port and
    /// time); never overwritten.
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
}

/// `pqprof probe-emulated`'s arguments.
#[derive(Debug, Args)]
pub struct ProbeEmulatedArgs {
    #[arg(long)]
    pub(crate) rtt_ms: f64,
    #[arg(long, default_value = "rustls")]
    pub(crate) stack: String,
    #[arg(long, default_value = "X25519MLKEM768")]
    pub(crate) group: String,
    #[arg(long, default_value = "ECDSA-P256")]
    pub(crate) auth: String,
    #[arg(long, default_value_t = 4)]
    pub(crate) rounds: usize,
    #[arg(long)]
    pub(crate) out: PathBuf,
}

/// `pqprof probe-target`'s arguments.
#[derive(Debug, Args)]
pub struct ProbeTargetArgs {
    /// One of pqprof's stacks ("rustls"), or a server file of servers/ ("servers/nginx.toml").
    #[arg(long)]
    pub(crate) stack: String,
    /// The group it takes; a server file takes a list ("X25519MLKEM768,X25519").
    #[arg(long)]
    pub(crate) group: String,
    /// The authentication of suites/auth.toml whose chain it serves.
    #[arg(long, default_value = "ECDSA-P256")]
    pub(crate) auth: String,
}

/// `pqprof lab-server`'s arguments.
#[derive(Debug, Args)]
pub struct LabServerArgs {
    /// The server file (servers/nginx.toml).
    #[arg(long)]
    pub(crate) server: PathBuf,
    #[arg(long)]
    pub(crate) group: String,
    /// The identity's folder (chain.pem and key.pem; see stack::identity::Files).
    #[arg(long)]
    pub(crate) identity: PathBuf,
    #[arg(long, default_value = "127.0.0.1")]
    pub(crate) bind: std::net::IpAddr,
    #[arg(long, default_value = "full", value_parser = parse_mode)]
    pub(crate) mode: crate::results::Mode,
}

/// `pqprof capacity-server`'s arguments.
#[derive(Debug, Args)]
pub struct CapacityServerArgs {
    #[arg(long)]
    pub(crate) stack: String,
    #[arg(long)]
    pub(crate) group: String,
    /// The identity's folder (chain, key, root; see stack::identity::Files).
    #[arg(long)]
    pub(crate) identity: PathBuf,
    #[arg(long, default_value_t = 1)]
    pub(crate) threads: usize,
    #[arg(long)]
    pub(crate) hold: bool,
    #[arg(long)]
    pub(crate) core: Option<usize>,
}

/// `pqprof spread`'s arguments.
#[derive(Debug, Args)]
pub struct SpreadArgs {
    #[arg(required = true, num_args = 2..)]
    pub(crate) files: Vec<PathBuf>,
}

/// `pqprof memory-child`'s arguments.
#[derive(Debug, Args)]
pub struct MemoryChildArgs {
    #[arg(long)]
    pub(crate) backend: String,
    #[arg(long)]
    pub(crate) calls: usize,
    #[arg(long = "algorithm")]
    pub(crate) algorithms: Vec<String>,
    #[arg(long = "operation")]
    pub(crate) operations: Vec<String>,
}

/// The registered stacks with a feature, as `--stack` values.
/// `pqprof handshake`'s one-line help, naming the stacks from the registry (a list written by
/// hand named three of six once the registry had grown).
fn handshake_about() -> String {
    let stacks: Vec<String> = crate::stack::all()
        .iter()
        .map(|s| {
            let kind = match (s.protocol(), s.transport()) {
                ("ssh", _) => "SSH",
                (_, crate::results::Transport::Quic) => "TLS 1.3 over QUIC",
                _ => "TLS 1.3",
            };
            format!("{} ({kind})", s.name())
        })
        .collect();
    format!(
        "Real handshakes on loopback with every registered stack: {}; beside the composed \
         figures, into a `handshakes` section of the results file",
        stacks.join(", ")
    )
}

fn stacks(with: fn(&crate::stack::Features) -> bool) -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(crate::stack::names(with))
}

fn compare_format(s: &str) -> Result<crate::comparison::Format, String> {
    use crate::comparison::Format;
    match s {
        "table" => Ok(Format::Table),
        "md" => Ok(Format::Md),
        "json" => Ok(Format::Json),
        _ => Err("one of: table, md, json".into()),
    }
}

fn export_format(s: &str) -> Result<crate::export::Format, String> {
    crate::export::Format::named(s).ok_or_else(|| "one of: json, csv, md".into())
}

fn export_section(s: &str) -> Result<crate::export::Section, String> {
    crate::export::Section::named(s).ok_or_else(|| {
        let names: Vec<&str> = crate::export::Section::all().map(|s| s.name()).collect();
        format!("one of: {}", names.join(", "))
    })
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Suite file or folder of suite files.
    #[arg(long, default_value = "suites")]
    pub(crate) suites: PathBuf,
    /// The same iteration count for every phase, in total over the --samples processes, and no
    /// precision batches (default: 1,000, fewer for phases over the budget, then more processes
    /// while a phase is wider than --precision).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub(crate) iterations: Option<u32>,
    /// Results file (default: results/<host>-<UTC time>-<host fingerprint>.json.gz, gzip'd; a name
    /// ending in .json is written as plain JSON); an existing file
    /// is never replaced unless --force.
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Replace the --out file if it exists.
    #[arg(long)]
    pub(crate) force: bool,
    /// Time budget per phase in milliseconds: slower phases get fewer iterations (at least 10).
    #[arg(long, default_value_t = 2000)]
    pub(crate) budget_ms: u64,
    /// Rounds each phase's iterations are split into, run in turn with every other phase.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub(crate) rounds: u32,
    /// Measure only these backends (repeatable; default every backend and the Go peer).
    #[arg(long = "backend", value_parser = clap::builder::PossibleValuesParser::new(crate::backend::cli_names()))]
    pub(crate) backends: Vec<String>,
    /// Independent processes every phase is measured in at least (each with a K-th of the
    /// iterations and budget, the phase order rotated between them; a phase whose calls take
    /// seconds, on its 10-call floor, in the first 3 only); more follow for the phases still
    /// wider than --precision while --budget-s lasts. 1: one process, no precision batches.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=12))]
    pub(crate) samples: u32,
    /// The 95% half-width, percent of the median, every phase is measured towards.
    #[arg(long, default_value_t = 1.0)]
    pub(crate) precision: f64,
    /// The step's time, in seconds, from the process's start: measuring, precision batches
    /// included, then pooling and checking (their time is timed on the first process and kept
    /// for them), and 2% kept for writing (0: no limit but 12 processes per phase).
    #[arg(long, default_value_t = 120)]
    pub(crate) budget_s: u64,
    /// Start the round-robin at this phase (set by --samples for each child).
    #[arg(long, default_value_t = 0, hide = true)]
    pub(crate) rotate: usize,
    /// Only the phases named in this file, one per line (a precision batch's child).
    #[arg(long, hide = true)]
    pub(crate) only: Option<PathBuf>,
    /// A child's iterations per phase when the phase fits its budget (set by --samples).
    #[arg(long, hide = true)]
    pub(crate) worker_iterations: Option<usize>,
    /// A child's fewest iterations for a slow phase (set by --samples).
    #[arg(long, hide = true)]
    pub(crate) worker_floor: Option<usize>,
    /// A child's warm-up per phase, milliseconds (set by --samples: 10).
    #[arg(long, hide = true)]
    pub(crate) worker_warmup_ms: Option<u64>,
    /// No progress bar.
    #[arg(long)]
    pub(crate) quiet: bool,
    /// Also count each phase's instructions: `instructions` (callgrind; under --emulator, qemu's
    /// counting plugin, and nothing is timed).
    #[arg(long, value_parser = ["instructions"])]
    pub(crate) counter: Option<String>,
    #[command(flatten)]
    pub(crate) emulation: EmulationArgs,
}

/// A run under qemu-user (tools/aarch64 starts one): the results are marked emulated and carry
/// instruction counts only.
#[derive(Debug, Args)]
pub struct EmulationArgs {
    /// The qemu-aarch64 this process runs under; counting children run under it too.
    #[arg(long, requires = "emulated_cpu")]
    pub(crate) emulator: Option<PathBuf>,
    /// The -cpu model it was started with (neoverse-n1, neoverse-v1): checked against the CPU this
    /// process sees.
    #[arg(long, requires = "emulator")]
    pub(crate) emulated_cpu: Option<String>,
    /// qemu's counting plugin (libpqcount.so, built by tools/aarch64/build-qemu.sh).
    #[arg(long, requires = "emulator")]
    pub(crate) qemu_plugin: Option<PathBuf>,
}

impl EmulationArgs {
    pub(crate) fn emulator(&self) -> Option<crate::emulator::Emulator> {
        Some(crate::emulator::Emulator {
            qemu: self.emulator.clone()?,
            cpu: self.emulated_cpu.clone()?,
            plugin: self.qemu_plugin.clone(),
        })
    }
}

/// A mode by its name in files (`Mode::named`).
fn parse_mode(s: &str) -> Result<crate::results::Mode, String> {
    crate::results::Mode::named(s).ok_or_else(|| format!("no handshake mode is named {s:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn the_handshake_help_names_every_registered_stack() {
        let mut cli = Cli::command();
        let help = cli
            .find_subcommand_mut("handshake")
            .expect("a handshake command")
            .render_help()
            .to_string();
        for stack in crate::stack::all() {
            assert!(
                help.contains(stack.name()),
                "{} not in: {help}",
                stack.name()
            );
        }
        assert!(help.contains("quinn (TLS 1.3 over QUIC)") && help.contains("russh (SSH)"));
        let top = cli.render_help().to_string();
        assert!(top.contains("quic-go"), "{top}");
    }
}
