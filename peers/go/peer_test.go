package main

import (
	"bufio"
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
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

// writeKeyPair writes a certificate (DER) and its key (PEM PKCS#8) in the
// older form of serve's arguments: one DER certificate, trusted as it is.
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

// writeChain makes an authentication chain as pqprof does, keys[0] the root's
// and the last the leaf's (root -> intermediate -> leaf, or root -> leaf), and
// writes its files: chain.pem (what the server sends: leaf first, without the
// root), key.pem (the leaf's PKCS#8 key), root.der (the trust anchor).
func writeChain(t *testing.T, keys ...crypto.Signer) (chainPath, keyPath, rootPath string) {
	t.Helper()
	if len(keys) < 2 {
		t.Fatal("a chain needs a root and a leaf")
	}
	var certs [][]byte // root first
	var parent *x509.Certificate
	for i, key := range keys {
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(int64(i + 1)),
			NotBefore:    time.Now().Add(-time.Hour),
			NotAfter:     time.Now().Add(24 * time.Hour),
		}
		if leaf := i == len(keys)-1; leaf {
			tmpl.Subject = pkix.Name{CommonName: "localhost"}
			tmpl.DNSNames = []string{"localhost"}
			tmpl.KeyUsage = x509.KeyUsageDigitalSignature
			tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		} else {
			tmpl.Subject = pkix.Name{CommonName: fmt.Sprintf("pqprof test CA %d", i)}
			tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
			tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
		}
		signer, issuer := key, tmpl
		if parent != nil {
			signer, issuer = keys[i-1], parent
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, issuer, key.Public(), signer)
		if err != nil {
			t.Fatal(err)
		}
		if parent, err = x509.ParseCertificate(der); err != nil {
			t.Fatal(err)
		}
		certs = append(certs, der)
	}
	dir := t.TempDir()
	chainPath, keyPath, rootPath = filepath.Join(dir, "chain.pem"), filepath.Join(dir, "key.pem"), filepath.Join(dir, "root.der")
	var chainPEM []byte
	for i := len(certs) - 1; i > 0; i-- {
		chainPEM = append(chainPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certs[i]})...)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(keys[len(keys)-1])
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})
	for path, data := range map[string][]byte{chainPath: chainPEM, keyPath: keyPEM, rootPath: certs[0]} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return chainPath, keyPath, rootPath
}

func ecdsaKeys(t *testing.T, n int) []crypto.Signer {
	t.Helper()
	keys := make([]crypto.Signer, n)
	for i := range keys {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		keys[i] = k
	}
	return keys
}

// session is one serve and one client in this process, over loopback, set up
// from the files serve and client are given.
type session struct {
	t      *testing.T
	ln     net.Listener
	server *server
	client *client
}

// newSession sets the server up as serve would, then applies each of with to
// it before it starts.
func newSession(t *testing.T, group, certPath, keyPath, caPath string, with ...func(*server)) *session {
	t.Helper()
	id, err := requireGroup(group)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := loadCertificate(certPath, keyPath)
	if err != nil {
		t.Fatal(err)
	}
	der, err := os.ReadFile(caPath)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	s := &server{}
	for _, f := range with {
		f(s)
	}
	go s.accept(ln, &tls.Config{
		MinVersion: tls.VersionTLS13, MaxVersion: tls.VersionTLS13,
		CurvePreferences: []tls.CurveID{id}, Certificates: []tls.Certificate{cert},
		SessionTicketsDisabled: true,
	})
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	c := &client{addr: ln.Addr().String(), config: &tls.Config{
		MinVersion: tls.VersionTLS13, MaxVersion: tls.VersionTLS13,
		CurvePreferences: []tls.CurveID{id}, RootCAs: roots, ServerName: "localhost",
	}}
	return &session{t, ln, s, c}
}

