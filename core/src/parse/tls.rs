//! The key_share of a TLS 1.3 ClientHello / ServerHello, parsed from the first flight of bytes a
//! connection sent or received (RFC 8446 sections 4.1.2, 4.1.3 and 4.2.8). Never panics on any input.

/// A key share: (named group code point, key_exchange length in bytes).
pub(crate) type Share = (u16, usize);

struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u8(&mut self) -> Option<usize> {
        self.take(1).map(|b| b[0] as usize)
    }
    fn u16(&mut self) -> Option<usize> {
        self.take(2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]) as usize)
    }
    fn u24(&mut self) -> Option<usize> {
        self.take(3)
            .map(|b| (b[0] as usize) << 16 | (b[1] as usize) << 8 | b[2] as usize)
    }
}

/// The handshake messages carried in the leading records of a flight (type 22 only).
fn handshake_bytes(flight: &[u8]) -> Vec<u8> {
    let mut c = Cursor(flight);
    let mut out = Vec::new();
    while let (Some(kind), Some(_), Some(len)) = (c.u8(), c.take(2), c.u16()) {
        let Some(body) = c.take(len) else { break };
        if kind != 22 {
            break;
        }
        out.extend_from_slice(body);
    }
    out
}

/// The random a HelloRetryRequest carries in place of a ServerHello's: SHA-256 of
/// "HelloRetryRequest" (RFC 8446 §4.1.3).
pub(crate) const HELLO_RETRY_RANDOM: [u8; 32] = [
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
    0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
];

/// Whether a flight received by a client opens with a HelloRetryRequest: a ServerHello (msg type
/// 2) whose random is `HELLO_RETRY_RANDOM`.
pub fn is_hello_retry(flight: &[u8]) -> bool {
    opens_with_hello_retry(&handshake_bytes(flight))
}

/// Whether handshake messages (QUIC's CRYPTO stream: no records) open with a HelloRetryRequest.
pub fn opens_with_hello_retry(hs: &[u8]) -> bool {
    let mut c = Cursor(hs);
    c.u8() == Some(2)
        && c.u24().is_some()
        && c.take(2).is_some()
        && c.take(32) == Some(&HELLO_RETRY_RANDOM[..])
}

/// The key shares of the first ClientHello (msg type 1) or ServerHello (2) in a flight.
pub fn key_shares(flight: &[u8]) -> Option<(u8, Vec<Share>)> {
    key_shares_of_messages(&handshake_bytes(flight))
}

/// The key shares of handshake messages that open with a ClientHello or ServerHello (QUIC's
/// CRYPTO stream: no records around them).
pub fn key_shares_of_messages(hs: &[u8]) -> Option<(u8, Vec<Share>)> {
    let mut c = Cursor(hs);
    let msg = c.u8()? as u8;
    if msg != 1 && msg != 2 {
        return None; // neither ClientHello nor ServerHello
    }
    let len = c.u24()?;
    let mut b = Cursor(c.take(len)?);
    b.take(2 + 32)?; // legacy_version, random
    let sid = b.u8()?;
    b.take(sid)?;
    if msg == 1 {
        let cs = b.u16()?;
        b.take(cs)?;
        let comp = b.u8()?;
        b.take(comp)?;
    } else {
        b.take(2 + 1)?; // cipher_suite, legacy_compression_method
    }
    let ext_len = b.u16()?;
    let mut e = Cursor(b.take(ext_len)?);
    while let (Some(kind), Some(len)) = (e.u16(), e.u16()) {
        let data = e.take(len)?;
        if kind != 0x0033 {
            continue;
        }
        let mut k = Cursor(data);
        let mut shares = Vec::new();
        if msg == 1 {
            let list = k.u16()?;
            let mut l = Cursor(k.take(list)?);
            while let (Some(group), Some(n)) = (l.u16(), l.u16()) {
                l.take(n)?;
                shares.push((group as u16, n));
            }
        } else {
            let group = k.u16()?;
            let n = k.u16()?;
            // The share must be there, not just announced (found by the fuzz target
            // fuzz/fuzz_targets/tls_key_share.rs).
            k.take(n)?;
            shares.push((group as u16, n));
        }
        return Some((msg, shares));
    }
    Some((msg, Vec::new()))
}

/// The whole TLS records at the start of `bytes`, in order: (content type, the record with its
/// 5-byte header). A record cut short ends the list.
pub fn records(bytes: &[u8]) -> Vec<(u8, &[u8])> {
    let mut out = Vec::new();
    let mut rest = bytes;
    while rest.len() >= 5 {
        let len = 5 + usize::from(u16::from_be_bytes([rest[3], rest[4]]));
        let Some(record) = rest.get(..len) else { break };
        out.push((record[0], record));
        rest = &rest[len..];
    }
    out
}

/// The bytes on the wire of each ClientHello a client sent: its handshake records (22) that open
/// with message type 1, headers included.
pub fn client_hello_sizes(sent: &[u8]) -> Vec<u64> {
    records(sent)
        .into_iter()
        .filter(|(kind, r)| *kind == 22 && r.get(5) == Some(&1))
        .map(|(_, r)| r.len() as u64)
        .collect()
}

/// A server's records before its first encrypted one (application_data, 23): its ServerHello, or
/// its HelloRetryRequest, ChangeCipherSpec and ServerHello.
pub fn plaintext_records(received: &[u8]) -> Vec<u8> {
    records(received)
        .into_iter()
        .take_while(|(kind, _)| *kind != 23)
        .flat_map(|(_, r)| r.iter().copied())
        .collect()
}

