//! What a QUIC client sees on the wire, datagram by datagram (RFC 9000 section 17): the flights'
//! datagrams and bytes, the token of its first Initial, a Retry, and the TLS handshake messages
//! each side's Initial packets carry (their CRYPTO frames, decrypted with the Initial keys every
//! observer can derive from the client's first Destination Connection ID, RFC 9001 section 5.2),
//! from which the key shares are read as the TCP stacks' are from their first records. quinn feeds
//! its datagrams as it sends and receives them; the Go peer's QUIC client hands over every datagram
//! until its handshake completed.

use rustls::quic::{Keys, Version};
use rustls::Side;

/// The QUIC version every connection uses: 1 (RFC 9000).
pub(crate) const VERSION: u32 = 1;

/// The application protocol every QUIC client and server here names (peers/go quic.go too):
/// QUIC's TLS must negotiate one (RFC 9001 section 8.1), and crypto/tls and rustls refuse a QUIC
/// handshake without one, so quinn and quic-go meet only when both name the same (files before
/// 2026-12-04 17:40 have quinn's handshakes without ALPN: some 20 bytes less each way).
pub(crate) const ALPN: &[u8] = b"pqprof";

/// What the client saw of one connection on the wire, UDP payload bytes, datagram by datagram.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Wire {
    pub(crate) sent: u64,
    pub(crate) received: u64,
    /// The datagrams of the client's first flight (before it received anything), their bytes and
    /// the smallest of them.
    pub(crate) first_datagrams: u64,
    pub(crate) first_bytes: u64,
    pub(crate) first_smallest: u64,
    /// The version in the first long header the server sent.
    pub(crate) version: Option<u32>,
    /// The token field of the client's first Initial was not empty (a NEW_TOKEN token).
    pub(crate) token: bool,
    /// A Retry packet came from the server, and how many and their bytes (counted in `received`
    /// too, not in the flight).
    pub(crate) retry: bool,
    pub(crate) retry_datagrams: u64,
    pub(crate) retry_bytes: u64,
    pub(crate) received_datagrams: u64,
    /// Received when the handshake completed.
    pub(crate) flight_datagrams: u64,
    pub(crate) flight_bytes: u64,
}

impl Wire {
    pub(crate) fn sent(&mut self, d: &[u8]) {
        let n = d.len() as u64;
        if self.sent == 0 {
            self.token = initial_token_len(d).is_some_and(|t| t > 0);
        }
        self.sent += n;
        if self.received_datagrams == 0 {
            self.first_datagrams += 1;
            self.first_bytes += n;
            self.first_smallest = if self.first_datagrams == 1 {
                n
            } else {
                self.first_smallest.min(n)
            };
        }
    }

    pub(crate) fn received(&mut self, d: &[u8]) {
        if self.version.is_none() && d.len() >= 5 && d[0] & 0x80 != 0 {
            self.version = Some(u32::from_be_bytes([d[1], d[2], d[3], d[4]]));
        }
        self.received_datagrams += 1;
        self.received += d.len() as u64;
        // A long header of type 3 in version 1 (RFC 9000 section 17.2.5): not part of the
        // server's handshake flight, whose bytes the model takes round by round.
        if d.len() >= 5 && d[0] & 0xb0 == 0xb0 && d[1..5] == VERSION.to_be_bytes() {
            self.retry = true;
            self.retry_datagrams += 1;
            self.retry_bytes += d.len() as u64;
        }
    }

    /// The handshake completed: what has come so far, less any Retry, is the server's flight.
    pub(crate) fn handshake_done(&mut self) {
        self.flight_datagrams = self.received_datagrams - self.retry_datagrams;
        self.flight_bytes = self.received - self.retry_bytes;
    }
}

