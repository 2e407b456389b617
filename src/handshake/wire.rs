//! What crosses the wire: a stream wrapper that counts bytes each way (and keeps the first flight
//! of each direction), and a parser for the key_share in a TLS 1.3 ClientHello / ServerHello
//! (RFC 8446 sections 4.1.2, 4.1.3 and 4.2.8).

use std::io::{Read, Write};

/// Bytes kept from the start of each direction: enough for a hybrid ClientHello.
const KEEP: usize = 8192;

pub struct Counted<S> {
    pub inner: S,
    pub sent: u64,
    pub received: u64,
    pub first_sent: Vec<u8>,
    pub first_received: Vec<u8>,
}

impl<S> Counted<S> {
    pub fn new(inner: S) -> Self {
        Counted { inner, sent: 0, received: 0, first_sent: Vec::new(), first_received: Vec::new() }
    }

    /// The counts and first flights, without the stream (a TLS stream may keep the socket).
    pub fn summary(&self) -> Counted<()> {
        Counted { inner: (), sent: self.sent, received: self.received, first_sent: self.first_sent.clone(), first_received: self.first_received.clone() }
    }
}

impl<S> std::fmt::Debug for Counted<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Counted {{ sent: {}, received: {} }}", self.sent, self.received)
    }
}

/// Appends to a first-flight buffer up to its limit.
pub fn keep(buf: &mut Vec<u8>, data: &[u8]) {
    let room = KEEP.saturating_sub(buf.len());
    buf.extend_from_slice(&data[..data.len().min(room)]);
}

impl<S: Read> Read for Counted<S> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.received += n as u64;
        keep(&mut self.first_received, &buf[..n]);
        Ok(n)
    }
}

impl<S: Write> Write for Counted<S> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.sent += n as u64;
        keep(&mut self.first_sent, &buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// A key share: (named group code point, key_exchange length in bytes).
pub type Share = (u16, usize);

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
        self.take(2).map(|b| u16::from_be_bytes([b[0], b[1]]) as usize)
    }
    fn u24(&mut self) -> Option<usize> {
        self.take(3).map(|b| (b[0] as usize) << 16 | (b[1] as usize) << 8 | b[2] as usize)
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

/// The key shares of the first ClientHello (msg type 1) or ServerHello (2) in a flight.
pub fn key_shares(flight: &[u8]) -> Option<(u8, Vec<Share>)> {
    let hs = handshake_bytes(flight);
    let mut c = Cursor(&hs);
    let msg = c.u8()? as u8;
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
            shares.push((group as u16, n));
        }
        return Some((msg, shares));
    }
    Some((msg, Vec::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(key_shares(&record(&hello(1, &ext))), Some((1, vec![(0x11EC, 1216)])));
        // ServerHello: one share of 1,120 bytes.
        let mut ext = vec![0, 0x33];
        ext.extend_from_slice(&(4u16 + 1120).to_be_bytes());
        ext.extend_from_slice(&[0x11, 0xEC]);
        ext.extend_from_slice(&1120u16.to_be_bytes());
        ext.extend(std::iter::repeat_n(1u8, 1120));
        assert_eq!(key_shares(&record(&hello(2, &ext))), Some((2, vec![(0x11EC, 1120)])));
        // Truncated input is None, not a panic.
        assert_eq!(key_shares(&record(&hello(2, &ext))[..60]), None);
        assert_eq!(key_shares(&[]), None);
    }

    #[test]
    fn counting_stream_counts_both_ways() {
        let mut c = Counted::new(std::io::Cursor::new(vec![1u8, 2, 3]));
        let mut buf = [0u8; 2];
        assert_eq!(c.read(&mut buf).unwrap(), 2);
        c.write_all(&[9, 9, 9, 9]).unwrap();
        assert_eq!((c.received, c.sent), (2, 4));
        assert_eq!(c.first_received, vec![1, 2]);
    }
}