// evidenceAndRun asks the client for evidence and a run of n connections,
// and checks what every answer must hold whatever the certificate.
func (s *session) evidenceAndRun(group string, n int) (evidence, runReport) {
	t := s.t
	t.Helper()
	var out bytes.Buffer
	if err := commands(s.client, strings.NewReader(fmt.Sprintf("evidence\nrun %d\n", n)), &out); err != nil {
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
	if ev.Group != group || ev.Version != "TLS 1.3" || ev.Resumed {
		t.Errorf("evidence %+v", ev)
	}
	if sent, _ := hex.DecodeString(ev.FirstSentHex); len(sent) == 0 || sent[0] != recordHandshake {
		t.Errorf("%s: the first bytes sent are not a ClientHello record", group)
	}
	received, _ := hex.DecodeString(ev.FirstReceivedHex)
	if got, err := serverHelloGroup(received); err != nil || got.String() != group {
		t.Errorf("%s: the captured ServerHello gives %v, %v", group, got, err)
	}
	// The capture holds the server's whole first flight, and the flight holds
	// the certificates.
	var chain int64
	for _, n := range ev.ChainBytes {
		chain += int64(n)
	}
	if len(received) < int(ev.ServerFlightBytes) || ev.ServerFlightBytes <= chain || chain == 0 {
		t.Errorf("%s: captured %d bytes; server flight %d bytes; chain %v", group, len(received), ev.ServerFlightBytes, ev.ChainBytes)
	}
	var run runReport
	if err := json.Unmarshal([]byte(lines[1]), &run); err != nil {
		t.Fatal(err)
	}
	if len(run.Connections) != n || run.CPUNs <= 0 || run.ProcessCPUNs < run.CPUNs || run.GoMallocs == 0 {
		t.Errorf("%s: run %+v", group, run)
	}
	for _, conn := range run.Connections {
		if conn.ReadyNs <= 0 || conn.TotalNs < conn.ReadyNs || conn.Sent == 0 || conn.Received == 0 {
			t.Errorf("%s: connection %+v", group, conn)
		}
		// Every handshake is full and alike: the evidence's flight, give or
		// take the few bytes a DER-encoded ECDSA signature varies by (the
		// ServerHello's sizes are fixed for a group), and then the echo.
		if d := conn.ServerFlightBytes - ev.ServerFlightBytes; d < -8 || d > 8 || conn.Received <= conn.ServerFlightBytes {
			t.Errorf("%s: connection %+v, the evidence's flight %d bytes", group, conn, ev.ServerFlightBytes)
		}
	}
	return ev, run
}

// The server and client of the handshake scenarios, in one process over
// loopback, with the older form of the certificate (one DER certificate,
// trusted itself): evidence, a run, and the server's counters.
func TestServeAndClientEcho(t *testing.T) {
	cert, err := selfSigned()
	if err != nil {
		t.Fatal(err)
	}
	certPath, keyPath := writeKeyPair(t, cert)
	for _, group := range []string{"X25519", "X25519MLKEM768"} {
		s := newSession(t, group, certPath, keyPath, certPath)
		ev, _ := s.evidenceAndRun(group, 3)
		if ev.CertKey != "ECDSA P-256" || ev.Scheme != 0x0403 || len(ev.ChainBytes) != 1 || ev.ChainBytes[0] != len(cert.Certificate[0]) {
			t.Errorf("%s: evidence %+v", group, ev)
		}

		var out bytes.Buffer
		if err := s.server.control(strings.NewReader("stats\nreset\nstats\nhello\n"), &out); err != nil {
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
	}
}

// The chain forms, with ECDSA P-256 throughout: root -> intermediate -> leaf
// (the server sends two certificates) and root -> leaf (one).
func TestServeAnECDSAChain(t *testing.T) {
	for _, n := range []int{3, 2} {
		chainPath, keyPath, rootPath := writeChain(t, ecdsaKeys(t, n)...)
		s := newSession(t, "X25519MLKEM768", chainPath, keyPath, rootPath)
		ev, _ := s.evidenceAndRun("X25519MLKEM768", 1)
		if ev.CertKey != "ECDSA P-256" || ev.Scheme != 0x0403 || len(ev.ChainBytes) != n-1 {
			t.Errorf("a chain of %d: evidence %+v", n, ev)
		}
	}
}

func TestLoadCertificateRefusesABadChain(t *testing.T) {
	keys := ecdsaKeys(t, 3)
	chainPath, keyPath, rootPath := writeChain(t, keys...)
	chainPEM, err := os.ReadFile(chainPath)
	if err != nil {
		t.Fatal(err)
	}
	leafPEM, rest := pem.Decode(chainPEM)
	intermediatePEM, _ := pem.Decode(rest)
	root, err := os.ReadFile(rootPath)
	if err != nil {
		t.Fatal(err)
	}
	_, strangerKey, _ := writeChain(t, ecdsaKeys(t, 2)...)
	dir := t.TempDir()
	bad := map[string][]byte{
		// the intermediate first: its key is not the leaf's
		"swapped": append(pem.EncodeToMemory(intermediatePEM), pem.EncodeToMemory(leafPEM)...),
		// the leaf, then the root: the leaf is not signed by the next certificate
		"skips the intermediate": append(pem.EncodeToMemory(leafPEM), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: root})...),
		"a key in the chain":     append(pem.EncodeToMemory(leafPEM), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1}})...),
		"trailing bytes":         append(bytes.Clone(chainPEM), "garbage"...),
		"no certificate":         []byte("-----BEGIN NOTHING-----\n-----END NOTHING-----\n"),
	}
	for name, data := range bad {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".pem")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := loadCertificate(path, keyPath); err == nil {
			t.Errorf("%s: the chain was accepted", name)
		}
	}
	if _, err := loadCertificate(chainPath, strangerKey); err == nil {
		t.Error("a key that is not the leaf's was accepted")
	}
	cert, err := loadCertificate(chainPath, keyPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(cert.Certificate) != 2 || !bytes.Equal(cert.Certificate[0], leafPEM.Bytes) || !bytes.Equal(cert.Certificate[1], intermediatePEM.Bytes) {
		t.Errorf("the served chain is not leaf, intermediate")
	}
}

