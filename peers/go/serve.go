package main

import (
	"bufio"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"time"
)

// ioTimeout bounds every connection, so that a stuck peer fails a run rather
// than hanging it.
const ioTimeout = 5 * time.Second

// payloadSize is the echo payload of seed 000's TLS operation.
const payloadSize = 32

// server counts the connections it has served since the last reset. mu is
// held for the whole of a connection, so that `stats` waits for one in flight
// to finish: the client has its echo before the server's Close returns.
type server struct {
	mu     sync.Mutex
	served int64
	since  usage
}

func serveCmd(args []string) error {
	fs := newFlags("serve")
	group := fs.String("group", "", "the only TLS group to accept (X25519, X25519MLKEM768, ...)")
	certPath := fs.String("cert", "", "DER certificate")
	keyPath := fs.String("key", "", "PEM PKCS#8 ECDSA P-256 private key")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *group == "" || *certPath == "" || *keyPath == "" {
		return errors.New("serve needs --group, --cert and --key")
	}
	id, err := requireGroup(*group)
	if err != nil {
		return err
	}
	cert, err := loadCertificate(*certPath, *keyPath)
	if err != nil {
		return err
	}
	config := &tls.Config{
		MinVersion:             tls.VersionTLS13,
		MaxVersion:             tls.VersionTLS13,
		CurvePreferences:       []tls.CurveID{id},
		Certificates:           []tls.Certificate{cert},
		SessionTicketsDisabled: true, // every connection is a full handshake
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	s := &server{}
	if s.since, err = readUsage(); err != nil {
		return err
	}
	fmt.Printf("port %d\n", ln.Addr().(*net.TCPAddr).Port)
	go s.accept(ln, config)
	return s.control(os.Stdin, os.Stdout)
}

// accept serves connections one at a time, as the seed's server does: the
// figures are per handshake, not a test of concurrency. A failed connection is
// reported and not counted; the client sees its own error.
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
		s.mu.Lock()
		if err := echo(conn, config); err != nil {
			fmt.Fprintln(os.Stderr, "connection:", err)
		} else {
			s.served++
		}
		s.mu.Unlock()
	}
}

// echo runs one connection: handshake, read the payload, write it back, close.
func echo(conn net.Conn, config *tls.Config) error {
	conn.SetDeadline(time.Now().Add(ioTimeout))
	tc := tls.Server(conn, config)
	defer tc.Close()
	if err := tc.Handshake(); err != nil {
		return err
	}
	buf := make([]byte, payloadSize)
	if _, err := io.ReadFull(tc, buf); err != nil {
		return err
	}
	if _, err := tc.Write(buf); err != nil {
		return err
	}
	return tc.Close()
}

// statsReport is the answer to `stats`.
type statsReport struct {
	Served int64 `json:"served"`
	usageDelta
}

// control answers the control lines on stdin until it closes.
func (s *server) control(in io.Reader, out io.Writer) error {
	lines := bufio.NewScanner(in)
	for lines.Scan() {
		var err error
		// pqprof may add a count ("reset 1", "stats 100"): the connections it made. The lock
		// already makes both wait for a connection in flight, so the count is not needed here.
		words := strings.Fields(lines.Text())
		cmd := ""
		if len(words) > 0 {
			cmd = words[0]
		}
		switch cmd {
		case "reset":
			s.mu.Lock()
			s.served = 0
			s.since, err = readUsage()
			s.mu.Unlock()
			if err == nil {
				_, err = fmt.Fprintln(out, "ok")
			}
		case "stats":
			s.mu.Lock()
			var now usage
			now, err = readUsage()
			report := statsReport{Served: s.served, usageDelta: now.since(s.since)}
			s.mu.Unlock()
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

// loadCertificate reads the server's DER certificate and its PEM PKCS#8
// private key, and checks that they belong together.
func loadCertificate(certPath, keyPath string) (tls.Certificate, error) {
	der, err := os.ReadFile(certPath)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return tls.Certificate{}, err
	}
	block, _ := pem.Decode(keyPEM)
	if block == nil || block.Type != "PRIVATE KEY" {
		return tls.Certificate{}, fmt.Errorf("%s: no PEM \"PRIVATE KEY\" (PKCS#8) block", keyPath)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	// X509KeyPair parses both and refuses a key that does not match the
	// certificate.
	cert, err := tls.X509KeyPair(certPEM, pem.EncodeToMemory(block))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%s, %s: %w", certPath, keyPath, err)
	}
	return cert, nil
}
