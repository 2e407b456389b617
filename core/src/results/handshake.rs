//! The `handshakes` section (`pqprof handshake`): real loopback handshakes beside the composed figures.

use serde::{Deserialize, Serialize};

/// A real client/server library a handshake runs on, by the name its implementation is registered
/// under ("rustls", "openssl", "russh", "go"). The stacks themselves live in the measuring crate
/// (`src/stack/`, one file each, one registry); results only name them, so a new stack needs no
/// change here.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RealStack(String);

impl RealStack {
    pub fn new(name: &str) -> RealStack {
        RealStack(name.into())
    }

    pub fn name(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for RealStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What an in-situ call was: one label per kind of crypto call a stack's hooks time. A stack
/// reports the halves of a hybrid group (`kem.*`, `dh.*`) where it sees them apart (rustls) and the
/// whole key share (`kx.*`) where the library makes it in one call (libssl); HKDF calls it cannot
/// tell apart are `kdf.derive`. Stored by name (`labels`); a record indexes by `as usize`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CallLabel {
    KemKeygen,
    KemEncaps,
    KemDecaps,
    DhKeygen,
    DhDerive,
    KxKeygen,
    KxImport,
    KxEncaps,
    KxDecaps,
    SigSign,
    SigVerify,
    SigVerifyCert,
    KdfExtract,
    KdfExpand,
    KdfDerive,
    MacCompute,
    HashUpdate,
    HashFinish,
    AeadKey,
    AeadSeal,
    AeadOpen,
}

impl CallLabel {
    pub const COUNT: usize = 21;
    pub const ALL: [CallLabel; CallLabel::COUNT] = [
        CallLabel::KemKeygen,
        CallLabel::KemEncaps,
        CallLabel::KemDecaps,
        CallLabel::DhKeygen,
        CallLabel::DhDerive,
        CallLabel::KxKeygen,
        CallLabel::KxImport,
        CallLabel::KxEncaps,
        CallLabel::KxDecaps,
        CallLabel::SigSign,
        CallLabel::SigVerify,
        CallLabel::SigVerifyCert,
        CallLabel::KdfExtract,
        CallLabel::KdfExpand,
        CallLabel::KdfDerive,
        CallLabel::MacCompute,
        CallLabel::HashUpdate,
        CallLabel::HashFinish,
        CallLabel::AeadKey,
        CallLabel::AeadSeal,
        CallLabel::AeadOpen,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CallLabel::KemKeygen => "kem.keygen",
            CallLabel::KemEncaps => "kem.encaps",
            CallLabel::KemDecaps => "kem.decaps",
            CallLabel::DhKeygen => "dh.keygen",
            CallLabel::DhDerive => "dh.derive",
            CallLabel::KxKeygen => "kx.keygen",
            CallLabel::KxImport => "kx.import",
            CallLabel::KxEncaps => "kx.encaps",
            CallLabel::KxDecaps => "kx.decaps",
            CallLabel::SigSign => "sig.sign",
            CallLabel::SigVerify => "sig.verify",
            CallLabel::SigVerifyCert => "sig.verify.cert",
            CallLabel::KdfExtract => "kdf.extract",
            CallLabel::KdfExpand => "kdf.expand",
            CallLabel::KdfDerive => "kdf.derive",
            CallLabel::MacCompute => "mac.compute",
            CallLabel::HashUpdate => "hash.update",
            CallLabel::HashFinish => "hash.finish",
            CallLabel::AeadKey => "aead.key",
            CallLabel::AeadSeal => "aead.seal",
            CallLabel::AeadOpen => "aead.open",
        }
    }

    pub fn from_name(s: &str) -> Option<CallLabel> {
        CallLabel::ALL.into_iter().find(|l| l.name() == s)
    }

    /// Every label's name, in `ALL`'s order: an in-situ section's `labels`.
    pub fn names() -> Vec<String> {
        CallLabel::ALL
            .iter()
            .map(|l| l.name().to_string())
            .collect()
    }
}