func TestClientRefusesABadCommand(t *testing.T) {
	c := &client{}
	for _, cmd := range []string{"run 0\n", "run x\n", "connect\n"} {
		if err := commands(c, strings.NewReader(cmd), &bytes.Buffer{}); err == nil {
			t.Errorf("%q was accepted", cmd)
		}
	}
}

// A connection that fails is answered with its error, and the client goes on
// to the next command: over a lossy path the driver counts a failure and
// makes the next connection with the same client.
func TestClientAnswersAFailedConnectionAndGoesOn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c := &client{addr: addr, timeout: time.Second, config: &tls.Config{MinVersion: tls.VersionTLS13}}
	var out bytes.Buffer
	if err := commands(c, strings.NewReader("run 1\nrun 1 reset\nopen\n"), &out); err != nil {
		t.Fatal(err)
	}
	answers := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(answers) != 3 {
		t.Fatalf("%d answers, want 3: %q", len(answers), out.String())
	}
	for _, a := range answers {
		var e map[string]string
		if json.Unmarshal([]byte(a), &e) != nil || e["error"] == "" {
			t.Errorf("answer %q is not an error", a)
		}
	}
}

// Served concurrently on the address given, the server counts every
// connection, and `stats N` waits until N have been served.
func TestServeConcurrentlyCountsEveryConnection(t *testing.T) {
	chainPath, keyPath, rootPath := writeChain(t, ecdsaKeys(t, 3)...)
	s := newSession(t, "X25519MLKEM768", chainPath, keyPath, rootPath, func(s *server) { s.concurrent = true })
	const clients, each = 4, 3
	errs := make(chan error, clients)
	for range clients {
		go func() {
			c := *s.client
			var out bytes.Buffer
			err := commands(&c, strings.NewReader(fmt.Sprintf("run %d\n", each)), &out)
			if err == nil && strings.Contains(out.String(), "error") {
				err = fmt.Errorf("%s", out.String())
			}
			errs <- err
		}()
	}
	for range clients {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	if err := s.server.control(strings.NewReader(fmt.Sprintf("stats %d\n", clients*each)), &out); err != nil {
		t.Fatal(err)
	}
	var st statsReport
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	if st.Served != clients*each || st.CPUNs <= 0 {
		t.Errorf("stats %+v, want %d served", st, clients*each)
	}
}

// In memory: the group is checked, and every handshake's two sides are
// timed apart, each inside the wall time.
func TestPairTimesEachSideInsideTheWallTime(t *testing.T) {
	chainPath, keyPath, rootPath := writeChain(t, ecdsaKeys(t, 3)...)
	// The sides take turns, so their clocks hold with any number of Ps (the
	// command runs with one); two make it likelier that they would not.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	for _, group := range []string{"X25519", "X25519MLKEM768"} {
		p, err := newPair(group, chainPath, keyPath, rootPath)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := p.commands(strings.NewReader("check\nrun 20\n"), &out); err != nil {
			t.Fatal(err)
		}
		answers := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(answers) != 2 {
			t.Fatalf("%s: %d answers, want 2: %q", group, len(answers), out.String())
		}
		var check checkReport
		if err := json.Unmarshal([]byte(answers[0]), &check); err != nil || check.Group != group {
			t.Errorf("%s: check answered %q", group, answers[0])
		}
		var r pairReport
		if err := json.Unmarshal([]byte(answers[1]), &r); err != nil {
			t.Fatal(err)
		}
		if r.Failures != 0 || len(r.WallNs) != 20 || len(r.ClientNs) != 20 || len(r.ServerNs) != 20 {
			t.Fatalf("%s: %+v", group, r)
		}
		for i := range r.WallNs {
			if r.ClientNs[i] <= 0 || r.ServerNs[i] <= 0 || r.ClientNs[i]+r.ServerNs[i] > r.WallNs[i] {
				t.Errorf("%s: handshake %d: client %d + server %d ns, wall %d ns", group, i, r.ClientNs[i], r.ServerNs[i], r.WallNs[i])
			}
		}
	}
	// A client that does not trust the server's root fails, and says so.
	other, _, otherRoot := writeChain(t, ecdsaKeys(t, 2)...)
	_ = other
	p, err := newPair("X25519", chainPath, keyPath, otherRoot)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.handshake(true); err == nil {
		t.Error("a handshake against an untrusted chain succeeded")
	}
	if r := p.run(2); r.Failures != 2 || r.Error == "" {
		t.Errorf("failures not counted: %+v", r)
	}
}