/// The length of the token field of the Initial packet a datagram opens with, `None` if it does not
/// open with a version 1 Initial: the long header's first byte (form, fixed bit, type 0), version,
/// the two connection IDs each after its length byte, then the token's length as a variable-length
/// integer (RFC 9000 sections 17.2.2 and 16).
fn initial_token_len(d: &[u8]) -> Option<u64> {
    if d.first()? & 0xf0 != 0xc0 || d.get(1..5)? != VERSION.to_be_bytes() {
        return None;
    }
    let dcid = usize::from(*d.get(5)?);
    let scid_at = 6 + dcid;
    let scid = usize::from(*d.get(scid_at)?);
    varint(d, scid_at + 1 + scid).map(|(v, _)| v)
}

/// How a connection's version reads in its evidence.
pub(crate) fn version_name(version: u32) -> String {
    if version == VERSION {
        // QUIC version 1 carries TLS 1.3 only (RFC 9001 section 4.2).
        "QUIC v1 (TLS 1.3, RFC 9001)".into()
    } else {
        format!("QUIC version 0x{version:08x}")
    }
}

/// The QUIC record of a connection's wire, for a client that reads every datagram waiting before
/// it answers (`batched_acks`: quinn's loop here; quic-go's `handlePackets`, connection.go, which
/// takes up to its limit of queued packets before it sends).
pub(crate) fn quic_evidence(w: &Wire, version: u32) -> crate::results::QuicEvidence {
    crate::results::QuicEvidence {
        version,
        client_initial_datagrams: w.first_datagrams,
        client_initial_bytes: w.first_bytes,
        client_initial_smallest: Some(w.first_smallest),
        server_datagrams: w.flight_datagrams,
        server_bytes: w.flight_bytes,
        token: w.token,
        retry: w.retry,
        batched_acks: true,
        sender: crate::results::QuicSender::Quinn,
    }
}

/// One datagram of a connection, in the order the client sent or received it.
pub(crate) struct Datagram {
    pub(crate) sent: bool,
    pub(crate) bytes: Vec<u8>,
}

/// A connection's datagrams until its handshake completed, read as quinn's client reads its own:
/// the wire's counts, and the handshake messages of each side's Initial packets. The Go peer's
/// client reads on a goroutine of its own, so the server's first answer can be noted before the
/// client's second Initial datagram goes (quinn's loop sends all it has before it reads): its
/// Initial flight is therefore the datagrams up to the one that completes its first ClientHello,
/// where the Initial packets open.
pub(crate) fn read_datagrams(datagrams: &[Datagram]) -> (Wire, Hellos) {
    let mut wire = Wire::default();
    for d in datagrams {
        if d.sent {
            wire.sent(&d.bytes);
        } else {
            wire.received(&d.bytes);
        }
    }
    wire.handshake_done();
    let (hellos, flight) = hellos_and_flight(datagrams);
    if let Some(f) = flight.filter(|f| !f.is_empty()) {
        wire.first_datagrams = f.len() as u64;
        wire.first_bytes = f.iter().sum();
        wire.first_smallest = f.iter().copied().min().unwrap_or(0);
    }
    (wire, hellos)
}

/// The TLS handshake messages of the Initial packets (RFC 9001 section 4.1.4): the client's
/// ClientHello, and the server's ServerHello (or HelloRetryRequest), each its CRYPTO stream from
/// offset 0 as far as it is contiguous.
#[derive(Debug, Default)]
pub(crate) struct Hellos {
    pub(crate) client: Vec<u8>,
    pub(crate) server: Vec<u8>,
}