/// Where a server's last ServerHello record starts in what it sent (after a retry, the one that
/// follows it): its flight runs from there to its Finished.
pub fn last_server_hello_at(received: &[u8]) -> Option<usize> {
    let mut at = 0;
    let mut found = None;
    for (kind, r) in records(received) {
        if kind == 23 {
            break;
        }
        if kind == 22 && r.get(5) == Some(&2) {
            found = Some(at);
        }
        at += r.len();
    }
    found
}

/// The key share of the last ServerHello in a server's plaintext records (after a retry, the
/// ServerHello that follows it), read across the records it spans: (group code point, bytes).
pub fn last_server_share(plaintext: &[u8]) -> Option<Share> {
    let at = last_server_hello_at(plaintext)?;
    match key_shares(&plaintext[at..])? {
        (2, shares) => shares.first().copied(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hello_retry_is_a_server_hello_with_the_rfcs_random() {
        // A record of type 22 holding ServerHello's type, length, version and random.
        let hello = |random: [u8; 32]| {
            let mut body = vec![2, 0, 0, 38, 3, 3];
            body.extend_from_slice(&random);
            let mut rec = vec![22, 3, 3, 0, body.len() as u8];
            rec.extend(body);
            rec
        };
        assert!(is_hello_retry(&hello(HELLO_RETRY_RANDOM)));
        assert!(!is_hello_retry(&hello([7; 32])));
        let mut client = hello(HELLO_RETRY_RANDOM);
        client[5] = 1; // a ClientHello with that random is not one
        assert!(!is_hello_retry(&client));
        assert!(!is_hello_retry(&[]));
        assert!(!is_hello_retry(&hello(HELLO_RETRY_RANDOM)[..20]));
    }

    fn record(body: &[u8]) -> Vec<u8> {
        let mut r = vec![22, 3, 1, (body.len() >> 8) as u8, body.len() as u8];
        r.extend_from_slice(body);
        r
    }

    fn hello(msg: u8, ext: &[u8]) -> Vec<u8> {
        let mut b = vec![3, 3];
        b.extend_from_slice(&[0u8; 32]);
        b.push(0); // session id
        if msg == 1 {
            b.extend_from_slice(&[0, 2, 0x13, 0x01, 1, 0]);
        } else {
            b.extend_from_slice(&[0x13, 0x01, 0]);
        }
        b.extend_from_slice(&(ext.len() as u16).to_be_bytes());
        b.extend_from_slice(ext);
        let mut h = vec![msg, 0, (b.len() >> 8) as u8, b.len() as u8];
        h.extend_from_slice(&b);
        h
    }

    #[test]
    fn client_and_server_shares() {
        // ClientHello: supported_versions, then key_share with X25519MLKEM768 (0x11EC), 1,216 bytes.
        let mut ks = vec![0x11, 0xEC];
        ks.extend_from_slice(&1216u16.to_be_bytes());
        ks.extend(std::iter::repeat_n(7u8, 1216));
        let mut ext = vec![0, 43, 0, 3, 2, 3, 4, 0, 0x33];
        ext.extend_from_slice(&((ks.len() + 2) as u16).to_be_bytes());
        ext.extend_from_slice(&(ks.len() as u16).to_be_bytes());
        ext.extend_from_slice(&ks);
        assert_eq!(
            key_shares(&record(&hello(1, &ext))),
            Some((1, vec![(0x11EC, 1216)]))
        );
        // ServerHello: one share of 1,120 bytes.
        let mut ext = vec![0, 0x33];
        ext.extend_from_slice(&(4u16 + 1120).to_be_bytes());
        ext.extend_from_slice(&[0x11, 0xEC]);
        ext.extend_from_slice(&1120u16.to_be_bytes());
        ext.extend(std::iter::repeat_n(1u8, 1120));
        assert_eq!(
            key_shares(&record(&hello(2, &ext))),
            Some((2, vec![(0x11EC, 1120)]))
        );
        // A ServerHello announcing more share bytes than it carries is refused (the crash the
        // tls_key_share target found, kept in fuzz/regressions/): group 0x2d00, length 7,424,
        // 32 bytes present.
        let crash = include_bytes!("../../../fuzz/regressions/tls_key_share-crash-4fd5bd47");
        assert_eq!(key_shares(crash), None);
        // Truncated input is None, not a panic.
        assert_eq!(key_shares(&record(&hello(2, &ext))[..60]), None);
        assert_eq!(key_shares(&[]), None);
    }

    #[test]
    fn whole_records_only_and_the_plaintext_ends_at_the_first_encrypted_one() {
        let bytes = [
            22, 3, 3, 0, 1, 1, 20, 3, 3, 0, 1, 1, 23, 3, 3, 0, 1, 9, 22, 3, 3, 0, 5, 1,
        ];
        let r = records(&bytes);
        assert_eq!(r.len(), 3, "the last record is cut short");
        assert_eq!(r[1], (20, &bytes[6..12]));
        assert_eq!(plaintext_records(&bytes), bytes[..12].to_vec());
        // A one-byte handshake record opening with type 1 counts as a ClientHello's record.
        assert_eq!(client_hello_sizes(&bytes), vec![6]);
        assert_eq!(last_server_share(&bytes), None);
        assert_eq!(last_server_hello_at(&bytes), None);
        // A ServerHello (type 2) after a first handshake record: the flight starts at 6.
        let two = [22, 3, 3, 0, 1, 2, 22, 3, 3, 0, 1, 2, 23, 3, 3, 0, 0];
        assert_eq!(last_server_hello_at(&two), Some(6));
    }
}
