package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"time"
)

// The TLS groups pqprof's tracks name, by IANA code point. The numbers are
// spelled out rather than taken from crypto/tls so that the program builds with
// every Go from 1.24 on, whatever constants its crypto/tls exports; whether this
// Go implements a group is found by trying it (supportedGroups).
var groups = []struct {
	name string
	id   tls.CurveID
}{
	{"X25519", 0x001d},
	{"X25519MLKEM768", 0x11ec},
	{"SecP256r1MLKEM768", 0x11eb},
	{"MLKEM768", 0x0201},
}

// groupID maps a group name from the command line to its code point.
func groupID(name string) (tls.CurveID, error) {
	for _, g := range groups {
		if g.name == name {
			return g.id, nil
		}
	}
	return 0, fmt.Errorf("unknown group %q (known: X25519, X25519MLKEM768, SecP256r1MLKEM768, MLKEM768)", name)
}

// supportedGroups lists the groups this Go negotiates. crypto/tls silently
// drops CurvePreferences entries it does not implement, so the only reliable
// test is a handshake restricted to the one group, here over an in-memory pipe.
func supportedGroups() ([]string, error) {
	cert, err := selfSigned()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, g := range groups {
		if handshakeOver(cert, g.id) == nil {
			names = append(names, g.name)
		}
	}
	return names, nil
}

// requireGroup fails early, with a clear message, when this Go cannot
// negotiate the group a serve or client command was asked for.
func requireGroup(name string) (tls.CurveID, error) {
	id, err := groupID(name)
	if err != nil {
		return 0, err
	}
	cert, err := selfSigned()
	if err != nil {
		return 0, err
	}
	if err := handshakeOver(cert, id); err != nil {
		return 0, fmt.Errorf("this Go does not negotiate %s: %v", name, err)
	}
	return id, nil
}

// handshakeOver runs one TLS 1.3 handshake over net.Pipe with both sides
// restricted to group id, and checks that the group was used.
func handshakeOver(cert tls.Certificate, id tls.CurveID) error {
	cs, received, err := pipeHandshake(cert, id)
	if err != nil {
		return err
	}
	got, err := negotiatedGroup(cs, received)
	if err != nil {
		return err
	}
	if got != id {
		return fmt.Errorf("asked for group %v, negotiated %v", id, got)
	}
	return nil
}

// pipeHandshake runs one TLS 1.3 handshake over net.Pipe with both sides
// restricted to group id, and returns the client's view of it with the bytes
// the client received, from which the group can be read as on a socket.
func pipeHandshake(cert tls.Certificate, id tls.CurveID) (tls.ConnectionState, []byte, error) {
	roots := x509.NewCertPool()
	roots.AddCert(cert.Leaf)
	server := &tls.Config{
		MinVersion: tls.VersionTLS13, MaxVersion: tls.VersionTLS13,
		CurvePreferences: []tls.CurveID{id}, Certificates: []tls.Certificate{cert},
		SessionTicketsDisabled: true,
	}
	client := &tls.Config{
		MinVersion: tls.VersionTLS13, MaxVersion: tls.VersionTLS13,
		CurvePreferences: []tls.CurveID{id}, RootCAs: roots, ServerName: "localhost",
	}
	c, s := net.Pipe()
	defer c.Close()
	defer s.Close()
	deadline := time.Now().Add(ioTimeout)
	c.SetDeadline(deadline)
	s.SetDeadline(deadline)
	wire := &countingConn{Conn: c, capture: true}
	tc, ts := tls.Client(wire, client), tls.Server(s, server)
	done := make(chan error, 1)
	go func() {
		err := ts.Handshake()
		if err != nil {
			s.Close() // a failed server must not leave the client waiting
		}
		done <- err
	}()
	err := tc.Handshake()
	if err != nil {
		c.Close() // nor a failed client the server
	}
	// The client's error says why; the server then only sees the pipe close.
	if serr := <-done; err == nil {
		err = serr
	}
	if err != nil {
		return tls.ConnectionState{}, nil, err
	}
	return tc.ConnectionState(), wire.firstReceived, nil
}

// selfSigned makes a throwaway self-signed ECDSA P-256 certificate for
// "localhost", without touching the disk, for the in-memory probes above (and
// the tests). The handshake scenarios themselves serve the authentication
// chains pqprof writes (serve --cert).
func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}
