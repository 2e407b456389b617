//! What crosses the wire: a stream wrapper that counts bytes each way and keeps the first flight of
//! each direction, for the parsers in `parse::tls` and `parse::ssh`.

use std::io::{Read, Write};

/// Bytes kept from the start of each direction: enough for a hybrid ClientHello.
const KEEP: usize = 8192;

pub(crate) struct Counted<S> {
    pub(crate) inner: S,
    pub(crate) sent: u64,
    pub(crate) received: u64,
    pub(crate) first_sent: Vec<u8>,
    pub(crate) first_received: Vec<u8>,
    /// The local port of the socket under it (0: none or not known).
    pub(crate) port: u16,
}

impl<S> Counted<S> {
    pub(crate) fn new(inner: S) -> Self {
        Counted {
            inner,
            sent: 0,
            received: 0,
            first_sent: Vec::new(),
            first_received: Vec::new(),
            port: 0,
        }
    }

    /// The counts and first flights, without the stream (a TLS stream may keep the socket).
    pub(crate) fn summary(&self) -> Counted<()> {
        Counted {
            inner: (),
            sent: self.sent,
            received: self.received,
            first_sent: self.first_sent.clone(),
            first_received: self.first_received.clone(),
            port: self.port,
        }
    }
}

impl<S> std::fmt::Debug for Counted<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Counted {{ sent: {}, received: {} }}",
            self.sent, self.received
        )
    }
}

impl Counted<std::net::TcpStream> {
    /// A connected socket's counts, with its local port.
    pub(crate) fn tcp(inner: std::net::TcpStream) -> Self {
        let port = inner.local_addr().map_or(0, |a| a.port());
        Counted {
            port,
            ..Counted::new(inner)
        }
    }
}

/// Appends to a first-flight buffer up to its limit.
pub(crate) fn keep(buf: &mut Vec<u8>, data: &[u8]) {
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

/// A connected socket's maximum segment size (TCP_MAXSEG).
pub(crate) fn mss(sock: &std::net::TcpStream) -> std::io::Result<u32> {
    use std::os::fd::AsRawFd;
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `v`, an int of that size, on an open fd.
    let r = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_MAXSEG,
            (&mut v as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(v.max(0) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

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