// In memory, resumed: the check's handshake is full and brings the first
// ticket; every handshake after it resumes with the one before's ticket. The
// full pair says none resumed.
func TestPairResumesEachHandshakeWithTheTicketBefore(t *testing.T) {
	chainPath, keyPath, rootPath := writeChain(t, ecdsaKeys(t, 3)...)
	run := func(resumed bool) pairReport {
		p, err := newPair("X25519MLKEM768", chainPath, keyPath, rootPath)
		if err != nil {
			t.Fatal(err)
		}
		if resumed {
			p.resume()
		}
		if _, err := p.handshake(true); err != nil {
			t.Fatal(err)
		}
		return p.run(30)
	}
	full, resumed := run(false), run(true)
	if full.Failures != 0 || resumed.Failures != 0 || len(resumed.Resumed) != 30 {
		t.Fatalf("full %+v, resumed %+v", full, resumed)
	}
	for i := range resumed.Resumed {
		if !resumed.Resumed[i] || full.Resumed[i] {
			t.Fatalf("handshake %d: resumed %v, full pair resumed %v", i, resumed.Resumed[i], full.Resumed[i])
		}
	}
}

// TestHelperHoldClient is TestCapacityServerPoolAndHold's client, run as a
// process of its own: it opens three held connections, says so, and keeps them
// until its input closes.
func TestHelperHoldClient(t *testing.T) {
	v := os.Getenv("PQPROF_HOLD_CLIENT")
	if v == "" {
		t.Skip("run by TestCapacityServerPoolAndHold")
	}
	arg := strings.Split(v, "\n")
	s := newSession(t, "X25519MLKEM768", arg[1], arg[2], arg[3])
	c := *s.client
	c.addr = arg[0]
	for range 3 {
		if _, err := c.open(); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Printf("held %d\n", len(c.held))
	io.Copy(io.Discard, os.Stdin)
}

// The capacity server: the pool serves and counts connections; the hold mode
// keeps them, with each recorded handshake's peak at least what it kept.
func TestCapacityServerPoolAndHold(t *testing.T) {
	chainPath, keyPath, rootPath := writeChain(t, ecdsaKeys(t, 3)...)
	config, err := serverConfig("X25519MLKEM768", chainPath, keyPath)
	if err != nil {
		t.Fatal(err)
	}
	newClient := func(ln net.Listener) *client {
		s := newSession(t, "X25519MLKEM768", chainPath, keyPath, rootPath)
		c := *s.client
		c.addr = ln.Addr().String()
		return &c
	}
	ask := func(s *capacityServer, cmd string, v any) {
		t.Helper()
		var out bytes.Buffer
		if err := s.control(strings.NewReader(cmd+"\n"), &out); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out.Bytes(), v); err != nil {
			t.Fatalf("%s: %q: %v", cmd, out.String(), err)
		}
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	pool := &capacityServer{timeout: ioTimeout}
	for range 2 {
		go pool.poolLoop(ln, config)
	}
	if _, err := newClient(ln).run(3, true); err != nil {
		t.Fatal(err)
	}
	var cpu cpuAnswer
	for t0 := time.Now(); cpu.Served < 3 && time.Since(t0) < 5*time.Second; time.Sleep(10 * time.Millisecond) {
		ask(pool, "cpu", &cpu)
	}
	if cpu.Served != 3 || cpu.Failed != 0 || cpu.CPUNs <= 0 {
		t.Errorf("pool: %+v", cpu)
	}

	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln2.Close() })
	hold := &capacityServer{timeout: ioTimeout}
	go hold.holdLoop(ln2, config)
	// The server's heap is measured as in production, where the client is
	// another process: a client in this process would allocate and free on
	// the same heap while a connection is recorded (a retained size below
	// zero).
	holder := exec.Command(os.Args[0], "-test.run=^TestHelperHoldClient$")
	holder.Env = append(os.Environ(), "PQPROF_HOLD_CLIENT="+strings.Join([]string{ln2.Addr().String(), chainPath, keyPath, rootPath}, "\n"))
	holder.Stderr = os.Stderr
	to, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	from, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { to.Close(); holder.Wait() })
	said := make(chan string, 1)
	go func() {
		line, err := bufio.NewReader(from).ReadString('\n')
		said <- fmt.Sprintf("%q (%v)", line, err)
	}()
	select {
	case s := <-said:
		if s != fmt.Sprintf("%q (%v)", "held 3\n", nil) {
			t.Fatalf("the holding client said %s", s)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the holding client said nothing in 30 s")
	}
	var mem memAnswer
	ask(hold, "mem 3", &mem)
	if mem.Held != 3 || len(mem.PeakBytes) != 3 || mem.HeapGoBytes <= 0 || mem.RSSBytes == 0 || mem.HeapRustBytes != 0 {
		t.Fatalf("hold: %+v", mem)
	}
	t.Logf("held: peak %v, retained %v bytes", mem.PeakBytes, mem.RetainedBytes)
	// A held connection keeps its keys and buffers. (The first may also see
	// something of the test's earlier garbage go: the middle one of three is
	// looked at.)
	for i := range mem.PeakBytes {
		if mem.PeakBytes[i] < mem.RetainedBytes[i] {
			t.Errorf("connection %d: peak %d, retained %d bytes", i, mem.PeakBytes[i], mem.RetainedBytes[i])
		}
	}
	if kept := slices.Sorted(slices.Values(mem.RetainedBytes))[1]; kept <= 0 {
		t.Errorf("retained %v bytes", mem.RetainedBytes)
	}
	var ok string
	ask(hold, "release", &ok)
	ask(hold, "mem 3", &mem)
	if ok != "ok" || mem.Held != 0 {
		t.Errorf("release: %q, then %d held", ok, mem.Held)
	}
}