impl std::fmt::Display for CallLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What one call of a label does in phase terms, as the stack that recorded it declares it
/// (schema 3): the phase operations the call is (one for a call of one phase, several for
/// libssl's whole hybrid key share), and the label whose time is added to it where a side makes
/// both as often (libssl sets the peer's share apart, `kx.import`; the phases count that in the
/// encapsulation or the derive).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallPhases {
    pub label: String,
    pub operations: Vec<super::Operation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub with: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Handshakes {
    pub date_utc: String,
    pub wall_seconds: f64,
    pub samples: usize,
    pub per_sample: usize,
    pub scenarios: Vec<Scenario>,
    pub failures: Vec<String>,
    /// What deserves caution (a stack not measured, a group a stack does not negotiate); before
    /// typed warnings also what is and is not counted, in words.
    pub notes: Vec<super::Warning>,
    /// What one in-situ timed call costs beyond the call (an armed timer around an empty call,
    /// median of batches, in the client process), nanoseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insitu_call_cost_ns: Option<f64>,
    /// Files from 2026-12-02 on: the paired design. In every round the scenarios of one stack
    /// (plain, or in situ) take turns this many connections at a time, the order turning every
    /// block, and a scenario's difference from the one it is against is taken from the paired
    /// blocks in `delta_form` (`figures::handshake::paired_connections`). Absent: each
    /// scenario made its round's connections back to back, and `measured_delta_ns` is the
    /// difference of the two medians.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair_block: Option<usize>,
    /// How the paired design's differences are taken from the connections (`DeltaForm`).
    #[serde(default, skip_serializing_if = "DeltaForm::is_absolute")]
    pub delta_form: DeltaForm,
    /// The handshakes of the other modes (files from 2026-12-02 on, #34): resumed, with two key
    /// shares, and after a HelloRetryRequest. Measured in the same rounds as the full ones, each paired with the scenario of
    /// its own mode it is against; kept apart so that every figure of the full handshake reads
    /// full handshakes only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_modes: Vec<Scenario>,
}

/// How a file of the paired design (`Handshakes::pair_block`) takes a scenario's difference from
/// the one it is against (`figures::handshake::paired_connections`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeltaForm {
    /// Files of 2026-12-02 before the relative form: the median of the block-median differences,
    /// its interval a bootstrap over the blocks.
    #[default]
    Absolute,
    /// Each block's difference as a share of its baseline block, the median of those shares with
    /// its interval over the rounds and their blocks as a median's over rounds (the two-stage
    /// bootstrap, widened to the t-interval of the rounds' medians), times the baseline's median
    /// (#33): the host's speed, which moves from round to round, scales both blocks of a
    /// pair and cancels in their ratio, and the blocks of one round share that speed, so the
    /// interval resamples rounds.
    Relative,
}

impl DeltaForm {
    pub fn is_absolute(&self) -> bool {
        *self == DeltaForm::Absolute
    }
}

/// What carries a scenario's handshake (files from 2026-12-03 on; absent: TCP).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// TLS records over a TCP connection (SSH: its packets).
    #[default]
    Tcp,
    /// QUIC v1 over UDP (RFC 9000): the TLS handshake messages in CRYPTO frames (RFC 9001).
    Quic,
}

impl Transport {
    pub fn is_tcp(&self) -> bool {
        *self == Transport::Tcp
    }

    /// How a row names it.
    pub fn name(&self) -> &'static str {
        match self {
            Transport::Tcp => "TCP",
            Transport::Quic => "QUIC",
        }
    }
}

/// What a QUIC client saw of its connection's first flights, UDP payload bytes (RFC 9000).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QuicEvidence {
    /// The QUIC version the connection ran (1: RFC 9000).
    pub version: u32,
    /// The datagrams the client sent before it received anything (its Initial flight, each padded
    /// to at least 1,200 bytes, RFC 9000 section 14.1), and their bytes.
    pub client_initial_datagrams: u64,
    pub client_initial_bytes: u64,
    /// The smallest of those datagrams, bytes (files from 2026-12-03 03:00 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_initial_smallest: Option<u64>,
    /// The datagrams and bytes the client had received when its handshake completed (from the
    /// make run of 2026-12-04 13:20 on without a Retry packet's, not the handshake's flight;
    /// before, with it).
    pub server_datagrams: u64,
    pub server_bytes: u64,
    /// The client presented an address-validation token (NEW_TOKEN) from an earlier connection:
    /// its first Initial's token field was not empty.
    pub token: bool,
    /// The server answered the first Initial with a Retry packet, and the client sent its Initial
    /// again with the Retry's token (files from 2026-12-04 on).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub retry: bool,
    /// The client read every datagram waiting before it answered, so it acknowledged a burst at
    /// once (files from 2026-12-03 03:00 on; before, each datagram as it came): the server's
    /// window grows differently (`netmodel::quic_round_trips`).
    #[serde(default)]
    pub batched_acks: bool,
    /// Whose QUIC sent the server's flight (files before quic-go have quinn's only): its initial
    /// congestion window and timers are the model's (`netmodel::QuicSender::params`).
    #[serde(default, skip_serializing_if = "QuicSender::is_quinn")]
    pub sender: QuicSender,
}

