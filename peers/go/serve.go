package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ioTimeout bounds every connection, so that a stuck peer fails a run rather
// than hanging it.
const ioTimeout = 5 * time.Second

// payloadSize is the echo payload of seed 000's TLS operation.
const payloadSize = 32

// server counts the connections it has served since the last reset. Served
// one at a time (the handshake step), serial is held for the whole of a
// connection, so that `stats` waits for one in flight to finish: the client
// has its echo before the server's Close returns. Served concurrently (the
// network grid: a goroutine per connection, handshakes over a slow path must
// not wait for each other), `reset N` and `stats N` wait instead until N
// connections have been served since the last reset, as pqprof's own server
// does (src/stack/child.rs, server_main).
type server struct {
	serial     sync.Mutex
	concurrent bool
	// timeout bounds every connection (ioTimeout when zero).
	timeout time.Duration
	served  atomic.Int64
	// resumed counts the served connections that resumed a session.
	resumed atomic.Int64
	// base and resumedBase are the counts at the last reset; since the usage
	// then. They are the control goroutine's alone.
	base        int64
	resumedBase int64
	since       usage
}

// deadline is how long a connection may take, start to close.
func (s *server) deadline() time.Duration {
	if s.timeout > 0 {
		return s.timeout
	}
	return ioTimeout
}

func serveCmd(args []string) error {
	fs := newFlags("serve")
	group := fs.String("group", "", "the only TLS group to accept (X25519, X25519MLKEM768, ...)")
	certPath := fs.String("cert", "", "the certificates to send: a PEM chain, leaf first (leaf, intermediates), or one DER certificate")
	keyPath := fs.String("key", "", "PEM PKCS#8 private key of the leaf (ECDSA P-256; ML-DSA-44/65/87 from Go 1.27)")
	bind := fs.String("bind", "127.0.0.1", "the address to listen on (a port is chosen and printed)")
	concurrent := fs.Bool("concurrent", false, "serve each connection in its own goroutine, not one at a time")
	timeoutS := fs.Int("timeout-s", int(ioTimeout/time.Second), "seconds a connection may take, start to close")
	resumed := fs.Bool("resumed", false, "issue a session ticket per connection, and resume the connections that offer one")
	overQUIC := fs.Bool("quic", false, "serve over QUIC (quic-go) on a UDP port, not TCP")
	mode := fs.String("mode", "full", "with --quic: full, token (the same server: only the client differs) or retry (a Retry for every first Initial)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *group == "" || *certPath == "" || *keyPath == "" {
		return errors.New("serve needs --group, --cert and --key")
	}
	if *timeoutS < 1 {
		return fmt.Errorf("--timeout-s %d: at least 1", *timeoutS)
	}
	config, err := serverConfig(*group, *certPath, *keyPath)
	if err != nil {
		return err
	}
	// Stateless tickets, sealed with the keys Go makes per config (as OpenSSL's and rustls's
	// tickets are here): one per handshake, full or resumed.
	config.SessionTicketsDisabled = !*resumed
	s := &server{concurrent: *concurrent, timeout: time.Duration(*timeoutS) * time.Second}
	if s.since, err = readUsage(); err != nil {
		return err
	}
	if *overQUIC {
		if *resumed {
			return errors.New("--quic makes full, token and retry handshakes: no --resumed")
		}
		return quicServe(s, config, *bind, *mode)
	}
	if *mode != "full" {
		return fmt.Errorf("--mode %s needs --quic", *mode)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(*bind, "0"))
	if err != nil {
		return err
	}
	defer ln.Close()
	fmt.Printf("port %d\n", ln.Addr().(*net.TCPAddr).Port)
	exitWithParent()
	go s.accept(ln, config)
	return s.control(os.Stdin, os.Stdout)
}

// serverConfig is the server side of seed 000's contract: TLS 1.3 only, the
// one group, the chain and key given, no session tickets.
func serverConfig(group, certPath, keyPath string) (*tls.Config, error) {
	id, err := requireGroup(group)
	if err != nil {
		return nil, err
	}
	cert, err := loadCertificate(certPath, keyPath)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:             tls.VersionTLS13,
		MaxVersion:             tls.VersionTLS13,
		CurvePreferences:       []tls.CurveID{id},
		Certificates:           []tls.Certificate{cert},
		SessionTicketsDisabled: true, // every connection is a full handshake
	}, nil
}

// accept serves connections one at a time, as the seed's server does (the
// figures are per handshake, not a test of concurrency), or with concurrent
// each in its own goroutine. A failed connection is reported and not counted;
// the client sees its own error (over a lossy path, failures are the
// client's to count, and not reported here).
func (s *server) accept(ln net.Listener, config *tls.Config) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			fmt.Fprintln(os.Stderr, "accept:", err)
			continue
		}
		if s.concurrent {
			go func() {
				if resumed, err := echo(conn, config, s.deadline()); err == nil {
					s.count(resumed)
				}
			}()
			continue
		}
		s.serial.Lock()
		if resumed, err := echo(conn, config, s.deadline()); err != nil {
			fmt.Fprintln(os.Stderr, "connection:", err)
		} else {
			s.count(resumed)
		}
		s.serial.Unlock()
	}
}

// echo runs one connection: handshake, read the payload, write it back, close.
func echo(conn net.Conn, config *tls.Config, timeout time.Duration) (resumed bool, err error) {
	conn.SetDeadline(time.Now().Add(timeout))
	tc := tls.Server(conn, config)
	defer tc.Close()
	if err := tc.Handshake(); err != nil {
		return false, err
	}
	resumed = tc.ConnectionState().DidResume
	buf := make([]byte, payloadSize)
	if _, err := io.ReadFull(tc, buf); err != nil {
		return resumed, err
	}
	if _, err := tc.Write(buf); err != nil {
		return resumed, err
	}
	return resumed, tc.Close()
}

