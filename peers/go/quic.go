//go:build quic

package main

// The QUIC client and server: quic-go (Debian's package, fetched by
// quic-deps.sh and built in GOPATH mode by build.sh with the tag `quic`) over
// crypto/tls, the same TLS configurations as the TCP client and server, the
// handshake carried in QUIC v1 packets over UDP (RFC 9000 and 9001).

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/qlog"
	"github.com/quic-go/quic-go/qlogwriter"
)

// quicGoVersion is the quic-go package built in (build.sh sets it from the
// package's file name).
var quicGoVersion = "quic-go"

// quicBuilt says this peer has its QUIC client and server.
func quicBuilt() string { return quicGoVersion }

// quicALPN is the application protocol both sides name: QUIC's TLS requires
// one (RFC 9001 section 8.1), and crypto/tls refuses a QUIC handshake without.
const quicALPN = "pqprof"

// quicConfig is quic-go's configuration for both sides: datagrams stay at
// QUIC's 1,200 bytes (no path MTU discovery, as pqprof's quinn), so that the
// two QUIC stacks' flights are counted in the same datagrams; tokens, when
// given, keep the NEW_TOKEN tokens servers send.
func quicConfig(timeout time.Duration, tokens quic.TokenStore) *quic.Config {
	return &quic.Config{
		InitialPacketSize:       1200,
		DisablePathMTUDiscovery: true,
		HandshakeIdleTimeout:    timeout,
		MaxIdleTimeout:          timeout,
		TokenStore:              tokens,
	}
}

// datagram is one UDP payload the client sent or received before its
// handshake completed, for the evidence.
type datagram struct {
	Sent bool   `json:"sent"`
	Hex  string `json:"hex"`
}

// quicWire counts a client socket's UDP payloads and, with capture, keeps
// each datagram until the handshake completes. quic-go reads on a goroutine
// of its own, so the counts are guarded.
type quicWire struct {
	net.PacketConn
	mu             sync.Mutex
	sent, received int64
	capture        bool
	datagrams      []datagram
}

// WriteTo notes the datagram before it goes: quic-go's reader notes what
// comes back on a goroutine of its own, and an answer noted before the
// datagram it answers would put the client's Initial flight after the
// server's (a UDP datagram goes whole or not at all, and a failed send ends
// the connection).
func (w *quicWire) WriteTo(p []byte, addr net.Addr) (int, error) {
	w.note(true, p)
	return w.PacketConn.WriteTo(p, addr)
}

func (w *quicWire) ReadFrom(p []byte) (int, net.Addr, error) {
	n, addr, err := w.PacketConn.ReadFrom(p)
	w.note(false, p[:max(n, 0)])
	return n, addr, err
}

func (w *quicWire) note(sent bool, p []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if sent {
		w.sent += int64(len(p))
	} else {
		w.received += int64(len(p))
	}
	if w.capture && len(p) > 0 {
		w.datagrams = append(w.datagrams, datagram{Sent: sent, Hex: hex.EncodeToString(p)})
	}
}

// ready ends the capture: the handshake completed.
func (w *quicWire) ready() []datagram {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.capture = false
	return w.datagrams
}

// handshakeMark ends a wire's capture when the client's handshake completes,
// from quic-go's event log: quic-go records the negotiated ALPN in its
// connection loop as it completes the handshake (connection.go,
// handleHandshakeComplete), before it sends the client's Finished. So every
// datagram noted by then came before the server could answer that Finished
// (its HANDSHAKE_DONE, NEW_TOKEN and tickets), and the server's whole flight,
// the 1-RTT datagrams it sends with it included, had been read: its last
// datagram was read before the loop could process it. Dial returns later, on
// another goroutine, by when an answer to the Finished may have come on
// loopback. Only the evidence connection logs events: logging costs each
// packet an event.
type handshakeMark struct{ wire *quicWire }

func (m handshakeMark) AddProducer() qlogwriter.Recorder { return m }

func (m handshakeMark) SupportsSchemas(string) bool { return true }

func (m handshakeMark) RecordEvent(e qlogwriter.Event) {
	if _, ok := e.(qlog.ALPNInformation); ok {
		m.wire.ready()
	}
}

func (m handshakeMark) Close() error { return nil }

func (w *quicWire) counts() (int64, int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sent, w.received
}

