//! What a real handshake's first connection must show for its scenario to be the one it says it
//! is: the group, TLS 1.3, the key shares' sizes, and for a full handshake no resumption and its
//! authentication's certificate key, signature scheme and certificates sent; for a resumed one a
//! PSK accepted, no CertificateVerify and a server flight too small for the certificates. The producer refuses a
//! scenario whose evidence contradicts it; `check` holds a stored file to the same rules.

use crate::results::{AuthInfo, Evidence, Mode, Transport};

/// What a scenario declares: its protocol and group, the key shares the group sends, and the
/// authentication its server presents.
pub struct Declared<'a> {
    pub protocol: &'a str,
    pub group: &'a str,
    pub shares: Option<(usize, usize)>,
    pub auth: Option<&'a AuthInfo>,
    pub mode: Mode,
    pub transport: Transport,
}

/// Lower-case with `_` and `-` taken out: how a negotiated group's name is compared with a suite's
/// ("X25519MLKEM768" from rustls, "x25519mlkem768" or "X25519MLKEM768" elsewhere).
pub(crate) fn norm(s: &str) -> String {
    s.to_ascii_lowercase().replace(['_', '-'], "")
}

/// How the evidence names a certificate key of a registry signature algorithm.
pub(crate) fn key_name(algorithm: &str) -> &str {
    match algorithm {
        "ECDSA-P256" => "ECDSA P-256",
        other => other,
    }
}

/// Every way `ev` contradicts `d`, in words; empty when it matches.
pub fn contradictions(d: &Declared, ev: &Evidence) -> Vec<String> {
    let mut out = Vec::new();
    if norm(&ev.group) != norm(d.group) {
        out.push(format!(
            "negotiated {:?}, the scenario is {}",
            ev.group, d.group
        ));
    }
    match (d.mode, ev.resumed) {
        (Mode::Resumed, true) => {}
        (_, true) => out.push("the first connection was resumed, not a full handshake".into()),
        (Mode::Resumed, false) => {
            out.push("the connection was a full handshake, not a resumed one".into())
        }
        _ => {}
    }
    if d.protocol != "tls13" {
        return out;
    }
    match (d.mode.retries(), ev.hello_retry) {
        (true, false) => {
            out.push("no HelloRetryRequest: the server took the first ClientHello".into())
        }
        (false, true) => out.push("a HelloRetryRequest, which the scenario does not make".into()),
        _ => {}
    }
    if !(ev.version.contains("1.3") || ev.version.contains("1_3")) {
        out.push(format!("negotiated {}, not TLS 1.3", ev.version));
    }
    shares_offered(d, ev, &mut out);
    quic(d, ev, &mut out);
    // After a HelloRetryRequest the first flights hold the predicted group's share and the
    // retry's group alone.
    if let Some((c, s)) = d.shares.filter(|_| !d.mode.retries()) {
        if ev.client_share.map(|x| x.1) != Some(c) {
            out.push(format!(
                "ClientHello key_share {:?}, the group declares {c} bytes",
                ev.client_share
            ));
        }
        if ev.server_share.map(|x| x.1) != Some(s) {
            out.push(format!(
                "ServerHello key_share {:?}, the group declares {s} bytes",
                ev.server_share
            ));
        }
    }
    if d.mode == Mode::Resumed {
        resumed(d, ev, &mut out);
        return out;
    }
    let Some(a) = d.auth else {
        // Before authentications were recorded every server presented one ECDSA P-256 certificate.
        if ev.cert_key != "ECDSA P-256" {
            out.push(format!("server certificate key is {}", ev.cert_key));
        }
        return out;
    };
    if ev.cert_key != key_name(&a.algorithm) {
        out.push(format!(
            "server certificate key is {}, the authentication {} is {}",
            ev.cert_key, a.name, a.algorithm
        ));
    }
    match ev.scheme {
        Some(s) if s == a.scheme => {}
        Some(s) => out.push(format!(
            "CertificateVerify scheme 0x{s:04x}, {} declares 0x{:04x}",
            a.name, a.scheme
        )),
        None => out.push(format!(
            "no CertificateVerify scheme recorded for {}",
            a.name
        )),
    }
    if ev.chain_bytes != a.sent_bytes {
        out.push(format!(
            "the client received certificates of {:?} bytes, {} sends {:?}",
            ev.chain_bytes, a.name, a.sent_bytes
        ));
    }
    // A size control's leaf holds its padding: a leaf smaller than that was made without it.
    if a.padding_bytes > 0 {
        match a.sent_bytes.first() {
            Some(&l) if l > a.padding_bytes => {}
            Some(l) => out.push(format!(
                "{} declares a leaf padded by {} bytes, but its leaf is {l} bytes",
                a.name, a.padding_bytes
            )),
            None => out.push(format!(
                "{} declares a leaf padded by {} bytes, but sends no certificate",
                a.name, a.padding_bytes
            )),
        }
    }
    // The certificates travel in the server's first flight.
    let certs: usize = a.sent_bytes.iter().sum();
    match ev.server_flight_bytes {
        Some(f) if f as usize > certs => {}
        Some(f) => out.push(format!(
            "a server flight of {f} bytes cannot hold {certs} bytes of certificates"
        )),
        None => out.push("no server flight recorded".into()),
    }
    out
}