/// A QUIC implementation whose sending the network model knows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QuicSender {
    /// quinn-proto 0.11.
    #[default]
    Quinn,
    /// quic-go 0.59.
    QuicGo,
}

impl QuicSender {
    pub fn is_quinn(&self) -> bool {
        *self == QuicSender::Quinn
    }

    /// The stack that sends this way (`TlsStack::name`).
    pub fn stack(&self) -> &'static str {
        match self {
            QuicSender::Quinn => "quinn",
            QuicSender::QuicGo => "quic-go",
        }
    }
}

impl QuicEvidence {
    /// What the server could send before the client's next flight validated its address, when
    /// it had no token: three times what it had received (RFC 9000 section 8.1; quinn sends one
    /// whole datagram more while any of it is left, so it may pass it by less than one).
    pub fn amplification_budget(&self) -> u64 {
        3 * self.client_initial_bytes
    }

    /// The server's flight was more than the budget, so part of it had to wait a round trip for
    /// the client's next flight (without a token). Within a datagram of the budget this is the
    /// model's reading (`netmodel::quic_round_trips`): the overshoot quinn allows depends on the
    /// sizes of the datagrams before it.
    pub fn amplification_limited(&self) -> bool {
        !self.address_validated() && self.server_bytes > self.amplification_budget()
    }

    /// The server knew the client's address before its first flight: by a token, or by the
    /// Retry's.
    pub fn address_validated(&self) -> bool {
        self.token || self.retry
    }
}

/// What kind of handshake a scenario makes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// A full handshake: no ticket offered, the certificate chain and CertificateVerify sent.
    #[default]
    Full,
    /// TLS 1.3 resumption with a ticket from the connection before (psk_dhe_ke, RFC 8446 §2.2):
    /// the key exchange stays, the certificate and its signature go.
    Resumed,
    /// A full handshake whose ClientHello offers the hybrid and X25519, with a key share for each,
    /// as Go 1.24+ and OpenSSL 3.5 do by default; the server accepts the hybrid.
    TwoShares,
    /// A full handshake after a HelloRetryRequest (RFC 8446 §4.1.4): the client's first ClientHello
    /// offers X25519 and then the hybrid with a key share for X25519 only, the server accepts the
    /// hybrid alone and asks again: a round trip and a key generation more.
    HelloRetry,
    /// The other direction (the FIPS case, rustls/rustls#2495): the client's first ClientHello
    /// offers the hybrid with its key share and X25519 without one, the server accepts X25519 alone
    /// and asks again; the scenario's group is X25519, set against X25519's share alone: the
    /// hybrid's key generation wasted and a round trip more.
    HelloRetryClassical,
    /// QUIC: a full handshake whose first Initial carries an address-validation token that a
    /// NEW_TOKEN frame of the connection before brought (RFC 9000 section 8.1.3), so the server's
    /// address check passes at once and its first flight is not held to three times what it
    /// received (section 8.1).
    Token,
    /// QUIC: a full handshake whose server answers the first Initial with a Retry packet (RFC 9000
    /// section 8.1.2): a round trip more, then the address is validated as with a token.
    Retry,
}

/// " (resumed, in situ)": what a scenario's name ends with for its mode and form.
pub fn mode_suffix(mode: Mode, instrumented: bool) -> String {
    match (mode.suffix(), instrumented) {
        ("", false) => String::new(),
        ("", true) => " (in situ)".into(),
        (m, false) => format!(" ({m})"),
        (m, true) => format!(" ({m}, in situ)"),
    }
}

