package main

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
)

// captureLimit is how many of the first bytes each way the evidence keeps:
// enough for a ClientHello with an ML-KEM key share (about 1.4 kB) and the
// server's whole first flight, ServerHello to Finished, which with an ML-DSA-87
// leaf and intermediate (two 2,592-byte keys, three 4,627-byte signatures) is
// about 21 kB.
const captureLimit = 32 << 10

// countingConn counts the bytes crossing a TCP socket, below TLS, so that a
// handshake's wire cost includes record headers, alerts and close_notify. With
// capture set it also keeps the first captureLimit bytes each way. It is used
// by one goroutine at a time (the one driving the tls.Conn).
type countingConn struct {
	net.Conn
	sent, received int64
	capture        bool
	firstSent      []byte
	firstReceived  []byte
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.received += int64(n)
	if c.capture {
		c.firstReceived = appendCapped(c.firstReceived, p[:n])
	}
	return n, err
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.sent += int64(n)
	if c.capture {
		c.firstSent = appendCapped(c.firstSent, p[:n])
	}
	return n, err
}

func appendCapped(dst, p []byte) []byte {
	if room := captureLimit - len(dst); room < len(p) {
		p = p[:max(room, 0)]
	}
	return append(dst, p...)
}

// TLS code points used to read a ServerHello (RFC 8446 sections 4 and 4.2).
const (
	recordHandshake    = 22
	msgServerHello     = 2
	extensionKeyShare  = 0x0033
	serverHelloMinSize = 2 + 32 + 1 + 2 + 1 + 2 // version, random, session id length, suite, compression, extensions length
)

// serverHelloGroup reads the group of the key_share extension of the
// ServerHello at the start of what a client received. It is independent of
// crypto/tls's own account (ConnectionState.CurveID), and the only account on
// Go 1.24, which lacks that field. A HelloRetryRequest is a ServerHello too,
// and its key_share also starts with the selected group.
func serverHelloGroup(received []byte) (tls.CurveID, error) {
	if len(received) < 5 || received[0] != recordHandshake {
		return 0, errors.New("the server's first record is not a handshake record")
	}
	recLen := int(binary.BigEndian.Uint16(received[3:5]))
	rec := received[5:]
	if len(rec) < recLen {
		return 0, errors.New("the ServerHello record is cut short")
	}
	rec = rec[:recLen]
	if len(rec) < 4 || rec[0] != msgServerHello {
		return 0, errors.New("the first handshake message is not a ServerHello")
	}
	msgLen := int(rec[1])<<16 | int(rec[2])<<8 | int(rec[3])
	body := rec[4:]
	if len(body) < msgLen || msgLen < serverHelloMinSize {
		return 0, errors.New("the ServerHello spans records or is too short")
	}
	body = body[:msgLen]
	sidLen := int(body[34])
	rest := body[35:]
	if len(rest) < sidLen+5 {
		return 0, errors.New("the ServerHello is too short for its session id")
	}
	rest = rest[sidLen+3:] // session id, cipher suite, compression method
	extLen := int(binary.BigEndian.Uint16(rest))
	exts := rest[2:]
	if len(exts) != extLen {
		return 0, errors.New("the ServerHello's extensions length is wrong")
	}
	for len(exts) >= 4 {
		typ := binary.BigEndian.Uint16(exts)
		n := int(binary.BigEndian.Uint16(exts[2:]))
		if len(exts) < 4+n {
			return 0, errors.New("a ServerHello extension is cut short")
		}
		data := exts[4 : 4+n]
		if typ == extensionKeyShare {
			if len(data) < 2 {
				return 0, errors.New("the key_share extension is empty")
			}
			return tls.CurveID(binary.BigEndian.Uint16(data)), nil
		}
		exts = exts[4+n:]
	}
	return 0, fmt.Errorf("the ServerHello has no key_share extension")
}