/// How a QUIC connection's address was validated against how its mode says: a token in the first
/// Initial exactly with `Mode::Token`, a Retry exactly with `Mode::Retry`.
pub fn validation(mode: Mode, q: &crate::results::QuicEvidence) -> Option<String> {
    let mut out = Vec::new();
    match (mode == Mode::Token, q.token) {
        (true, false) => out.push("the first Initial carried no NEW_TOKEN token"),
        (false, true) => {
            out.push("the first Initial carried a token the scenario does not present")
        }
        _ => {}
    }
    match (mode == Mode::Retry, q.retry) {
        (true, false) => out.push("the server sent no Retry"),
        (false, true) => out.push("a Retry, which the scenario does not make"),
        _ => {}
    }
    (!out.is_empty()).then(|| out.join("; "))
}

/// The smallest datagram that may carry a client's Initial packet (RFC 9000 section 14.1).
pub(crate) const QUIC_MIN_INITIAL: u64 = 1200;

/// A QUIC scenario's record of its flights: present exactly when the scenario is QUIC, version 1,
/// every Initial datagram of the client padded to 1,200 bytes, and the client's key share inside
/// that Initial flight (a hybrid's 1,216-byte share needs two datagrams).
fn quic(d: &Declared, ev: &Evidence, out: &mut Vec<String>) {
    let q = match (d.transport, &ev.quic) {
        (Transport::Tcp, None) => return,
        (Transport::Tcp, Some(_)) => {
            out.push("a QUIC record in a scenario over TCP".into());
            return;
        }
        (Transport::Quic, None) => {
            out.push("no QUIC record in a scenario over QUIC".into());
            return;
        }
        (Transport::Quic, Some(q)) => q,
    };
    if q.version != 1 {
        out.push(format!(
            "QUIC version {}, the scenario runs version 1",
            q.version
        ));
    }
    out.extend(validation(d.mode, q));
    // Files before the smallest was recorded: the flight's bytes against as many 1,200s.
    let smallest = q.client_initial_smallest.unwrap_or(QUIC_MIN_INITIAL);
    if q.client_initial_datagrams == 0
        || smallest < QUIC_MIN_INITIAL
        || q.client_initial_bytes < smallest * q.client_initial_datagrams
    {
        out.push(format!(
            "an Initial flight of {} bytes in {} datagrams, the smallest {:?}: each must be at \
             least {QUIC_MIN_INITIAL}",
            q.client_initial_bytes, q.client_initial_datagrams, q.client_initial_smallest
        ));
    }
    let shares: usize = ev.client_shares.iter().map(|s| s.1).sum();
    if shares as u64 >= q.client_initial_bytes {
        out.push(format!(
            "key shares of {shares} bytes cannot travel in an Initial flight of {} bytes",
            q.client_initial_bytes
        ));
    }
    if ev.server_flight_bytes != Some(q.server_bytes) {
        out.push(format!(
            "a server flight of {:?} bytes, its datagrams {} bytes",
            ev.server_flight_bytes, q.server_bytes
        ));
    }
    if q.server_datagrams == 0 || q.server_bytes < q.server_datagrams {
        out.push(format!(
            "{} server datagrams of {} bytes",
            q.server_datagrams, q.server_bytes
        ));
    }
}

/// X25519's code point (RFC 8446 §4.2.7) and share size: the second share of a two-share
/// ClientHello.
const X25519: (u16, usize) = (0x001d, 32);

/// X25519MLKEM768's code point and client share (draft-ietf-tls-ecdhe-mlkem §4.1 and its IANA
/// registration: 0x11EC; the ML-KEM-768 encapsulation key, 1,184 bytes, then X25519's 32): the
/// first ClientHello's share before a HelloRetryRequest to X25519.
const X25519MLKEM768: (u16, usize) = (0x11ec, 1216);

/// How many key shares the (first) ClientHello offered (files that record them all): one; for a
/// scenario of two key shares the group's and then X25519's; before a HelloRetryRequest X25519's.
fn shares_offered(d: &Declared, ev: &Evidence, out: &mut Vec<String>) {
    let two = d.mode == Mode::TwoShares;
    let retry = d.mode == Mode::HelloRetry;
    let retry_down = d.mode == Mode::HelloRetryClassical;
    if ev.client_shares.is_empty() {
        if two || retry || retry_down {
            out.push("the ClientHello's key shares are not recorded".into());
        }
        return;
    }
    let want = if two { 2 } else { 1 };
    if ev.client_shares.first() != ev.client_share.as_ref() {
        out.push(format!(
            "the ClientHello's first key share {:?} is not the one recorded, {:?}",
            ev.client_shares.first(),
            ev.client_share
        ));
    }
    if ev.client_shares.len() != want {
        out.push(format!(
            "the ClientHello offered {} key shares {:?}, the scenario {want}",
            ev.client_shares.len(),
            ev.client_shares
        ));
    } else if two && ev.client_shares[1] != X25519 {
        out.push(format!(
            "the second key share is {:?}, not X25519's 32 bytes (0x001d)",
            ev.client_shares[1]
        ));
    } else if retry && ev.client_shares[0] != X25519 {
        out.push(format!(
            "the first ClientHello's key share is {:?}, not X25519's 32 bytes (0x001d)",
            ev.client_shares[0]
        ));
    } else if retry_down && ev.client_shares[0] != X25519MLKEM768 {
        out.push(format!(
            "the first ClientHello's key share is {:?}, not X25519MLKEM768's 1,216 bytes (0x11ec)",
            ev.client_shares[0]
        ));
    }
}

/// A resumption authenticates with the PSK (RFC 8446 §2.2): no CertificateVerify, and no
/// Certificate, so the server's flight cannot hold its key share and the certificates together.
/// (The certificates a library reports may come from the session, so they prove nothing here.)
fn resumed(d: &Declared, ev: &Evidence, out: &mut Vec<String>) {
    if let Some(s) = ev.scheme {
        out.push(format!(
            "a CertificateVerify of scheme 0x{s:04x} in a resumed handshake"
        ));
    }
    let certs: usize = d.auth.map_or(0, |a| a.sent_bytes.iter().sum());
    let share = d.shares.map_or(0, |s| s.1);
    match ev.server_flight_bytes {
        Some(f) if (f as usize) < certs + share => {}
        Some(f) => out.push(format!(
            "a server flight of {f} bytes holds the {share}-byte key share and {certs} bytes \
             more: room for the certificates a resumption does not send"
        )),
        None => out.push("no server flight recorded".into()),
    }
}

