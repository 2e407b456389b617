package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// payload is the 32-byte message every connection echoes.
var payload = []byte("pqprof handshake echo payload 32")

// client holds what every connection shares: one tls.Config, made once as a
// real client would, without a session cache so that no handshake resumes.
type client struct {
	addr   string
	config *tls.Config
	// timeout bounds every connection, dial to close (ioTimeout when zero).
	timeout time.Duration
	// held are the connections `open` keeps (capacity's memory per held
	// connection: the server's side is measured); they close when the process ends.
	held []*tls.Conn
}

// deadline is how long a connection may take, dial to close.
func (c *client) deadline() time.Duration {
	if c.timeout > 0 {
		return c.timeout
	}
	return ioTimeout
}

// connection is one connection's figures, as `run` reports them.
// ServerFlightBytes is what the client had received when Handshake returned:
// the server's first flight, ServerHello to Finished, with its record headers
// (and a HelloRetryRequest, if one came). The Go client returns as soon as it
// has sent its Finished, before the server can answer that, and the echo
// server sends nothing more until the payload arrives, so the count is that
// flight and nothing else.
type connection struct {
	TotalNs           int64 `json:"total_ns"`
	ReadyNs           int64 `json:"ready_ns"`
	Sent              int64 `json:"sent"`
	Received          int64 `json:"received"`
	ServerFlightBytes int64 `json:"server_flight_bytes"`
	// Port is the client's TCP port and StartedNs CLOCK_MONOTONIC when the
	// clock started: the emulator's key to the connection's packets and the
	// start of its wire time.
	Port      int   `json:"port"`
	StartedNs int64 `json:"started_ns"`
	// Resumed says whether the handshake resumed a session: a resumed cell
	// counts one that fell back to a full handshake as failed.
	Resumed bool `json:"resumed"`
}

// runReport is the answer to `run`: each connection, what the process used
// over the n together, and its CPU time since it started (ProcessCPUNs, as
// `cpu` answers), from which the driver counts all the process's CPU, the
// reading of commands and the writing of answers too.
type runReport struct {
	Connections  []connection `json:"connections"`
	ProcessCPUNs int64        `json:"process_cpu_ns"`
	usageDelta
}

// cpuReport is the answer to `cpu`: the process's CPU time since it started.
type cpuReport struct {
	ProcessCPUNs int64 `json:"process_cpu_ns"`
}

// evidence is the answer to `evidence`. Scheme is the TLS 1.3 SignatureScheme
// code point of the server's CertificateVerify (inferred from the leaf's key,
// see leafKey); ChainBytes the DER length of each certificate the server sent,
// leaf first; ServerFlightBytes as in connection.
type evidence struct {
	Version           string              `json:"version"`
	Group             string              `json:"group"`
	Cipher            string              `json:"cipher"`
	CertKey           string              `json:"cert_key"`
	Scheme            tls.SignatureScheme `json:"scheme"`
	ChainBytes        []int               `json:"chain_bytes"`
	ServerFlightBytes int64               `json:"server_flight_bytes"`
	Resumed           bool                `json:"resumed"`
	FirstSentHex      string              `json:"first_sent_hex"`
	FirstReceivedHex  string              `json:"first_received_hex"`
}

// connector is what the commands drive: the TCP client, or with --quic the
// QUIC one (quic.go).
type connector interface {
	evidence() (any, error)
	run(n int, reset bool) (runReport, error)
	open() (heldReport, error)
}

func clientCmd(args []string) error {
	fs := newFlags("client")
	group := fs.String("group", "", "the only TLS group to offer (X25519, X25519MLKEM768, ...)")
	addr := fs.String("addr", "", "server address, 127.0.0.1:PORT")
	caPath := fs.String("ca", "", "DER certificate to trust: the root of the chain the server sends")
	timeoutS := fs.Int("timeout-s", int(ioTimeout/time.Second), "seconds a connection may take, dial to close")
	resumed := fs.Bool("resumed", false, "keep the ticket each connection brings and resume the next connection with it")
	second := fs.String("second-share", "", "a second group to offer after --group, with a key share (X25519 after X25519MLKEM768, as Go does by default)")
	overQUIC := fs.Bool("quic", false, "connect over QUIC (quic-go), not TCP")
	mode := fs.String("mode", "full", "with --quic: full, or token (present the NEW_TOKEN token the connection before brought)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *group == "" || *addr == "" || *caPath == "" {
		return errors.New("client needs --group, --addr and --ca")
	}
	if *timeoutS < 1 {
		return fmt.Errorf("--timeout-s %d: at least 1", *timeoutS)
	}
	id, err := requireGroup(*group)
	if err != nil {
		return err
	}
	curves := []tls.CurveID{id}
	if *second != "" {
		id2, err := requireGroup(*second)
		if err != nil {
			return err
		}
		curves = append(curves, id2)
	}
	der, err := os.ReadFile(*caPath)
	if err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return fmt.Errorf("%s: %w", *caPath, err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	c := &client{addr: *addr, timeout: time.Duration(*timeoutS) * time.Second, config: &tls.Config{
		MinVersion:       tls.VersionTLS13,
		MaxVersion:       tls.VersionTLS13,
		CurvePreferences: curves,
		RootCAs:          roots,
		ServerName:       "localhost",
	}}
	if *resumed {
		// One ticket kept: each connection's ticket resumes the next, once.
		c.config.ClientSessionCache = &onceCache{}
	}
	var conn connector = c
	if *overQUIC {
		if *resumed || *second != "" {
			return errors.New("--quic makes full and token handshakes: no --resumed or --second-share")
		}
		if conn, err = newQUICClient(c, *mode); err != nil {
			return err
		}
	} else if *mode != "full" {
		return fmt.Errorf("--mode %s needs --quic", *mode)
	}
	exitWithParent()
	// Failures are reported as JSON on stdout too, so that the driver reading
	// the answer to a command sees why it did not come.
	if err := commands(conn, os.Stdin, os.Stdout); err != nil {
		writeJSON(os.Stdout, map[string]string{"error": err.Error()})
		return err
	}
	return nil
}

// commands answers the commands on stdin until it closes: `evidence`,
// `run N` (N connections one after another; `run N reset`: each closed with a
// TCP reset, SO_LINGER 0, so that thousands a second leave no TIME_WAIT
// behind), `open` (one connection, kept open) and `cpu` (the process's CPU
// time so far). A connection that fails is
// answered {"error": ...} and the next command is read: over a lossy path a
// connection may time out, and the driver counts it. A command that is not
// one of these ends the client.
func commands(c connector, in io.Reader, out io.Writer) error {
	lines := bufio.NewScanner(in)
	for lines.Scan() {
		fields := strings.Fields(lines.Text())
		var answer any
		var err error
		switch {
		case len(fields) == 1 && fields[0] == "evidence":
			answer, err = c.evidence()
		case (len(fields) == 2 || len(fields) == 3 && fields[2] == "reset") && fields[0] == "run":
			n, perr := strconv.Atoi(fields[1])
			if perr != nil || n < 1 {
				return fmt.Errorf("run: %q is not a positive count", fields[1])
			}
			answer, err = c.run(n, len(fields) == 3)
		case len(fields) == 1 && fields[0] == "open":
			answer, err = c.open()
		case len(fields) == 1 && fields[0] == "cpu":
			var u usage
			u, err = readUsage()
			answer = cpuReport{ProcessCPUNs: u.cpuNs}
		case len(fields) == 0:
			continue
		default:
			return fmt.Errorf("unknown command %q (evidence, run N, run N reset, open, cpu)", lines.Text())
		}
		if err != nil {
			answer = map[string]string{"error": err.Error()}
		}
		if err := writeJSON(out, answer); err != nil {
			return err
		}
	}
	return lines.Err()
}

// evidence makes one connection and reports what was negotiated, with the
// first bytes each way so that the key shares can be checked on the wire.
func (c *client) evidence() (any, error) {
	var ev evidence
	var cs tls.ConnectionState
	wire, conn, err := c.connect(true, false, func(tc *tls.Conn) { cs = tc.ConnectionState() })
	if err != nil {
		return ev, err
	}
	n, err := readNegotiated(cs, wire.firstReceived)
	if err != nil {
		return ev, err
	}
	if cs.DidResume {
		// A resumption has no CertificateVerify: the certificates come from the session.
		n.scheme = 0
	}
	ev = evidence{
		Version:           "TLS 1.3",
		Group:             n.group.String(),
		Cipher:            tls.CipherSuiteName(cs.CipherSuite),
		CertKey:           n.certKey,
		Scheme:            n.scheme,
		ChainBytes:        n.chain,
		ServerFlightBytes: conn.ServerFlightBytes,
		Resumed:           cs.DidResume,
		FirstSentHex:      hex.EncodeToString(wire.firstSent),
		FirstReceivedHex:  hex.EncodeToString(wire.firstReceived),
	}
	return ev, nil
}

// negotiated is what a finished TLS 1.3 handshake shows the client: the
// group, the leaf's key and the CertificateVerify scheme it implies, and the
// DER length of each certificate received, leaf first.
type negotiated struct {
	group   tls.CurveID
	certKey string
	scheme  tls.SignatureScheme
	chain   []int
}

// readNegotiated reads a client's connection state (received: its first
// bytes, whose ServerHello must agree on the group, when there are any), and
// refuses anything but TLS 1.3 with a certificate.
func readNegotiated(cs tls.ConnectionState, received []byte) (negotiated, error) {
	var n negotiated
	id, err := negotiatedGroup(cs, received)
	if err != nil {
		return n, err
	}
	if cs.Version != tls.VersionTLS13 {
		return n, fmt.Errorf("negotiated %s, not TLS 1.3", tls.VersionName(cs.Version))
	}
	if len(cs.PeerCertificates) == 0 {
		return n, errors.New("the server sent no certificate")
	}
	n.group = id
	n.certKey, n.scheme = leafKey(cs.PeerCertificates[0].PublicKey)
	n.chain = make([]int, len(cs.PeerCertificates))
	for i, c := range cs.PeerCertificates {
		n.chain[i] = len(c.Raw)
	}
	return n, nil
}

// run makes n connections one after another and reports each, with the
// process's CPU time and allocations for the n together; with reset, each
// closes with a TCP reset.
func (c *client) run(n int, reset bool) (runReport, error) {
	return runConnections(n, func() (connection, error) {
		_, conn, err := c.connect(false, reset, nil)
		return conn, err
	})
}

// runConnections makes n connections with one, one after another, and
// reports each, with the process's CPU time and allocations for the n
// together.
func runConnections(n int, one func() (connection, error)) (runReport, error) {
	report := runReport{Connections: make([]connection, 0, n)}
	before, err := readUsage()
	if err != nil {
		return report, err
	}
	for range n {
		conn, err := one()
		if err != nil {
			return report, err
		}
		report.Connections = append(report.Connections, conn)
	}
	after, err := readUsage()
	if err != nil {
		return report, err
	}
	report.usageDelta = after.since(before)
	report.ProcessCPUNs = after.cpuNs
	return report, nil
}

// heldReport is the answer to `open`: the connections now held.
type heldReport struct {
	Held int `json:"held"`
}

// open makes one connection (handshake and echo, as every connection's) and
// keeps it open, as a client that stays connected does.
func (c *client) open() (heldReport, error) {
	raw, err := c.dialTCP(false)
	if err != nil {
		return heldReport{}, err
	}
	raw.SetDeadline(time.Now().Add(c.deadline()))
	tc := tls.Client(raw, c.config)
	if err := tc.Handshake(); err != nil {
		tc.Close()
		return heldReport{}, fmt.Errorf("handshake: %w", err)
	}
	if err := echoPayload(tc); err != nil {
		tc.Close()
		return heldReport{}, err
	}
	// A held connection idles: no deadline may end it.
	raw.SetDeadline(time.Time{})
	c.held = append(c.held, tc)
	return heldReport{Held: len(c.held)}, nil
}

// dialTCP opens the TCP connection; with reset, closing it sends a TCP reset
// (SO_LINGER 0).
func (c *client) dialTCP(reset bool) (net.Conn, error) {
	dialer := net.Dialer{Timeout: c.deadline()}
	raw, err := dialer.Dial("tcp", c.addr)
	if err != nil {
		return nil, err
	}
	if reset {
		if err := raw.(*net.TCPConn).SetLinger(0); err != nil {
			raw.Close()
			return nil, err
		}
	}
	return raw, nil
}

// echoPayload sends the payload and checks that the same bytes come back.
func echoPayload(tc *tls.Conn) error {
	if _, err := tc.Write(payload); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	echoed := make([]byte, len(payload))
	if _, err := io.ReadFull(tc, echoed); err != nil {
		return fmt.Errorf("read: %w", err)
	}
	if !bytes.Equal(echoed, payload) {
		return fmt.Errorf("the server echoed %q, not the payload", echoed)
	}
	return nil
}

// connect runs one connection, timed from before the TCP connect: dial,
// handshake (ready), echo the payload, close (total). The byte counts are
// those on the TCP socket; the server's flight is the received count when the
// handshake returned. afterHandshake, if set, runs after the ready
// timestamp is taken, outside the timing that matters for `run`. With reset,
// the socket closes with a TCP reset (SO_LINGER 0).
func (c *client) connect(capture, reset bool, afterHandshake func(*tls.Conn)) (*countingConn, connection, error) {
	var conn connection
	t0, startedNs := startClock()
	conn.StartedNs = startedNs
	raw, err := c.dialTCP(reset)
	if err != nil {
		return nil, conn, err
	}
	if a, ok := raw.LocalAddr().(*net.TCPAddr); ok {
		conn.Port = a.Port
	}
	raw.SetDeadline(t0.Add(c.deadline()))
	wire := &countingConn{Conn: raw, capture: capture}
	tc := tls.Client(wire, c.config)
	defer tc.Close()
	if err := tc.Handshake(); err != nil {
		return nil, conn, fmt.Errorf("handshake: %w", err)
	}
	conn.ReadyNs = int64(time.Since(t0))
	conn.ServerFlightBytes = wire.received
	conn.Resumed = tc.ConnectionState().DidResume
	if afterHandshake != nil {
		afterHandshake(tc)
	}
	if err := echoPayload(tc); err != nil {
		return nil, conn, err
	}
	if err := tc.Close(); err != nil {
		return nil, conn, fmt.Errorf("close: %w", err)
	}
	conn.TotalNs = int64(time.Since(t0))
	conn.Sent, conn.Received = wire.sent, wire.received
	return wire, conn, nil
}

// onceCache keeps the last ticket a connection brought and gives it out
// once: crypto/tls's LRU cache keeps a ticket after Get, so a connection
// that brought none would let the next resume with an older one, where pqprof
// says each connection resumes with the ticket the one before it brought (as
// rustls's store and pqprof's OpenSSL client do). A connection without a
// ticket to offer makes a full handshake, which the server's count shows.
type onceCache struct {
	mu      sync.Mutex
	session *tls.ClientSessionState
}

func (c *onceCache) Get(string) (*tls.ClientSessionState, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.session
	c.session = nil
	return s, s != nil
}

func (c *onceCache) Put(_ string, s *tls.ClientSessionState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.session = s
}