/// Decrypts every Initial packet of the datagrams. The client's are protected with the keys of
/// the Destination Connection ID they carry (after a Retry, the Retry's Source Connection ID); the
/// server's with those of the client's Initial it answers, which after a Retry is the client's
/// second ID, so each client ID is tried. The client's stream is taken from its first ID's packets
/// (after a Retry it sends the same ClientHello again; a second ClientHello after a
/// HelloRetryRequest, under the server's ID, is not read). With them, the sizes of the client's
/// datagrams up to the one that completes its first ClientHello (`None` where it does not
/// complete).
fn hellos_and_flight(datagrams: &[Datagram]) -> (Hellos, Option<Vec<u64>>) {
    let mut ids: Vec<Vec<u8>> = Vec::new();
    let mut client = Stream::default();
    let mut flight: Vec<u64> = Vec::new();
    let mut complete = false;
    for d in datagrams.iter().filter(|d| d.sent) {
        if !complete {
            flight.push(d.bytes.len() as u64);
        }
        for p in initial_packets(&d.bytes) {
            if !ids.contains(&p.dcid) {
                ids.push(p.dcid.clone());
            }
            if p.dcid == ids[0] {
                if let Some(plain) = keys(&p.dcid).and_then(|k| open(&p, &k.local)) {
                    client.add(&plain);
                }
            }
        }
        complete = complete || first_message_complete(&client.contiguous());
    }
    let mut server = Stream::default();
    for d in datagrams.iter().filter(|d| !d.sent) {
        for p in initial_packets(&d.bytes) {
            if let Some(plain) = ids
                .iter()
                .find_map(|id| keys(id).and_then(|k| open(&p, &k.remote)))
            {
                server.add(&plain);
            }
        }
    }
    let hellos = Hellos {
        client: client.contiguous(),
        server: server.contiguous(),
    };
    (hellos, complete.then_some(flight))
}

/// Whether handshake messages hold the whole of their first message: its type, its 24-bit length
/// and that many bytes (RFC 8446 section 4).
fn first_message_complete(hs: &[u8]) -> bool {
    hs.get(1..4).is_some_and(|l| {
        let len = (usize::from(l[0]) << 16) | (usize::from(l[1]) << 8) | usize::from(l[2]);
        hs.len() >= 4 + len
    })
}

/// The Initial keys of a client Destination Connection ID, as the client holds them (`local`:
/// its own packets; `remote`: the server's): AES-128-GCM with SHA-256, the suite every Initial
/// packet uses (RFC 9001 section 5.2).
fn keys(dcid: &[u8]) -> Option<Keys> {
    let suite = rustls::crypto::aws_lc_rs::cipher_suite::TLS13_AES_128_GCM_SHA256.tls13()?;
    Some(Keys::initial(
        Version::V1,
        suite,
        suite.quic?,
        dcid,
        Side::Client,
    ))
}

/// An Initial packet of a datagram: its header up to the protected packet number, the packet
/// from there, and the Destination Connection ID.
struct Packet {
    dcid: Vec<u8>,
    header: Vec<u8>,
    rest: Vec<u8>,
}

/// The version 1 Initial packets a datagram holds (RFC 9000 sections 12.2 and 17.2.2): long
/// headers one after another, each as long as its Length field says, until a short header, a
/// Retry or bytes that do not parse.
fn initial_packets(d: &[u8]) -> Vec<Packet> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some((packet, next)) = long_packet(d, at) {
        if let Some(p) = packet {
            out.push(p);
        }
        at = next;
    }
    out
}

/// The long-header packet at `at`: `Some(packet)` if it is an Initial, and where the next begins.
fn long_packet(d: &[u8], at: usize) -> Option<(Option<Packet>, usize)> {
    let first = *d.get(at)?;
    if first & 0x80 == 0 || d.get(at + 1..at + 5)? != VERSION.to_be_bytes() {
        return None;
    }
    let kind = (first >> 4) & 0x03;
    if kind == 3 {
        return None; // a Retry has no Length and ends the datagram
    }
    let dcid_len = usize::from(*d.get(at + 5)?);
    let dcid = d.get(at + 6..at + 6 + dcid_len)?.to_vec();
    let scid_at = at + 6 + dcid_len;
    let mut pos = scid_at + 1 + usize::from(*d.get(scid_at)?);
    if kind == 0 {
        let (token, n) = varint(d, pos)?;
        pos += n + usize::try_from(token).ok()?;
    }
    let (length, n) = varint(d, pos)?;
    let pn_at = pos + n;
    let end = pn_at.checked_add(usize::try_from(length).ok()?)?;
    let whole = d.get(at..end)?;
    let packet = (kind == 0).then(|| Packet {
        dcid,
        header: whole[..pn_at - at].to_vec(),
        rest: whole[pn_at - at..].to_vec(),
    });
    Some((packet, end))
}