impl Mode {
    pub fn is_full(&self) -> bool {
        *self == Mode::Full
    }

    /// Whether the server answers the first ClientHello with a HelloRetryRequest.
    pub fn retries(&self) -> bool {
        matches!(self, Mode::HelloRetry | Mode::HelloRetryClassical)
    }

    /// How a note names a stack's handshakes of this mode ("go after a HelloRetryRequest").
    pub fn described(&self) -> &'static str {
        match self {
            Mode::Full => "full handshakes",
            Mode::Resumed => "resumed handshakes",
            Mode::TwoShares => "with two key shares",
            Mode::HelloRetry => "after a HelloRetryRequest",
            Mode::HelloRetryClassical => "after a HelloRetryRequest to X25519",
            Mode::Token => "with a NEW_TOKEN token",
            Mode::Retry => "after a Retry",
        }
    }

    /// Whether the QUIC client's address is validated before the server's first flight (a token,
    /// or the Retry's), so no anti-amplification limit holds that flight.
    pub fn validates_address(&self) -> bool {
        matches!(self, Mode::Token | Mode::Retry)
    }

    /// Its name in files and on command lines ("hello_retry_classical").
    pub fn name(&self) -> &'static str {
        match self {
            Mode::Full => "full",
            Mode::Resumed => "resumed",
            Mode::TwoShares => "two_shares",
            Mode::HelloRetry => "hello_retry",
            Mode::HelloRetryClassical => "hello_retry_classical",
            Mode::Token => "token",
            Mode::Retry => "retry",
        }
    }

    /// Every mode.
    pub const ALL: [Mode; 7] = [
        Mode::Full,
        Mode::Resumed,
        Mode::TwoShares,
        Mode::HelloRetry,
        Mode::HelloRetryClassical,
        Mode::Token,
        Mode::Retry,
    ];

    /// The mode named `name` (`name`'s inverse).
    pub fn named(name: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == name)
    }

    /// How a scenario's name says it (" (resumed)"), empty for the full handshake.
    pub fn suffix(&self) -> &'static str {
        match self {
            Mode::Full => "",
            Mode::Resumed => "resumed",
            Mode::TwoShares => "two key shares",
            Mode::HelloRetry => "HelloRetryRequest",
            Mode::HelloRetryClassical => "HelloRetryRequest to X25519",
            Mode::Token => "NEW_TOKEN",
            Mode::Retry => "Retry",
        }
    }
}

/// What the first, unmeasured connection showed.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Evidence {
    pub version: String,
    /// Negotiated group (TLS) or key-exchange method (SSH).
    pub group: String,
    pub cipher: String,
    pub cert_key: String,
    pub resumed: bool,
    /// (code point, bytes) of the key_share in ClientHello / ServerHello.
    pub client_share: Option<(u16, usize)>,
    /// The server's first flight opened with a HelloRetryRequest (files from 2026-12-02 on).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hello_retry: bool,
    /// Every key share the ClientHello offered, in order (files from 2026-12-02 on): one, or two
    /// for a scenario of two key shares.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client_shares: Vec<(u16, usize)>,
    pub server_share: Option<(u16, usize)>,
    /// The SignatureScheme of the server's CertificateVerify, as the client saw it (schema 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheme: Option<u16>,
    /// The certificates the client received, DER bytes each, leaf first (schema 3).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chain_bytes: Vec<usize>,
    /// Bytes the client had received when its handshake completed: the server's first flight
    /// (ServerHello to Finished; a TLS 1.3 server sends nothing else before the client's Finished).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_flight_bytes: Option<u64>,
    /// The ClientHello's TLS record, bytes with its 5-byte header (files from 2026-12-02 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_hello_bytes: Option<u64>,
    /// QUIC scenarios: the client's Initial flight and the server's first flight as datagrams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quic: Option<QuicEvidence>,
    /// A server of servers/ (nginx, HAProxy): its name and version as its own binary printed
    /// them in the lab root ("nginx 1.26.3"); `None` for pqprof's own servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_software: Option<String>,
}

/// A scenario another is compared with: its group and authentication (by name).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Against {
    pub suite: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<String>,
}

