//! quic-go (Debian's package of 0.59, built into the Go peer by peers/go/build.sh) over Go's
//! crypto/tls: the TLS 1.3 handshakes of `go.rs`, the same configurations and certificates,
//! carried in QUIC v1 packets over UDP (RFC 9000 and 9001), through the peer's `client --quic` and
//! `serve --quic`. Both sides keep their datagrams at 1,200 bytes (no path MTU discovery), as
//! pqprof's quinn does, so that the two QUIC stacks' flights are counted alike.
//!
//! The modes are quinn's: full handshakes (the client has no token store, so it presents none;
//! quic-go's server sends one NEW_TOKEN frame a connection whatever the mode), with the NEW_TOKEN
//! token the connection before brought (`Mode::Token`: the client keeps tokens in quic-go's LRU
//! store, which gives each out once), and after a Retry (`Mode::Retry`: the server's
//! `VerifySourceAddress` asks for one on every first Initial). The evidence is read from the
//! client's datagrams (`quic_wire`), its Initial packets decrypted for the key shares.

use super::quic_wire::{self, Datagram};
use super::{child, Availability, Config, Features, TlsStack};
use crate::results::{Evidence, Mode, QuicEvidence, QuicSender, Transport};
use anyhow::{bail, ensure, Context, Result};
use serde::Deserialize;

pub(crate) struct QuicGo;

/// Why quic-go's client cannot take the ML-DSA-87 chain (measured: the handshake fails with it).
/// RFC 9000 section 7.5 lets an endpoint bound the CRYPTO data it buffers (at least 4,096 bytes
/// out of order) and close with CRYPTO_BUFFER_EXCEEDED past it; quic-go bounds the stream's
/// offset itself, so a flight past it fails even in order.
const CRYPTO_LIMIT: &str = "quic-go 0.59's client refuses CRYPTO data past offset 16,384 \
     (CRYPTO_BUFFER_EXCEEDED, RFC 9000 section 7.5; internal/protocol/params.go, \
     MaxCryptoStreamOffset), and the server's Handshake messages with the ML-DSA-87 chain (two \
     2,592-byte keys and three 4,627-byte signatures, FIPS 204 table 2) pass it; with the \
     ML-DSA-65 chain they stay under";

impl TlsStack for QuicGo {
    fn name(&self) -> &'static str {
        "quic-go"
    }

    fn protocol(&self) -> &'static str {
        "tls13"
    }

    fn transport(&self) -> Transport {
        Transport::Quic
    }

    /// Go's crypto/tls does every crypto call of the handshake: the Go stack's composition
    /// (QUIC's packet and header protection are not among the phases yet).
    fn composition(&self) -> crate::results::Stack {
        super::go::Go.composition()
    }

    /// The client completes after one round trip: no TCP connect before the Initial.
    fn round_trips(&self) -> f64 {
        crate::netmodel::QUIC_ROUND_TRIPS
    }

    fn features(&self) -> Features {
        Features {
            network: true,
            address_validation: true,
            ..Features::default()
        }
    }

    fn cannot(&self, m: Mode) -> String {
        format!(
            "the {} handshake is not built for QUIC: quic-go makes full handshakes, with a \
             NEW_TOKEN token and after a Retry (#35)",
            m.suffix()
        )
    }

    /// The Go peer's groups and certificates, when it is built with quic-go.
    fn availability(&self) -> Result<Availability> {
        let v = crate::go::version(&crate::go::binary()?)?;
        let Some(quic) = v.quic else {
            bail!(
                "the Go peer is built without quic-go (peers/go/quic-deps.sh fetches it from \
                 Debian's archive; peers/go/build.sh then builds it in)"
            )
        };
        Ok(Availability {
            version: format!("{quic}, {}", v.go_version),
            groups: Some(v.groups),
            auths: v.cert_keys,
            refused: vec![("ML-DSA-87".into(), CRYPTO_LIMIT.into())],
        })
    }

    fn client(&self, c: Config) -> Result<Box<dyn super::Client>> {
        let mode = match c.mode {
            Mode::Full => "full",
            Mode::Token => "token",
            // The client is a full one: the server sends the Retry.
            Mode::Retry => "full",
            m => bail!("quic-go: {} are not built", m.described()),
        };
        let args = ["--quic", "--mode", mode].map(String::from).to_vec();
        super::go::lazy(c.group, args, evidence, c.identity)
    }

    fn start_server(&self, s: &child::Start) -> Result<child::Server> {
        let mode = match s.mode {
            Mode::Full | Mode::Token => "full",
            Mode::Retry => "retry",
            m => bail!("quic-go: {} are not built", m.described()),
        };
        super::go::start_server(s, ["--quic", "--mode", mode])
    }
}

/// The peer's answer to `evidence` over QUIC (peers/go quic.go).
#[derive(Deserialize)]
struct Answer {
    group: String,
    cipher: String,
    cert_key: String,
    scheme: u16,
    chain_bytes: Vec<usize>,
    resumed: bool,
    datagrams: Vec<HexDatagram>,
}

#[derive(Deserialize)]
struct HexDatagram {
    sent: bool,
    hex: String,
}

/// What the evidence connection showed: crypto/tls's report, and from its datagrams the flights,
/// the token, any Retry and both key shares.
pub(super) fn evidence(answer: &str) -> Result<Evidence> {
    let a: Answer = serde_json::from_str(answer).context("Go QUIC client evidence")?;
    let datagrams: Vec<Datagram> = a
        .datagrams
        .iter()
        .map(|d| Datagram {
            sent: d.sent,
            bytes: super::go::hex(&d.hex),
        })
        .collect();
    ensure!(
        !datagrams.is_empty(),
        "the Go QUIC client kept no datagrams"
    );
    let (wire, hellos) = quic_wire::read_datagrams(&datagrams);
    let shares = |hs: &[u8], msg: u8| {
        crate::parse::tls::key_shares_of_messages(hs)
            .and_then(|(m, s)| (m == msg).then_some(s))
            .unwrap_or_default()
    };
    let client_shares = shares(&hellos.client, 1);
    let version = wire.version.unwrap_or(0);
    Ok(Evidence {
        version: quic_wire::version_name(version),
        group: a.group,
        cipher: a.cipher,
        cert_key: a.cert_key,
        resumed: a.resumed,
        client_share: client_shares.first().copied(),
        client_shares,
        server_share: shares(&hellos.server, 2).first().copied(),
        hello_retry: crate::parse::tls::opens_with_hello_retry(&hellos.server),
        scheme: Some(a.scheme).filter(|&s| s != 0),
        chain_bytes: a.chain_bytes,
        server_flight_bytes: Some(wire.flight_bytes),
        quic: Some(QuicEvidence {
            sender: QuicSender::QuicGo,
            ..quic_wire::quic_evidence(&wire, version)
        }),
        ..Evidence::default()
    })
}