/// A variable-length integer at `at` (RFC 9000 section 16), and its length.
fn varint(d: &[u8], at: usize) -> Option<(u64, usize)> {
    let first = *d.get(at)?;
    let len = 1usize << (first >> 6);
    let bytes = d.get(at..at + len)?;
    let v = bytes[1..]
        .iter()
        .fold(u64::from(first & 0x3f), |v, &b| (v << 8) | u64::from(b));
    Some((v, len))
}

/// The packet's plaintext frames, if `k` opens it: header protection off (RFC 9001 section 5.4:
/// the sample is the 16 bytes 4 after the packet number's start), then the AEAD with the header
/// as associated data and the packet number as sent (Initial numbers here are small and sent in
/// full).
fn open(p: &Packet, k: &rustls::quic::DirectionalKeys) -> Option<Vec<u8>> {
    let sample = p.rest.get(4..4 + k.header.sample_len())?;
    let mut first = *p.header.first()?;
    let mut pn = p.rest.get(..4)?.to_vec();
    k.header
        .decrypt_in_place(sample, &mut first, &mut pn)
        .ok()?;
    let pn_len = usize::from(first & 0x03) + 1;
    let mut header = p.header.clone();
    header[0] = first;
    header.extend_from_slice(&pn[..pn_len]);
    let number = pn[..pn_len]
        .iter()
        .fold(0u64, |v, &b| (v << 8) | u64::from(b));
    let mut payload = p.rest.get(pn_len..)?.to_vec();
    let plain = k
        .packet
        .decrypt_in_place(number, &header, &mut payload)
        .ok()?;
    Some(plain.to_vec())
}

/// A CRYPTO stream put together from its frames' offsets.
#[derive(Default)]
struct Stream(std::collections::BTreeMap<u64, Vec<u8>>);

impl Stream {
    /// The CRYPTO frames of an Initial packet's plaintext; the other frames an Initial may carry
    /// (PADDING, PING, ACK, CONNECTION_CLOSE: RFC 9000 section 12.4) are skipped, and the first
    /// that does not parse ends the packet.
    fn add(&mut self, frames: &[u8]) {
        let mut at = 0;
        while let Some(&kind) = frames.get(at) {
            at += 1;
            let next = match kind {
                0x00 | 0x01 => Some(at),
                0x02 | 0x03 => ack_end(frames, at, kind == 0x03),
                0x06 => self.crypto(frames, at),
                _ => None,
            };
            let Some(next) = next else { return };
            at = next;
        }
    }

    fn crypto(&mut self, f: &[u8], at: usize) -> Option<usize> {
        let (offset, n) = varint(f, at)?;
        let (len, m) = varint(f, at + n)?;
        let from = at + n + m;
        let to = from.checked_add(usize::try_from(len).ok()?)?;
        // A retransmission may carry less from the same offset: the longer stays.
        let data = f.get(from..to)?;
        let kept = self.0.entry(offset).or_default();
        if data.len() > kept.len() {
            *kept = data.to_vec();
        }
        Some(to)
    }

    fn contiguous(&self) -> Vec<u8> {
        let mut out: Vec<u8> = Vec::new();
        for (&offset, data) in &self.0 {
            let have = out.len() as u64;
            if offset > have {
                break;
            }
            let skip = usize::try_from(have - offset).unwrap_or(usize::MAX);
            out.extend(data.iter().skip(skip));
        }
        out
    }
}

/// Where an ACK frame whose type byte ends before `at` ends: largest, delay, range count and
/// first range, then each range's gap and length, then with ECN its three counts.
fn ack_end(f: &[u8], mut at: usize, ecn: bool) -> Option<usize> {
    let skip = |at: &mut usize| -> Option<u64> {
        let (v, n) = varint(f, *at)?;
        *at += n;
        Some(v)
    };
    skip(&mut at)?;
    skip(&mut at)?;
    let ranges = skip(&mut at)?;
    skip(&mut at)?;
    for _ in 0..ranges.min(1 << 16) {
        skip(&mut at)?;
        skip(&mut at)?;
    }
    if ecn {
        for _ in 0..3 {
            skip(&mut at)?;
        }
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::tls::{key_shares_of_messages, opens_with_hello_retry};

    /// RFC 9001's client and server Initial packets (`rfc9001-initials.txt`).
    fn vectors() -> (Vec<u8>, Vec<u8>) {
        let mut lines = include_str!("rfc9001-initials.txt")
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(crate::stack::go::hex);
        (lines.next().unwrap(), lines.next().unwrap())
    }

    fn sent(bytes: &[u8]) -> Datagram {
        Datagram {
            sent: true,
            bytes: bytes.to_vec(),
        }
    }

    fn received(bytes: &[u8]) -> Datagram {
        Datagram {
            sent: false,
            bytes: bytes.to_vec(),
        }
    }

    #[test]
    fn the_rfc_initials_open_to_their_hellos_and_key_shares() {
        let (client, server) = vectors();
        assert_eq!((client.len(), server.len()), (1200, 135));
        let h = hellos_and_flight(&[sent(&client), received(&server)]).0;
        // RFC 9001 A.2: a 241-byte ClientHello (CRYPTO frame of length 0xf1), one X25519 share.
        assert_eq!(h.client.len(), 241);
        assert_eq!(
            key_shares_of_messages(&h.client),
            Some((1, vec![(0x001d, 32)]))
        );
        // A.3: a ServerHello of 90 bytes with X25519's share, after an ACK frame.
        assert_eq!(h.server.len(), 90);
        assert_eq!(
            key_shares_of_messages(&h.server),
            Some((2, vec![(0x001d, 32)]))
        );
        assert!(!opens_with_hello_retry(&h.server));
    }

    #[test]
    fn a_server_initial_opens_only_with_the_keys_of_the_id_it_answers() {
        let (mut client, server) = vectors();
        // Another Destination Connection ID gives other keys: nothing opens.
        client[6] ^= 1;
        let h = hellos_and_flight(&[sent(&client), received(&server)]).0;
        assert!(h.client.is_empty() && h.server.is_empty(), "{h:?}");
        // A packet altered in flight fails its AEAD tag.
        let (client, mut server) = vectors();
        server[60] ^= 1;
        let h = hellos_and_flight(&[sent(&client), received(&server)]).0;
        assert_eq!(h.client.len(), 241);
        assert!(h.server.is_empty());
    }

    #[test]
    fn the_wire_counts_the_flights_and_leaves_the_retries_out() {
        let (client, server) = vectors();
        // A Retry (long header, type 3) and a datagram of 1-RTT packets (short header), which a
        // server may send with its flight (quic-go's NEW_CONNECTION_ID frames).
        let retry = [[0xf0u8].as_slice(), &VERSION.to_be_bytes(), &[0; 40]].concat();
        let one_rtt = [0x40u8; 30];
        let (w, h) = read_datagrams(&[
            sent(&client),
            received(&retry),
            sent(&client),
            received(&server),
            received(&server),
            received(&one_rtt),
        ]);
        assert_eq!(
            (w.first_datagrams, w.first_bytes, w.first_smallest),
            (1, 1200, 1200)
        );
        assert_eq!(w.sent, 2400);
        assert!(w.retry && !w.token);
        assert_eq!((w.retry_datagrams, w.retry_bytes), (1, 45));
        assert_eq!((w.flight_datagrams, w.flight_bytes), (3, 300));
        assert_eq!(w.version, Some(VERSION));
        assert_eq!(h.server.len(), 90);
    }

    /// A client Initial packet of `frames` to `dcid`, padded to 1,200 bytes, protected as RFC 9001
    /// section 5 says (a 4-byte packet number, so the sample starts the ciphertext).
    fn seal(dcid: &[u8], pn: u32, frames: &[u8]) -> Vec<u8> {
        let k = keys(dcid).unwrap().local;
        let header_len = 1 + 4 + 1 + dcid.len() + 1 + 1 + 2 + 4;
        let mut payload = frames.to_vec();
        payload.resize(1200 - header_len - 16, 0);
        let length = (payload.len() + 4 + 16) as u16 | 0x4000;
        let mut header = vec![0xc3];
        header.extend(VERSION.to_be_bytes());
        header.push(dcid.len() as u8);
        header.extend(dcid);
        header.extend([0, 0]);
        header.extend(length.to_be_bytes());
        header.extend(pn.to_be_bytes());
        let tag = k
            .packet
            .encrypt_in_place(u64::from(pn), &header, &mut payload)
            .unwrap();
        payload.extend(tag.as_ref());
        let (first, rest) = header.split_at_mut(1);
        let at = rest.len() - 4;
        k.header
            .encrypt_in_place(&payload[..16], &mut first[0], &mut rest[at..])
            .unwrap();
        [header, payload].concat()
    }

    #[test]
    fn the_initial_flight_is_the_datagrams_up_to_the_whole_clienthello() {
        let (client, server) = vectors();
        let hello = hellos_and_flight(&[sent(&client)]).0.client;
        let dcid = &client[6..14];
        let crypto = |offset: u16, data: &[u8]| {
            // Offset and length as 2-byte variable-length integers (RFC 9000 section 16).
            let two = |v: u16| (v | 0x4000).to_be_bytes();
            [&[0x06][..], &two(offset), &two(data.len() as u16), data].concat()
        };
        let one = seal(dcid, 0, &crypto(0, &hello[..120]));
        let two = seal(dcid, 1, &crypto(120, &hello[120..]));
        // The server's answer noted between the client's two datagrams (the Go client reads on a
        // goroutine of its own): the flight is still both.
        let (w, h) = read_datagrams(&[sent(&one), received(&server), sent(&two)]);
        assert_eq!(h.client, hello);
        assert_eq!((w.first_datagrams, w.first_bytes), (2, 2400));
        // A ClientHello that never completes leaves the wire's own reading.
        let (w, _) = read_datagrams(&[sent(&one), received(&server)]);
        assert_eq!((w.first_datagrams, w.first_bytes), (1, 1200));
    }

    #[test]
    fn a_crypto_stream_is_put_together_by_offset_and_stops_at_a_gap() {
        let mut s = Stream::default();
        // CRYPTO at offset 3 ("def"), PADDING, PING, then CRYPTO at 0 ("abc").
        s.add(&[
            0x06, 3, 3, b'd', b'e', b'f', 0x00, 0x01, 0x06, 0, 3, b'a', b'b', b'c',
        ]);
        assert_eq!(s.contiguous(), b"abcdef");
        // An ACK with one more range and ECN counts, then CRYPTO past a gap: not contiguous.
        s.add(&[0x03, 9, 0, 1, 2, 1, 1, 0, 0, 0, 0x06, 10, 1, b'z']);
        assert_eq!(s.contiguous(), b"abcdef");
        // A frame an Initial may not carry ends the packet.
        s.add(&[0x08, 0x06, 6, 1, b'g']);
        assert_eq!(s.contiguous(), b"abcdef");
        s.add(&[0x06, 6, 1, b'g']);
        assert_eq!(s.contiguous(), b"abcdefg");
        // A shorter retransmission from an offset already held leaves the longer.
        s.add(&[0x06, 3, 1, b'd']);
        assert_eq!(s.contiguous(), b"abcdefg");
    }

    #[test]
    fn malformed_datagrams_yield_nothing_and_never_panic() {
        let (client, server) = vectors();
        for cut in [0, 1, 5, 7, 20, 40, 134] {
            let (h, flight) = hellos_and_flight(&[
                sent(&client[..cut.min(client.len())]),
                received(&server[..cut]),
            ]);
            assert!(h.server.is_empty() && flight.is_none(), "{cut}");
        }
        assert_eq!(initial_token_len(&client), Some(0));
        assert_eq!(varint(&[0x7b, 0xbd], 0), Some((15_293, 2)));
        assert_eq!(
            varint(&[0xc2, 0x19, 0x7c, 0x5e, 0xff, 0x14, 0xe8, 0x8c], 0).map(|v| v.0),
            Some(151_288_809_941_952_652)
        );
        assert_eq!(varint(&[0x40], 0), None);
    }
}