/// The authentication a scenario's server presented (schema 3; before, a self-signed ECDSA P-256
/// certificate, which older files leave out).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuthInfo {
    /// Its name in suites/auth.toml ("ML-DSA-65", "ML-DSA-44 leaf").
    pub name: String,
    /// The signature algorithm of the certificates and the CertificateVerify.
    pub algorithm: String,
    /// "chain" (leaf + intermediate sent) or "leaf" (the leaf alone).
    pub form: String,
    /// The SignatureScheme the handshake must negotiate.
    pub scheme: u16,
    /// DER bytes of the certificates the server sends, leaf first, and of the root the client
    /// trusts.
    pub sent_bytes: Vec<usize>,
    pub root_bytes: usize,
    /// Bytes of padding in the leaf's private extension (suites/auth.toml's `padding`; 0, left
    /// out of the file: none): a size control, whose leaf `check` holds to at least this many
    /// bytes.
    #[serde(default, skip_serializing_if = "no_padding")]
    pub padding_bytes: usize,
}

fn no_padding(n: &usize) -> bool {
    *n == 0
}

#[cfg(test)]
impl Scenario {
    /// A scenario of `stack` and `suite` with no connections and every figure zero or absent:
    /// what a test fills in.
    pub(crate) fn bare(stack: &str, suite: &str) -> Scenario {
        let mem = serde_json::json!({"rust_allocs": 0.0, "rust_bytes": 0.0, "c_allocs": 0.0, "c_bytes": 0.0});
        serde_json::from_value(serde_json::json!({
            "protocol": "tls13", "suite": suite, "stack": stack,
            "evidence": {"version": "TLSv1_3", "group": suite, "cipher": "", "cert_key": "",
                         "resumed": false, "client_share": null, "server_share": null},
            "median_ns": 0.0, "p95_ns": 0.0, "ready_median_ns": 0.0, "sample_medians_ns": [],
            "rsd_pct": 0.0, "client_to_server_bytes": 0.0, "server_to_client_bytes": 0.0,
            "declared_wire_bytes": null, "client_cpu_ns": 0.0, "server_cpu_ns": 0.0,
            "client_mem": mem, "server_mem": mem, "vs_baseline_ratio": null,
            "measured_delta_ns": null, "composed_delta_ns": null
        }))
        .expect("a bare scenario reads")
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Scenario {
    pub protocol: String,
    pub suite: String,
    pub stack: RealStack,
    /// TLS: the certificate chain the server presented (schema 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<AuthInfo>,
    pub evidence: Evidence,
    /// Connect + handshake + 32-byte echo + close, per connection.
    pub median_ns: f64,
    pub p95_ns: f64,
    pub ready_median_ns: f64,
    pub sample_medians_ns: Vec<f64>,
    /// Relative standard deviation of the per-sample medians, percent.
    pub rsd_pct: f64,
    /// Each connection's total in the order made, nanoseconds (files from 2026-12-01 on): what
    /// the median, its interval and the sample medians are recomputed from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(with = "super::packed::u64s")]
    pub totals_ns: Vec<u64>,
    /// Connections in each sample, in order (with `totals_ns`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sample_sizes: Vec<usize>,
    /// The round each sample ran in: every scenario's k-th first sample in round k, the samples
    /// added for precision in later rounds, with the other scenarios still wider than the target.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sample_rounds: Vec<usize>,
    /// The median's 95% interval, the rounds resampled and then the connections within them
    /// (`figures::handshake::median_figures`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_ci95_ns: Option<(f64, f64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<super::Precision>,
    pub client_to_server_bytes: f64,
    pub server_to_client_bytes: f64,
    pub declared_wire_bytes: Option<usize>,
    /// The key shares the group declares, (client, server) bytes (schema 3): what `check` holds
    /// the evidence to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared_shares: Option<(usize, usize)>,
    pub client_cpu_ns: f64,
    pub server_cpu_ns: f64,
    /// The server's own CPU in each sample (with `sample_sizes`), whole nanoseconds, read from its
    /// processes after each round (files from 2026-12-07 on): what server CPU per handshake's
    /// interval and the paired difference between two scenarios' are computed from
    /// (`figures::server_cpu`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(with = "super::packed::u64s")]
    pub server_cpu_samples_ns: Vec<u64>,
    pub client_mem: PerHandshake,
    pub server_mem: PerHandshake,
    /// The scenario the baseline figures below are against (schema 3): for the baseline
    /// authentication, the protocol's baseline group with it; for any other authentication, the
    /// same group with the baseline authentication. Absent in older files: the baseline group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub against: Option<Against>,
    /// Against that scenario on the same stack: the ratio of the medians, and the difference: of
    /// the medians before the paired design, the median of the paired block differences in it.
    pub vs_baseline_ratio: Option<f64>,
    pub measured_delta_ns: Option<f64>,
    /// The paired difference's 95% interval and its pairs (files of the paired design).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_delta_ci95_ns: Option<(f64, f64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_delta_pairs: Option<usize>,
    /// The composed difference of the same two suites, from the stack named in `composed_stack`:
    /// along the critical path where the suites have a flow (files from 2026-12-02 on,
    /// `compose::predicted_difference`), else both sides' calls together.
    pub composed_delta_ns: Option<f64>,
    /// The composition stack made of the code this real stack runs (schema 2; before: "default",
    /// or "openssl" for OpenSSL).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub composed_stack: String,
    /// Every crypto call timed where it happened (schema 2): a separate, instrumented scenario of the
    /// same stack and group, run interleaved with the plain one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub instrumented: bool,
    /// Full, resumed, with two key shares or after a HelloRetryRequest (#34); absent: full.
    #[serde(default, skip_serializing_if = "Mode::is_full")]
    pub mode: Mode,
    /// TCP or QUIC (#35); absent: TCP.
    #[serde(default, skip_serializing_if = "Transport::is_tcp")]
    pub transport: Transport,
    /// Resumed scenarios: the connections the server saw resume a session, which must be every
    /// connection measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_resumed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insitu: Option<InSitu>,
    /// Instrumented median / plain median - 1, percent: what the in-situ timers cost (on the plain
    /// scenario).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insitu_overhead_pct: Option<f64>,
    /// The same cost estimated without the two medians' noise: the instrumented scenario's timed
    /// calls per handshake (both sides) x `insitu_call_cost_ns`, over this median, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insitu_overhead_est_pct: Option<f64>,
    /// The same cost measured paired, in memory, where the two loopback medians cannot resolve it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insitu_overhead_paired: Option<PairedOverhead>,
    /// The same paired on loopback: plain, unarmed (rustls's provider, over TCP and in quinn) and
    /// timed server threads in one process, connections alternating in blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insitu_overhead_paired_loopback: Option<PairedOverhead>,
}

/// The in-situ timers' cost measured paired: blocks of in-memory handshakes (client and server in
/// one pinned thread, no sockets) with the plain configuration, the wrapped one unarmed (rustls's
/// timing provider, over TCP and in quinn; empty for OpenSSL, whose calls always pass the
/// wrappers) and the wrapped one
/// armed, the order turning every block. Each series holds each block's median, nanoseconds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PairedOverhead {
    pub per_block: usize,
    pub plain_ns: Vec<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wrapped_ns: Vec<f64>,
    pub timed_ns: Vec<f64>,
    /// Mean over blocks of timed - plain, and its 95% half-width, nanoseconds.
    pub delta_ns: f64,
    pub delta_half95_ns: f64,
    /// `delta_ns` and the upper end of its interval over the scenario's loopback median, percent.
    pub pct: f64,
    pub pct_hi95: f64,
    /// Mean over blocks of wrapped - plain (the provider's own cost, no timer running), ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrapper_ns: Option<f64>,
    /// The same differences by their median (files from 2026-12-01 on): the headline figure, as a
    /// stall of the shared host in one block moves a mean and its interval but not a median.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median: Option<PairedMedian>,
}

/// Median over blocks of timed - plain with its 95% bootstrap interval (`stats::median_interval`),
/// nanoseconds, and the median and the interval's upper end over the loopback median, percent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedMedian {
    pub delta_ns: f64,
    pub lo95_ns: f64,
    pub hi95_ns: f64,
    pub pct: f64,
    pub pct_hi95: f64,
    /// Median over blocks of wrapped - plain, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrapper_ns: Option<f64>,
}

