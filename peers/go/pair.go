package main

// The `pair` command: full TLS 1.3 handshakes with the client and the server
// in this one process, over memory, each side's time measured apart, as
// pqprof's in-memory pairs do for rustls and OpenSSL (src/stack/rustls.rs,
// handshake_in_memory): pqprof's capacity step cannot run Go inside its own
// process, so it asks this one for the samples.
//
// One core, one thread: GOMAXPROCS is 1 and pqprof starts the process from
// its thread pinned to the server core, so every thread of it inherits that
// one core. crypto/tls has no sans-I/O interface (a handshake is a blocking
// call that reads and writes a net.Conn), so the two sides are two
// goroutines, which take turns: a side runs until it reads and finds no
// bytes, then hands the turn to the other (memLink). Only the side with the
// turn is ever runnable, so even a preemption (a garbage collection, the
// scheduler's 10 ms slice) cannot let the other side run in its place; with
// one P the scheduler runs the side that takes the turn on the same OS
// thread. runtime.LockOSThread is not used: it would put the goroutine that is
// not locked on another OS thread, and every turn would become a hand-over
// between two threads through the kernel, which a handshake in a real server
// does not pay.
//
// Each side's time is the sum of the intervals in which it has the turn: from
// its start, or from when it gets the turn back, to when it hands the turn
// over, or ends. A side stops its clock before it hands the turn over and the
// other starts its own after it has the turn, so the intervals never overlap
// and both lie inside the handshake's wall time. What neither side runs (the
// hand-overs, the runtime's own goroutines between them) is in the wall time
// only; a garbage collection that interrupts a side counts to that side: it
// is the cost of allocations.

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// pair holds both sides' configurations, made once, as a server and a client
// would.
type pair struct {
	group  tls.CurveID
	client *tls.Config
	server *tls.Config
	// resumed: the server issues a ticket per handshake and the client
	// resumes the next handshake with it (psk_dhe_ke).
	resumed bool
}

// pairReport is the answer to `run N`: each handshake's client, server and
// wall time (same index, same handshake), and how many failed, with the last
// failure's reason.
type pairReport struct {
	ClientNs []int64 `json:"client_ns"`
	ServerNs []int64 `json:"server_ns"`
	WallNs   []int64 `json:"wall_ns"`
	// Resumed says, per handshake, whether the client resumed a session.
	Resumed  []bool `json:"resumed"`
	Failures int    `json:"failures"`
	Error    string `json:"last_error,omitempty"`
}

// checkReport is the answer to `check`: one handshake's negotiated group.
type checkReport struct {
	Group string `json:"group"`
}

func pairCmd(args []string) error {
	fs := newFlags("pair")
	group := fs.String("group", "", "the only TLS group both sides accept")
	certPath := fs.String("cert", "", "the certificates the server sends: a PEM chain, leaf first, or one DER certificate")
	keyPath := fs.String("key", "", "PEM PKCS#8 private key of the leaf")
	caPath := fs.String("ca", "", "DER certificate the client trusts: the root of the chain")
	resumed := fs.Bool("resumed", false, "issue a ticket per handshake and resume the next handshake with it")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *group == "" || *certPath == "" || *keyPath == "" || *caPath == "" {
		return errors.New("pair needs --group, --cert, --key and --ca")
	}
	// One P: the side that takes the turn runs on the thread that handed it over.
	runtime.GOMAXPROCS(1)
	p, err := newPair(*group, *certPath, *keyPath, *caPath)
	if err != nil {
		return err
	}
	if *resumed {
		p.resume()
	}
	exitWithParent()
	return p.commands(os.Stdin, os.Stdout)
}

// newPair makes both sides' configurations.
func newPair(group, certPath, keyPath, caPath string) (*pair, error) {
	server, err := serverConfig(group, certPath, keyPath)
	if err != nil {
		return nil, err
	}
	der, err := os.ReadFile(caPath)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", caPath, err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	return &pair{
		group:  server.CurvePreferences[0],
		server: server,
		client: &tls.Config{
			MinVersion:       tls.VersionTLS13,
			MaxVersion:       tls.VersionTLS13,
			CurvePreferences: server.CurvePreferences,
			RootCAs:          roots,
			ServerName:       "localhost",
		},
	}, nil
}