// quicClient makes QUIC connections to one server: full handshakes, or with
// a token store presenting in each connection's first Initial the NEW_TOKEN
// token the connection before brought (RFC 9000 section 8.1.3).
type quicClient struct {
	addr    *net.UDPAddr
	config  *tls.Config
	timeout time.Duration
	tokens  quic.TokenStore
	// The keys a transport would otherwise draw from crypto/rand as it
	// starts: made once, as quinn's endpoint is made before the clock.
	resetKey quic.StatelessResetKey
	tokenKey quic.TokenGeneratorKey
}

// quicEvidence is the answer to `evidence` over QUIC: what crypto/tls
// negotiated, and every datagram each way until the handshake completed (the
// driver reads the flights, the token, any Retry and both key shares from
// them).
type quicEvidence struct {
	Group      string              `json:"group"`
	Cipher     string              `json:"cipher"`
	CertKey    string              `json:"cert_key"`
	Scheme     tls.SignatureScheme `json:"scheme"`
	ChainBytes []int               `json:"chain_bytes"`
	Resumed    bool                `json:"resumed"`
	Datagrams  []datagram          `json:"datagrams"`
}

func newQUICClient(c *client, mode string) (connector, error) {
	// The client's socket is wrapped (quicWire), so quic-go cannot size its
	// receive buffer and would say so on every connection; the kernel's
	// default holds a handshake's flight.
	os.Setenv("QUIC_GO_DISABLE_RECEIVE_BUFFER_WARNING", "true")
	addr, err := net.ResolveUDPAddr("udp", c.addr)
	if err != nil {
		return nil, err
	}
	q := &quicClient{addr: addr, config: c.config.Clone(), timeout: c.deadline()}
	q.config.NextProtos = []string{quicALPN}
	if _, err := rand.Read(q.resetKey[:]); err != nil {
		return nil, err
	}
	if _, err := rand.Read(q.tokenKey[:]); err != nil {
		return nil, err
	}
	switch mode {
	case "full":
	case "token":
		// One server, each token used once (quic-go's store pops what it gives).
		q.tokens = quic.NewLRUTokenStore(1, 2)
	default:
		return nil, fmt.Errorf("--mode %q: the QUIC client makes full and token handshakes", mode)
	}
	return q, nil
}

// connect runs one connection, timed from before the UDP socket opens: the
// handshake (ready: quic-go's Dial returns once crypto/tls has verified the
// server's Finished and written the client's), a stream with the 32-byte
// echo, then CONNECTION_CLOSE (close: quic-go sends it before CloseWithError
// returns). With capture, the datagrams until the handshake completed.
func (q *quicClient) connect(capture bool) (connection, []datagram, *quic.Conn, error) {
	var conn connection
	t0, startedNs := startClock()
	conn.StartedNs = startedNs
	udp, err := net.ListenUDP("udp", nil)
	if err != nil {
		return conn, nil, nil, err
	}
	defer udp.Close()
	conn.Port = udp.LocalAddr().(*net.UDPAddr).Port
	wire := &quicWire{PacketConn: udp, capture: capture}
	tr := &quic.Transport{Conn: wire, StatelessResetKey: &q.resetKey, TokenGeneratorKey: &q.tokenKey}
	defer tr.Close()
	ctx, cancel := context.WithDeadline(context.Background(), t0.Add(q.timeout))
	defer cancel()
	config := quicConfig(q.timeout, q.tokens)
	if capture {
		config.Tracer = func(context.Context, bool, quic.ConnectionID) qlogwriter.Trace {
			return handshakeMark{wire}
		}
	}
	qc, err := tr.Dial(ctx, q.addr, q.config, config)
	if err != nil {
		return conn, nil, nil, fmt.Errorf("handshake: %w", err)
	}
	conn.ReadyNs = int64(time.Since(t0))
	seen := wire.ready()
	if err := quicEcho(ctx, qc); err != nil {
		qc.CloseWithError(1, "")
		return conn, nil, nil, err
	}
	if err := qc.CloseWithError(0, ""); err != nil {
		return conn, nil, nil, fmt.Errorf("close: %w", err)
	}
	conn.TotalNs = int64(time.Since(t0))
	conn.Sent, conn.Received = wire.counts()
	return conn, seen, qc, nil
}

// quicEcho sends the payload on a new stream, finishes it, and checks that
// the same bytes come back, finished.
func quicEcho(ctx context.Context, qc *quic.Conn) error {
	str, err := qc.OpenStreamSync(ctx)
	if err != nil {
		return fmt.Errorf("stream: %w", err)
	}
	if _, err := str.Write(payload); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if err := str.Close(); err != nil {
		return fmt.Errorf("finish: %w", err)
	}
	if d, ok := ctx.Deadline(); ok {
		str.SetReadDeadline(d)
	}
	echoed, err := io.ReadAll(str)
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	if string(echoed) != string(payload) {
		return fmt.Errorf("the server echoed %q, not the payload", echoed)
	}
	return nil
}

func (q *quicClient) evidence() (any, error) {
	_, seen, qc, err := q.connect(true)
	if err != nil {
		return nil, err
	}
	cs := qc.ConnectionState().TLS
	n, err := readNegotiated(cs, nil)
	if err != nil {
		return nil, err
	}
	return quicEvidence{
		Group:      n.group.String(),
		Cipher:     tls.CipherSuiteName(cs.CipherSuite),
		CertKey:    n.certKey,
		Scheme:     n.scheme,
		ChainBytes: n.chain,
		Resumed:    cs.DidResume,
		Datagrams:  seen,
	}, nil
}

func (q *quicClient) run(n int, reset bool) (runReport, error) {
	if reset {
		return runReport{}, errors.New("a QUIC connection has no TCP reset")
	}
	return runConnections(n, func() (connection, error) {
		c, _, _, err := q.connect(false)
		return c, err
	})
}

func (q *quicClient) open() (heldReport, error) {
	return heldReport{}, errors.New("the QUIC client does not hold connections")
}

// quicServe is `serve --quic`: every connection on one UDP socket, each
// stream echoed back, a connection counted once the client has closed it
// after its echo. With mode retry every first Initial is answered with a
// Retry (RFC 9000 section 8.1.2); the server sends one NEW_TOKEN frame per
// connection in every mode (quic-go always does), which only a token
// client presents.
func quicServe(s *server, config *tls.Config, bind, mode string) error {
	config = config.Clone()
	config.NextProtos = []string{quicALPN}
	udp, held, err := quicSocket(bind)
	if err != nil {
		return err
	}
	defer held.Close()
	tr := &quic.Transport{Conn: udp}
	switch mode {
	case "full", "token":
	case "retry":
		tr.VerifySourceAddress = func(net.Addr) bool { return true }
	default:
		return fmt.Errorf("--mode %q: the QUIC server makes full, token and retry handshakes", mode)
	}
	ln, err := tr.Listen(config, quicConfig(s.deadline(), nil))
	if err != nil {
		return err
	}
	defer ln.Close()
	fmt.Printf("port %d\n", udp.LocalAddr().(*net.UDPAddr).Port)
	exitWithParent()
	go func() {
		for {
			qc, err := ln.Accept(context.Background())
			if err != nil {
				return
			}
			go func() {
				if quicServeOne(qc, s.deadline()) == nil {
					s.count(false)
				}
			}()
		}
	}()
	return s.control(os.Stdin, os.Stdout)
}

// quicSocket binds a UDP socket on a port whose TCP number it also holds
// while the server lives: the emulator counts each server's packets by port,
// so no TCP server of the same cell may share it (pqprof's own QUIC server
// does the same, src/stack/mod.rs, Listener::bind).
func quicSocket(bind string) (*net.UDPConn, net.Listener, error) {
	var last error
	for range 16 {
		tcp, err := net.Listen("tcp", net.JoinHostPort(bind, "0"))
		if err != nil {
			return nil, nil, err
		}
		addr := *tcp.Addr().(*net.TCPAddr)
		udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: addr.IP, Port: addr.Port})
		if err == nil {
			return udp, tcp, nil
		}
		tcp.Close()
		last = err
	}
	return nil, nil, fmt.Errorf("no port of %s free for both TCP and UDP in 16 tries: %w", bind, last)
}

// quicServeOne echoes the connection's stream, then waits for the client to
// close the connection.
func quicServeOne(qc *quic.Conn, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	str, err := qc.AcceptStream(ctx)
	if err != nil {
		return err
	}
	str.SetReadDeadline(time.Now().Add(timeout))
	got, err := io.ReadAll(str)
	if err != nil {
		return err
	}
	if _, err := str.Write(got); err != nil {
		return err
	}
	if err := str.Close(); err != nil {
		return err
	}
	select {
	case <-qc.Context().Done():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