impl Scenario {
    /// The authentication's name, where the scenario records one.
    pub fn auth_name(&self) -> Option<&str> {
        self.auth.as_ref().map(|a| a.name.as_str())
    }

    /// "X25519MLKEM768 + ML-DSA-65 on rustls (in situ)": how messages and tables name it.
    pub fn name(&self) -> String {
        format!(
            "{} {}{} on {}{}",
            self.protocol,
            self.suite,
            self.auth_name()
                .map_or(String::new(), |a| format!(" + {a}")),
            self.stack,
            mode_suffix(self.mode, self.instrumented)
        )
    }

    /// The full-handshake suite its calls are set beside: "<group> full handshake" for the
    /// baseline authentication, "<group> + <auth> full handshake" for one it is compared against
    /// the baseline with (`against` names the baseline then).
    pub fn full_suite(&self) -> String {
        match (&self.auth, &self.against) {
            (Some(a), Some(g))
                if g.suite == self.suite && g.auth.as_deref() != Some(a.name.as_str()) =>
            {
                format!("{} + {} full handshake", self.suite, a.name)
            }
            _ => format!("{} full handshake", self.suite),
        }
    }

    /// Whether this is the scenario `a` names, on `stack`, plain or instrumented.
    pub fn is(&self, a: &Against, stack: &RealStack, instrumented: bool) -> bool {
        self.suite == a.suite
            && self.auth_name() == a.auth.as_deref()
            && &self.stack == stack
            && self.instrumented == instrumented
    }
}