// resume makes the pair's handshakes resumptions: one ticket per handshake,
// kept by the client for the next and given out once (onceCache).
func (p *pair) resume() {
	p.resumed = true
	p.server.SessionTicketsDisabled = false
	p.client.ClientSessionCache = &onceCache{}
}

// commands answers `check` (one handshake, its group checked) and `run N` (N
// handshakes, each side timed) until stdin closes. A failed check is answered
// {"error": ...}; an unknown command ends the process.
func (p *pair) commands(in io.Reader, out io.Writer) error {
	lines := bufio.NewScanner(in)
	for lines.Scan() {
		fields := strings.Fields(lines.Text())
		var answer any
		switch {
		case len(fields) == 1 && fields[0] == "check":
			if _, err := p.handshake(true); err != nil {
				answer = map[string]string{"error": err.Error()}
			} else {
				answer = checkReport{Group: groupName(p.group)}
			}
		case len(fields) == 2 && fields[0] == "run":
			n, err := strconv.Atoi(fields[1])
			if err != nil || n < 1 {
				return fmt.Errorf("run: %q is not a positive count", fields[1])
			}
			answer = p.run(n)
		case len(fields) == 0:
			continue
		default:
			return fmt.Errorf("unknown command %q (check, run N)", lines.Text())
		}
		if err := writeJSON(out, answer); err != nil {
			return err
		}
	}
	return lines.Err()
}

// run makes n handshakes one after another.
func (p *pair) run(n int) pairReport {
	r := pairReport{
		ClientNs: make([]int64, 0, n),
		ServerNs: make([]int64, 0, n),
		WallNs:   make([]int64, 0, n),
		Resumed:  make([]bool, 0, n),
	}
	for range n {
		s, err := p.handshake(false)
		if err != nil {
			r.Failures++
			r.Error = err.Error()
			continue
		}
		r.ClientNs = append(r.ClientNs, s.client.Nanoseconds())
		r.ServerNs = append(r.ServerNs, s.server.Nanoseconds())
		r.WallNs = append(r.WallNs, s.wall.Nanoseconds())
		r.Resumed = append(r.Resumed, s.resumed)
	}
	return r
}

// pairSample is one handshake's times.
type pairSample struct {
	client, server, wall time.Duration
	resumed              bool
}

// handshake runs one full handshake in memory: the client in this goroutine,
// the server in another, taking turns, each side's time on its own clock.
// With check, the group the client negotiated must be the pair's.
func (p *pair) handshake(check bool) (pairSample, error) {
	link := newMemLink()
	var cc, sc sideClock
	var clientSide net.Conn = &memConn{link: link, side: clientTurn, clock: &cc}
	var wire *countingConn
	if check {
		wire = &countingConn{Conn: clientSide, capture: true}
		clientSide = wire
	}
	done := make(chan error, 1)
	start := time.Now()
	cc.resumeAt(start)
	client := tls.Client(clientSide, p.client)
	go func() {
		link.await(serverTurn)
		sc.resume()
		server := tls.Server(&memConn{link: link, side: serverTurn, clock: &sc}, p.server)
		err := server.Handshake()
		sc.pause()
		if err != nil {
			// The client may be waiting for bytes that will not come.
			link.close()
		}
		link.hand(clientTurn)
		done <- err
	}()
	cerr := client.Handshake()
	cc.pause()
	if cerr != nil {
		link.close()
	}
	// The server reads the client's Finished, or sees the link closed.
	link.hand(serverTurn)
	serr := <-done
	if cerr != nil {
		return pairSample{}, fmt.Errorf("client: %w", cerr)
	}
	if serr != nil {
		return pairSample{}, fmt.Errorf("server: %w", serr)
	}
	if p.resumed {
		// The server's ticket came in its first flight, after its Finished;
		// the client takes it on its first read after the handshake (client
		// time, as on a socket). Nothing follows it: the link ends there.
		link.close()
		cc.resume()
		_, err := client.Read(make([]byte, 1))
		cc.pause()
		if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			return pairSample{}, fmt.Errorf("client: reading the ticket: %v", err)
		}
	}
	wall := time.Now().Sub(start)
	if check {
		got, err := negotiatedGroup(client.ConnectionState(), wire.firstReceived)
		if err != nil {
			return pairSample{}, err
		}
		if got != p.group {
			return pairSample{}, fmt.Errorf("negotiated %s, not %s", groupName(got), groupName(p.group))
		}
	}
	// The sides' turns never overlap, so this cannot happen unless the clock
	// readings disagree (see sideClock); such a handshake is not a sample.
	if cc.total+sc.total > wall {
		return pairSample{}, fmt.Errorf("the sides' times (client %v + server %v) exceed the wall time %v", cc.total, sc.total, wall)
	}
	resumed := client.ConnectionState().DidResume
	return pairSample{client: cc.total, server: sc.total, wall: wall, resumed: resumed}, nil
}