// count counts a served connection, the resumed one first so that `stats`
// never sees a served count without it.
func (s *server) count(resumed bool) {
	if resumed {
		s.resumed.Add(1)
	}
	s.served.Add(1)
}

// waitServed waits until n connections have been served since the last
// reset, or 5 s have passed (the client knows how many it made; the server
// may still be closing the last one). The naps double from 200 us to 10 ms,
// as in pqprof's own servers (src/stack/child.rs): a QUIC server whose
// client's close was lost counts that connection only at its idle timeout,
// and 5 s of 200 us naps would be counted as the server's CPU.
func (s *server) waitServed(n int64) {
	nap := 200 * time.Microsecond
	for t0 := time.Now(); s.served.Load()-s.base < n && time.Since(t0) < 5*time.Second; {
		time.Sleep(nap)
		nap = min(2*nap, 10*time.Millisecond)
	}
}

// statsReport is the answer to `stats`.
type statsReport struct {
	Served  int64 `json:"served"`
	Resumed int64 `json:"resumed"`
	usageDelta
}

// control answers the control lines on stdin until it closes.
func (s *server) control(in io.Reader, out io.Writer) error {
	lines := bufio.NewScanner(in)
	for lines.Scan() {
		var err error
		// pqprof may add a count ("reset 1", "stats 100"): the connections it made, which
		// both wait for (served one at a time, the lock also waits for the one in flight).
		words := strings.Fields(lines.Text())
		cmd := ""
		if len(words) > 0 {
			cmd = words[0]
		}
		n := int64(0)
		if len(words) > 1 {
			n, _ = strconv.ParseInt(words[1], 10, 64)
		}
		switch cmd {
		case "reset":
			s.waitServed(n)
			s.serial.Lock()
			s.base = s.served.Load()
			s.resumedBase = s.resumed.Load()
			s.since, err = readUsage()
			s.serial.Unlock()
			if err == nil {
				_, err = fmt.Fprintln(out, "ok")
			}
		// "cpu N" after every round, "stats N" at the end: the same report here.
		case "stats", "cpu":
			s.waitServed(n)
			s.serial.Lock()
			var now usage
			now, err = readUsage()
			report := statsReport{Served: s.served.Load() - s.base, Resumed: s.resumed.Load() - s.resumedBase, usageDelta: now.since(s.since)}
			s.serial.Unlock()
			if err == nil {
				err = writeJSON(out, report)
			}
		default:
			_, err = fmt.Fprintln(out, "?")
		}
		if err != nil {
			return err
		}
	}
	return lines.Err()
}

// loadCertificate reads the certificates the server sends and the leaf's PEM
// PKCS#8 private key, and checks that they belong together. The certificate
// file is either a PEM chain, leaf first (leaf, then intermediates: what the
// server sends, without the trust anchor), or one DER certificate, the older
// form. The whole chain is served.
func loadCertificate(certPath, keyPath string) (tls.Certificate, error) {
	certFile, err := os.ReadFile(certPath)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return tls.Certificate{}, err
	}
	chain, err := readChain(certFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%s: %w", certPath, err)
	}
	block, _ := pem.Decode(keyPEM)
	if block == nil || block.Type != "PRIVATE KEY" {
		return tls.Certificate{}, fmt.Errorf("%s: no PEM \"PRIVATE KEY\" (PKCS#8) block", keyPath)
	}
	var certPEM []byte
	for _, der := range chain {
		certPEM = append(certPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	// X509KeyPair keeps every certificate in order (Certificate[0] the leaf),
	// parses the key and refuses one that does not match the leaf.
	cert, err := tls.X509KeyPair(certPEM, pem.EncodeToMemory(block))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%s, %s: %w", certPath, keyPath, err)
	}
	if err := checkChainOrder(cert.Certificate); err != nil {
		return tls.Certificate{}, fmt.Errorf("%s: %w", certPath, err)
	}
	return cert, nil
}

// readChain returns the DER certificates of a PEM chain (CERTIFICATE blocks
// only, in file order), or the file itself when it is not PEM (one DER
// certificate).
func readChain(file []byte) ([][]byte, error) {
	if !bytes.HasPrefix(bytes.TrimLeft(file, " \t\r\n"), []byte("-----BEGIN")) {
		return [][]byte{file}, nil
	}
	var chain [][]byte
	rest := file
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("a PEM %q block in the chain (only CERTIFICATE blocks, leaf first)", block.Type)
		}
		chain = append(chain, block.Bytes)
	}
	if len(chain) == 0 {
		return nil, errors.New("no PEM CERTIFICATE block")
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return nil, errors.New("bytes after the last PEM CERTIFICATE block that are not PEM")
	}
	return chain, nil
}

// checkChainOrder makes sure each certificate is signed by the next one, so a
// chain given in the wrong order (or with a stranger in it) fails here rather
// than in every client's verification.
func checkChainOrder(chain [][]byte) error {
	certs := make([]*x509.Certificate, len(chain))
	for i, der := range chain {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return fmt.Errorf("certificate %d: %w", i, err)
		}
		certs[i] = c
	}
	for i := 0; i+1 < len(certs); i++ {
		if err := certs[i].CheckSignatureFrom(certs[i+1]); err != nil {
			return fmt.Errorf("certificate %d (%s) is not signed by certificate %d (%s), the next in the chain (leaf first): %w",
				i, certs[i].Subject, i+1, certs[i+1].Subject, err)
		}
	}
	return nil
}