impl PairedOverhead {
    /// (timed - plain, wrapped - plain) per block.
    pub fn differences(&self) -> (Vec<f64>, Vec<f64>) {
        let d = |a: &[f64]| {
            a.iter()
                .zip(&self.plain_ns)
                .map(|(x, p)| x - p)
                .collect::<Vec<f64>>()
        };
        (d(&self.timed_ns), d(&self.wrapped_ns))
    }
}

/// In-situ figures of an instrumented scenario: per connection, the client's wall time from connect
/// to close and every crypto call's time on each side by label, so that
/// total = sum of the client's calls + sum of the server's calls + remainder
/// holds per connection and in aggregate (`check` verifies both).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct InSitu {
    /// The order of every per-label vector below.
    pub labels: Vec<String>,
    /// The labels that stand for phases, and which (schema 3; before, `incontext` knew them per
    /// stack).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub call_phases: Vec<CallPhases>,
    pub connections: Vec<InSituConnection>,
    /// Mean nanoseconds per handshake by label, client and server side.
    pub client_ns: Vec<f64>,
    pub server_ns: Vec<f64>,
    /// Calls per handshake by label (mean), client and server side.
    pub client_calls: Vec<f64>,
    pub server_calls: Vec<f64>,
    /// Mean bytes fed to the transcript hash per handshake, client and server.
    pub client_hashed_bytes: f64,
    pub server_hashed_bytes: f64,
    /// Means per handshake: wall time, crypto on both sides, the rest (I/O, system calls, protocol
    /// logic, scheduling; less any overlap of the two sides' work).
    pub total_ns: f64,
    pub crypto_ns: f64,
    pub remainder_ns: f64,
    /// Against the baseline group's instrumented scenario on the same stack.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crypto_delta_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remainder_delta_ns: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct InSituConnection {
    pub total_ns: u64,
    /// Each timed call of the connection, in the order `InSitu::client_calls` and `server_calls`
    /// name them, nanoseconds.
    #[serde(with = "super::packed::u64s")]
    pub client: Vec<u64>,
    #[serde(with = "super::packed::u64s")]
    pub server: Vec<u64>,
    pub remainder_ns: i64,
    /// When each label's calls ran on each side, on one time line (files from 2026-12-05 on):
    /// per label in `InSitu::labels`'s order, its first call's start and its last call's end,
    /// nanoseconds after the client began the connection (the server's moved onto the client's
    /// clock by CLOCK_MONOTONIC, which both processes read when they armed); 0, 0 where that side
    /// made no call of it. Empty in older files.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        with = "super::packed::u64s"
    )]
    pub client_at_ns: Vec<u64>,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        with = "super::packed::u64s"
    )]
    pub server_at_ns: Vec<u64>,
}