// groupName is a group's name as pqprof's suites spell it.
func groupName(id tls.CurveID) string {
	for _, g := range groups {
		if g.id == id {
			return g.name
		}
	}
	return id.String()
}

// sideClock adds up the intervals one side of an in-memory handshake runs.
// Only the goroutine of that side touches it.
type sideClock struct {
	since time.Time
	total time.Duration
}

// Every reading is time.Now: with pauses read by time.Since (the runtime's
// nanotime) and resumptions by time.Now, about 1 handshake in 200 had
// client + server > wall by 0.5 to 9 us (Go 1.27.3 on a KVM guest, pinned to
// one core), and none in 30,000 with time.Now alone.
func (c *sideClock) resume()              { c.since = time.Now() }
func (c *sideClock) resumeAt(t time.Time) { c.since = t }
func (c *sideClock) pause()               { c.total += time.Now().Sub(c.since) }

// The sides of an in-memory handshake, as turns.
const (
	clientTurn = 0
	serverTurn = 1
)

// memLink is an in-memory connection, both directions, and whose turn it is
// to run. Writes never block (the buffer grows); a read that finds no bytes
// hands the turn to the other side and waits until it has the turn back.
type memLink struct {
	mu     sync.Mutex
	turned *sync.Cond
	turn   int
	closed bool
	// buf[side] holds the bytes that side has yet to read.
	buf [2][]byte
}

func newMemLink() *memLink {
	l := &memLink{turn: clientTurn}
	l.buf[clientTurn] = make([]byte, 0, 16<<10)
	l.buf[serverTurn] = make([]byte, 0, 4<<10)
	l.turned = sync.NewCond(&l.mu)
	return l
}

// await waits until side has the turn, or the link is closed.
func (l *memLink) await(side int) {
	l.mu.Lock()
	for l.turn != side && !l.closed {
		l.turned.Wait()
	}
	l.mu.Unlock()
}

// hand gives the turn to side.
func (l *memLink) hand(side int) {
	l.mu.Lock()
	l.turn = side
	l.mu.Unlock()
	l.turned.Broadcast()
}

// close ends the link: reads find no more bytes, waits end.
func (l *memLink) close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.turned.Broadcast()
}

// memConn is one side's end of a memLink; its clock stops while the other
// side has the turn.
type memConn struct {
	link  *memLink
	side  int
	clock *sideClock
}

func (c *memConn) Read(b []byte) (int, error) {
	l := c.link
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.buf[c.side]) == 0 {
		if l.closed {
			return 0, io.EOF
		}
		c.clock.pause()
		l.turn = 1 - c.side
		l.turned.Broadcast()
		for l.turn != c.side && !l.closed {
			l.turned.Wait()
		}
		c.clock.resume()
	}
	n := copy(b, l.buf[c.side])
	l.buf[c.side] = l.buf[c.side][n:]
	return n, nil
}

func (c *memConn) Write(b []byte) (int, error) {
	l := c.link
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, io.ErrClosedPipe
	}
	peer := 1 - c.side
	l.buf[peer] = append(l.buf[peer], b...)
	return len(b), nil
}

func (c *memConn) Close() error {
	c.link.close()
	return nil
}

// memAddr is the address both ends of an in-memory connection report.
type memAddr struct{}

func (memAddr) Network() string { return "memory" }
func (memAddr) String() string  { return "memory" }

func (c *memConn) LocalAddr() net.Addr              { return memAddr{} }
func (c *memConn) RemoteAddr() net.Addr             { return memAddr{} }
func (c *memConn) SetDeadline(time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }
