package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestThisGoNegotiatesTheHybridGroup(t *testing.T) {
	names, err := supportedGroups()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"X25519", "X25519MLKEM768"} {
		if !slices.Contains(names, want) {
			t.Errorf("groups %v lack %s", names, want)
		}
	}
	if _, err := groupID("X448"); err == nil {
		t.Error("an unknown group name was accepted")
	}
}

func TestServerHelloGroupReadsTheWire(t *testing.T) {
	cert, err := selfSigned()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []tls.CurveID{0x001d, 0x11ec} {
		_, received, err := pipeHandshake(cert, id)
		if err != nil {
			t.Fatal(err)
		}
		got, err := serverHelloGroup(received)
		if err != nil || got != id {
			t.Errorf("group %v: read %v, %v", id, got, err)
		}
		// Cut short anywhere in the ServerHello, it must fail, not panic.
		for _, n := range []int{0, 4, 5, 40, 80} {
			if _, err := serverHelloGroup(received[:n]); err == nil {
				t.Errorf("group %v: %d bytes were read as a ServerHello", id, n)
			}
		}
	}
}

func TestCountingConnCapsTheCapture(t *testing.T) {
	c := &countingConn{capture: true}
	c.firstSent = appendCapped(c.firstSent, make([]byte, captureLimit-1))
	c.firstSent = appendCapped(c.firstSent, []byte{1, 2, 3})
	c.firstSent = appendCapped(c.firstSent, []byte{4})
	if len(c.firstSent) != captureLimit || c.firstSent[captureLimit-1] != 1 {
		t.Errorf("capture is %d bytes, want %d ending in the first byte over", len(c.firstSent), captureLimit)
	}
}

// writeKeyPair writes a certificate (DER) and its key (PEM PKCS#8) as the
// harness hands them to serve and client.
func writeKeyPair(t *testing.T, cert tls.Certificate) (certPath, keyPath string) {
	t.Helper()
	dir := t.TempDir()
	certPath, keyPath = filepath.Join(dir, "cert.der"), filepath.Join(dir, "key.pem")
	pkcs8, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certPath, cert.Certificate[0], 0o600); err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})
	if err := os.WriteFile(keyPath, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return certPath, keyPath
}

func TestLoadCertificateRefusesAForeignKey(t *testing.T) {
	a, err := selfSigned()
	if err != nil {
		t.Fatal(err)
	}
	b, err := selfSigned()
	if err != nil {
		t.Fatal(err)
	}
	certA, keyA := writeKeyPair(t, a)
	_, keyB := writeKeyPair(t, b)
	if _, err := loadCertificate(certA, keyA); err != nil {
		t.Errorf("a matching pair was refused: %v", err)
	}
	if _, err := loadCertificate(certA, keyB); err == nil {
		t.Error("a key that is not the certificate's was accepted")
	}
}

// The server and client of the handshake scenarios, in one process over
// loopback: evidence, a run, and the server's counters.
func TestServeAndClientEcho(t *testing.T) {
	cert, err := selfSigned()
	if err != nil {
		t.Fatal(err)
	}
	certPath, keyPath := writeKeyPair(t, cert)
	loaded, err := loadCertificate(certPath, keyPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, group := range []string{"X25519", "X25519MLKEM768"} {
		id, err := requireGroup(group)
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s := &server{}
		go s.accept(ln, &tls.Config{
			MinVersion: tls.VersionTLS13, MaxVersion: tls.VersionTLS13,
			CurvePreferences: []tls.CurveID{id}, Certificates: []tls.Certificate{loaded},
			SessionTicketsDisabled: true,
		})
		roots := x509.NewCertPool()
		roots.AddCert(cert.Leaf)
		c := &client{addr: ln.Addr().String(), config: &tls.Config{
			MinVersion: tls.VersionTLS13, MaxVersion: tls.VersionTLS13,
			CurvePreferences: []tls.CurveID{id}, RootCAs: roots, ServerName: "localhost",
		}}

		var out bytes.Buffer
		if err := c.commands(strings.NewReader("evidence\nrun 3\n"), &out); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 2 {
			t.Fatalf("%s: %d answers, want 2: %q", group, len(lines), out.String())
		}
		var ev evidence
		if err := json.Unmarshal([]byte(lines[0]), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Group != group || ev.Version != "TLS 1.3" || ev.CertKey != "ECDSA P-256" || ev.Resumed {
			t.Errorf("evidence %+v", ev)
		}
		if sent, _ := hex.DecodeString(ev.FirstSentHex); len(sent) == 0 || sent[0] != recordHandshake {
			t.Errorf("%s: the first bytes sent are not a ClientHello record", group)
		}
		var run runReport
		if err := json.Unmarshal([]byte(lines[1]), &run); err != nil {
			t.Fatal(err)
		}
		if len(run.Connections) != 3 || run.CPUNs <= 0 || run.GoMallocs == 0 {
			t.Errorf("%s: run %+v", group, run)
		}
		for _, conn := range run.Connections {
			if conn.ReadyNs <= 0 || conn.TotalNs < conn.ReadyNs || conn.Sent == 0 || conn.Received == 0 {
				t.Errorf("%s: connection %+v", group, conn)
			}
		}

		out.Reset()
		if err := s.control(strings.NewReader("stats\nreset\nstats\nhello\n"), &out); err != nil {
			t.Fatal(err)
		}
		answers := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(answers) != 4 || answers[1] != "ok" || answers[3] != "?" {
			t.Fatalf("%s: control answers %q", group, answers)
		}
		var before, after statsReport
		json.Unmarshal([]byte(answers[0]), &before)
		json.Unmarshal([]byte(answers[2]), &after)
		if before.Served != 4 || after.Served != 0 {
			t.Errorf("%s: served %d before reset and %d after, want 4 and 0", group, before.Served, after.Served)
		}
		ln.Close()
	}
}

func TestClientRefusesABadCommand(t *testing.T) {
	c := &client{}
	for _, cmd := range []string{"run 0\n", "run x\n", "connect\n"} {
		if err := c.commands(strings.NewReader(cmd), &bytes.Buffer{}); err == nil {
			t.Errorf("%q was accepted", cmd)
		}
	}
}