// The clock's start is the midpoint of the tightest bracket of two monotonic
// readings around time.Now: a read preempted (a wide bracket) is taken again,
// and a failed reading gives 0, which pqprof reads as unknown.
func TestBracketedKeepsTheTightestBracketsMidpoint(t *testing.T) {
	var readings []int64
	mono := func() int64 {
		v := readings[0]
		readings = readings[1:]
		return v
	}
	calls := 0
	now := func() time.Time {
		calls++
		return time.Unix(int64(calls), 0)
	}
	// First bracket 1,000 to 90,000 (preempted), second 100,000 to 100,600.
	readings = []int64{1_000, 90_000, 100_000, 100_600}
	got, at := bracketed(mono, now)
	if at != 100_300 || got != time.Unix(2, 0) {
		t.Errorf("start %d at %v, want the second bracket's midpoint 100300 and its reading", at, got)
	}
	// Every bracket wide: the narrowest of the nine.
	readings = nil
	for i := int64(0); i < 9; i++ {
		gap := 10_000 + (i-4)*(i-4)*1_000 // narrowest at i = 4
		readings = append(readings, 1_000_000*(i+1), 1_000_000*(i+1)+gap)
	}
	if _, at := bracketed(mono, now); at != 5_000_000+5_000 {
		t.Errorf("start %d, want the fifth bracket's midpoint 5005000", at)
	}
	readings = []int64{0, 5}
	if _, at := bracketed(mono, now); at != 0 {
		t.Errorf("a failed reading gave start %d, want 0", at)
	}
}

// The real clocks: the start lies within the readings around startClock.
func TestStartClockIsOnTheMonotonicScale(t *testing.T) {
	before := monotonicNs()
	_, at := startClock()
	after := monotonicNs()
	if before == 0 || at < before || at > after {
		t.Fatalf("start %d outside the readings around it [%d, %d]", at, before, after)
	}
}