/// A server of servers/ names itself in its evidence ("nginx 1.26.3"): the software must be the
/// scenario's stack, with a version.
pub fn software_contradiction(stack: &str, evidence: &Evidence) -> Option<String> {
    let software = evidence.server_software.as_deref()?;
    match software
        .strip_prefix(stack)
        .and_then(|v| v.strip_prefix(' '))
    {
        Some(version) if version.starts_with(|c: char| c.is_ascii_digit()) => None,
        _ => Some(format!(
            "its server's software reads {software:?}, not {stack} and a version"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_servers_software_must_name_its_stack_and_a_version() {
        // pqprof's own servers name none.
        assert_eq!(software_contradiction("rustls", &Evidence::default()), None);
        let with = |software: &str| {
            let e = Evidence {
                server_software: Some(software.into()),
                ..Evidence::default()
            };
            software_contradiction("nginx", &e)
        };
        assert_eq!(with("nginx 1.26.3"), None);
        for wrong in ["haproxy 3.0.11", "nginx", "nginx latest", "nginx1.26"] {
            let p = with(wrong).unwrap_or_else(|| panic!("{wrong} passed"));
            assert!(p.contains("not nginx and a version"), "{p}");
        }
    }

    fn auth() -> AuthInfo {
        AuthInfo {
            name: "ML-DSA-65".into(),
            algorithm: "ML-DSA-65".into(),
            form: "chain".into(),
            scheme: 0x0905,
            sent_bytes: vec![5472, 5525],
            root_bytes: 5517,
            padding_bytes: 0,
        }
    }

    fn evidence() -> Evidence {
        Evidence {
            version: "TLSv1_3".into(),
            group: "X25519MLKEM768".into(),
            cipher: "TLS13_AES_256_GCM_SHA384".into(),
            cert_key: "ML-DSA-65".into(),
            resumed: false,
            client_share: Some((0x11ec, 1216)),
            client_shares: Vec::new(),
            hello_retry: false,
            server_share: Some((0x11ec, 1120)),
            scheme: Some(0x0905),
            chain_bytes: vec![5472, 5525],
            server_flight_bytes: Some(15_637),
            client_hello_bytes: Some(1_538),
            quic: None,
            server_software: None,
        }
    }

    /// The hybrid with the 1,216 + 1,120 B shares X25519MLKEM768 declares, authenticated by `a`.
    fn hybrid(a: &AuthInfo, mode: Mode) -> Declared<'_> {
        Declared {
            protocol: "tls13",
            group: "X25519MLKEM768",
            shares: Some((1216, 1120)),
            auth: Some(a),
            mode,
            transport: Transport::Tcp,
        }
    }

    /// What `d` finds wrong with `base` once `f` has changed it.
    fn changed(d: &Declared, base: &Evidence, f: &dyn Fn(&mut Evidence)) -> String {
        let mut e = base.clone();
        f(&mut e);
        contradictions(d, &e).join("; ")
    }

    #[test]
    fn matching_evidence_passes_and_each_contradiction_is_named() {
        let a = auth();
        let d = hybrid(&a, Mode::Full);
        assert!(contradictions(&d, &evidence()).is_empty());
        let with = |f: &dyn Fn(&mut Evidence)| changed(&d, &evidence(), f);
        assert!(with(&|e| e.group = "X25519".into()).contains("negotiated \"X25519\""));
        assert!(with(&|e| e.server_share = Some((0x1d, 32))).contains("ServerHello key_share"));
        assert!(
            with(&|e| e.scheme = Some(0x0904)).contains("scheme 0x0904, ML-DSA-65 declares 0x0905")
        );
        assert!(
            with(&|e| e.cert_key = "ECDSA P-256".into()).contains("certificate key is ECDSA P-256")
        );
        assert!(with(&|e| e.chain_bytes = vec![5472]).contains("received certificates"));
        assert!(with(&|e| e.server_flight_bytes = Some(9000)).contains("cannot hold 10997 bytes"));
        assert!(with(&|e| e.resumed = true).contains("resumed"));
        // A size control whose leaf is no larger than its padding was made without it.
        let padded = AuthInfo {
            padding_bytes: 5472,
            ..auth()
        };
        assert!(contradictions(&hybrid(&padded, Mode::Full), &evidence())
            .join("; ")
            .contains("a leaf padded by 5472 bytes, but its leaf is 5472 bytes"));
        let padded = AuthInfo {
            padding_bytes: 5000,
            ..auth()
        };
        assert!(contradictions(&hybrid(&padded, Mode::Full), &evidence()).is_empty());
        // Every share offered, where recorded: one here.
        assert!(with(&|e| e.client_shares = vec![(0x11ec, 1216)]).is_empty());
        assert!(
            with(&|e| e.client_shares = vec![(0x11ec, 1216), (0x1d, 32)])
                .contains("offered 2 key shares")
        );
        // An SSH scenario has no TLS evidence to hold.
        let ssh = Declared {
            protocol: "ssh",
            group: "curve25519-sha256",
            shares: None,
            auth: None,
            mode: Mode::Full,
            transport: Transport::Tcp,
        };
        let mut e = evidence();
        e.group = "curve25519-sha256".into();
        assert!(contradictions(&ssh, &e).is_empty());
    }

    #[test]
    fn a_quic_scenario_shows_its_padded_initial_flight_and_a_tcp_one_none() {
        use crate::results::QuicEvidence;
        let a = auth();
        let tcp = hybrid(&a, Mode::Full);
        let quic = Declared {
            transport: Transport::Quic,
            ..hybrid(&a, Mode::Full)
        };
        // What quinn's client saw with this chain (2026-12-03): a two-datagram Initial flight,
        // 15 datagrams back.
        let mut ev = evidence();
        ev.client_shares = vec![(0x11ec, 1216)];
        ev.server_flight_bytes = Some(16_780);
        ev.quic = Some(QuicEvidence {
            version: 1,
            client_initial_datagrams: 2,
            client_initial_bytes: 2400,
            client_initial_smallest: Some(1200),
            server_datagrams: 15,
            server_bytes: 16_780,
            token: false,
            retry: false,
            batched_acks: true,
            sender: Default::default(),
        });
        assert_eq!(contradictions(&quic, &ev), Vec::<String>::new());
        let q = ev.quic.clone().expect("a QUIC record");
        // 16,780 bytes back against 3 x 2,400 received: the server had to wait for the client.
        assert_eq!(q.amplification_budget(), 7200);
        assert!(q.amplification_limited());
        assert!(!QuicEvidence {
            token: true,
            ..q.clone()
        }
        .amplification_limited());
        // A token's or a Retry's validation lifts the limit, and the scenario's mode must be the
        // one its first flights show.
        assert!(!QuicEvidence {
            retry: true,
            ..q.clone()
        }
        .amplification_limited());
        let token = Declared {
            transport: Transport::Quic,
            ..hybrid(&a, Mode::Token)
        };
        assert!(changed(&token, &ev, &|_| {}).contains("carried no NEW_TOKEN token"));
        let with_token = |e: &mut Evidence| {
            if let Some(q) = e.quic.as_mut() {
                q.token = true
            }
        };
        assert!(changed(&quic, &ev, &with_token).contains("a token the scenario does not present"));
        let mut tokened = ev.clone();
        with_token(&mut tokened);
        assert_eq!(contradictions(&token, &tokened), Vec::<String>::new());
        let retry = Declared {
            transport: Transport::Quic,
            ..hybrid(&a, Mode::Retry)
        };
        assert!(changed(&retry, &ev, &|_| {}).contains("the server sent no Retry"));
        assert!(changed(&token, &tokened, &|e| {
            if let Some(q) = e.quic.as_mut() {
                q.retry = true
            }
        })
        .contains("a Retry, which the scenario does not make"));
        assert!(changed(&tcp, &ev, &|_| {}).contains("a QUIC record in a scenario over TCP"));
        assert!(changed(&quic, &ev, &|e| e.quic = None).contains("no QUIC record"));
        let with = |f: &dyn Fn(&mut QuicEvidence)| {
            changed(&quic, &ev, &|e| {
                if let Some(q) = e.quic.as_mut() {
                    f(q)
                }
            })
        };
        assert!(with(&|q| q.version = 2).contains("QUIC version 2"));
        // An unpadded Initial, and a hybrid share in one datagram's worth of bytes.
        assert!(
            with(&|q| q.client_initial_smallest = Some(800)).contains("each must be at least 1200")
        );
        assert!(with(&|q| q.client_initial_bytes = 2000).contains("each must be at least 1200"));
        assert!(with(&|q| {
            q.client_initial_datagrams = 1;
            q.client_initial_bytes = 1200;
        })
        .contains("key shares of 1216 bytes cannot travel in an Initial flight of 1200 bytes"));
        assert!(with(&|q| q.server_bytes = 16_000).contains("its datagrams 16000 bytes"));
    }

    #[test]
    fn two_key_shares_are_the_groups_and_then_x25519s() {
        let a = auth();
        let d = hybrid(&a, Mode::TwoShares);
        let two = Evidence {
            client_shares: vec![(0x11ec, 1216), (0x1d, 32)],
            ..evidence()
        };
        assert!(contradictions(&d, &two).is_empty());
        let with = |f: &dyn Fn(&mut Evidence)| changed(&d, &two, f);
        assert!(with(&|e| e.client_shares.truncate(1)).contains("offered 1 key shares"));
        assert!(with(&|e| e.client_shares[1] = (0x17, 65)).contains("not X25519's"));
        assert!(with(&|e| e.client_shares.clear()).contains("not recorded"));
        // The first share is the group's, as recorded; a resumption flag has no place here.
        assert!(with(&|e| e.client_shares[0] = (0x1d, 32)).contains("not the one recorded"));
        assert!(with(&|e| e.resumed = true).contains("resumed, not a full handshake"));
    }

    #[test]
    fn a_hello_retry_follows_a_first_hello_with_x25519s_share_alone() {
        let a = auth();
        let d = hybrid(&a, Mode::HelloRetry);
        // The first flights: X25519's share, and a HelloRetryRequest (no share of its own).
        let retried = Evidence {
            client_share: Some((0x1d, 32)),
            client_shares: vec![(0x1d, 32)],
            server_share: None,
            hello_retry: true,
            ..evidence()
        };
        assert!(contradictions(&d, &retried).is_empty());
        let with = |f: &dyn Fn(&mut Evidence)| changed(&d, &retried, f);
        assert!(with(&|e| e.hello_retry = false).contains("no HelloRetryRequest"));
        assert!(with(&|e| e.client_shares = vec![(0x11ec, 1216)]).contains("not X25519's"));
        assert!(with(&|e| e.group = "X25519".into()).contains("negotiated"));
        // A full handshake that was retried is not the scenario it says.
        let full = Declared {
            mode: Mode::Full,
            ..d
        };
        assert!(contradictions(
            &full,
            &Evidence {
                hello_retry: true,
                ..evidence()
            }
        )
        .join("; ")
        .contains("a HelloRetryRequest, which the scenario does not make"));
    }

    #[test]
    fn a_hello_retry_to_x25519_follows_a_first_hello_with_the_hybrids_share_alone() {
        let a = auth();
        let d = Declared {
            group: "X25519",
            shares: Some((32, 32)),
            ..hybrid(&a, Mode::HelloRetryClassical)
        };
        // The first ClientHello: the hybrid's 1,216-byte share; the server retries to X25519.
        let retried = Evidence {
            group: "X25519".into(),
            client_share: Some((0x11ec, 1216)),
            client_shares: vec![(0x11ec, 1216)],
            server_share: None,
            hello_retry: true,
            ..evidence()
        };
        assert!(
            contradictions(&d, &retried).is_empty(),
            "{:?}",
            contradictions(&d, &retried)
        );
        let with = |f: &dyn Fn(&mut Evidence)| changed(&d, &retried, f);
        assert!(with(&|e| e.hello_retry = false).contains("no HelloRetryRequest"));
        assert!(with(&|e| {
            e.client_shares = vec![(0x1d, 32)];
            e.client_share = Some((0x1d, 32));
        })
        .contains("not X25519MLKEM768's"));
        assert!(with(&|e| e.group = "X25519MLKEM768".into()).contains("negotiated"));
    }

    #[test]
    fn a_resumption_shows_a_psk_no_certificate_verify_and_no_room_for_the_certificates() {
        let a = auth();
        let d = hybrid(&a, Mode::Resumed);
        // ServerHello with the 1,120-byte share, EncryptedExtensions and Finished.
        let resumed = Evidence {
            resumed: true,
            scheme: None,
            server_flight_bytes: Some(1_372),
            ..evidence()
        };
        assert!(contradictions(&d, &resumed).is_empty());
        let with = |f: &dyn Fn(&mut Evidence)| changed(&d, &resumed, f);
        assert!(with(&|e| e.resumed = false).contains("a full handshake, not a resumed one"));
        assert!(with(&|e| e.scheme = Some(0x0905)).contains("CertificateVerify of scheme 0x0905"));
        // 1,120 + 10,997 bytes: a flight this size has room for the chain.
        assert!(
            with(&|e| e.server_flight_bytes = Some(12_117)).contains("room for the certificates")
        );
        assert!(with(&|e| e.server_flight_bytes = Some(12_116)).is_empty());
        // The full handshake's evidence is not a resumption's.
        assert!(!contradictions(&d, &evidence()).is_empty());
    }
}