impl InSituConnection {
    /// Label `i`'s first start and last end on `side`'s calls (`client_at_ns` or `server_at_ns`),
    /// where that side made a call of it.
    pub fn span(at: &[u64], i: usize) -> Option<(u64, u64)> {
        match (at.get(2 * i), at.get(2 * i + 1)) {
            (Some(&s), Some(&e)) if (s, e) != (0, 0) => Some((s, e)),
            _ => None,
        }
    }
}

impl InSitu {
    /// Timed calls per handshake, both sides.
    pub fn calls_per_handshake(&self) -> f64 {
        self.client_calls.iter().chain(&self.server_calls).sum()
    }

    /// Builds the aggregates from the connections (what `check` recomputes).
    pub fn from_connections(
        labels: Vec<String>,
        connections: Vec<InSituConnection>,
        calls: (Vec<f64>, Vec<f64>),
        hashed: (f64, f64),
    ) -> InSitu {
        let n = connections.len().max(1) as f64;
        let mean_of = |f: &dyn Fn(&InSituConnection) -> Vec<u64>| -> Vec<f64> {
            (0..labels.len())
                .map(|i| {
                    connections
                        .iter()
                        .map(|c| f(c).get(i).copied().unwrap_or(0) as f64)
                        .sum::<f64>()
                        / n
                })
                .collect()
        };
        let client_ns = mean_of(&|c| c.client.clone());
        let server_ns = mean_of(&|c| c.server.clone());
        let total_ns = connections.iter().map(|c| c.total_ns as f64).sum::<f64>() / n;
        let remainder_ns = connections
            .iter()
            .map(|c| c.remainder_ns as f64)
            .sum::<f64>()
            / n;
        InSitu {
            crypto_ns: client_ns.iter().chain(&server_ns).sum(),
            labels,
            call_phases: Vec::new(),
            connections,
            client_ns,
            server_ns,
            client_calls: calls.0,
            server_calls: calls.1,
            client_hashed_bytes: hashed.0,
            server_hashed_bytes: hashed.1,
            total_ns,
            remainder_ns,
            crypto_delta_ns: None,
            remainder_delta_ns: None,
        }
    }
}

/// Allocations per handshake: Rust's through the counting allocator, C's through the library's
/// hooks, Go's from its runtime (runtime.MemStats Mallocs and TotalAlloc).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct PerHandshake {
    pub rust_allocs: f64,
    pub rust_bytes: f64,
    pub c_allocs: f64,
    pub c_bytes: f64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub go_allocs: f64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub go_bytes: f64,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

impl PerHandshake {
    pub fn allocs(&self) -> f64 {
        self.rust_allocs + self.c_allocs + self.go_allocs
    }

    pub fn bytes(&self) -> f64 {
        self.rust_bytes + self.c_bytes + self.go_bytes
    }
}

/// Raw allocation counters (a process's running totals or a difference of two readings).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct AllocCounters {
    pub rust_allocs: u64,
    pub rust_bytes: u64,
    pub c_allocs: u64,
    pub c_bytes: u64,
}

impl AllocCounters {
    pub fn since(self, before: AllocCounters) -> AllocCounters {
        AllocCounters {
            rust_allocs: self.rust_allocs.saturating_sub(before.rust_allocs),
            rust_bytes: self.rust_bytes.saturating_sub(before.rust_bytes),
            c_allocs: self.c_allocs.saturating_sub(before.c_allocs),
            c_bytes: self.c_bytes.saturating_sub(before.c_bytes),
        }
    }

    pub fn per(self, n: f64) -> PerHandshake {
        let n = n.max(1.0);
        PerHandshake {
            rust_allocs: self.rust_allocs as f64 / n,
            rust_bytes: self.rust_bytes as f64 / n,
            c_allocs: self.c_allocs as f64 / n,
            c_bytes: self.c_bytes as f64 / n,
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Mode;

    #[test]
    fn a_modes_name_is_its_name_in_files_and_names_it_back() {
        for m in Mode::ALL {
            assert_eq!(serde_json::to_value(m).unwrap(), m.name(), "{m:?}");
            assert_eq!(Mode::named(m.name()), Some(m));
        }
        assert_eq!(Mode::named("resume"), None);
    }
}
