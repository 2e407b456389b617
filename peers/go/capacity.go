package main

// The `capacity` command: the server of pqprof's capacity step
// (src/capacity/server.rs is pqprof's own), with the same port line, control
// lines and answers. pqprof pins it to the server core before it starts, so
// the runtime sees one CPU (GOMAXPROCS 1) and every thread stays there. Two
// modes:
//   - pool (--threads T): T goroutines accept and serve connections, each
//     closed after its echo;
//   - hold (--hold): one goroutine serves connections one after another and
//     keeps each open, with the heap each handshake used at its peak and kept
//     after it, for the first connections.
//
// Control lines on stdin, one JSON answer each on stdout: `cpu`, `mem N`
// (after N connections were served or failed), `release` (close every held
// connection).

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// keptMemoryRecords is how many connections' peak and retained heap the hold
// mode records. pqprof's own server keeps 1,000 (its counting allocator reads
// them for free); here each record takes four full collections (collect,
// before and after), whose cost grows with the connections already held, so
// the first 100.
const keptMemoryRecords = 100

// capacityServer is the state the control lines read.
type capacityServer struct {
	served, failed atomic.Uint64
	timeout        time.Duration
	mu             sync.Mutex // guards held, peak, retained
	held           []*tls.Conn
	peak, retained []int64
}

// cpuAnswer and memAnswer are src/capacity/server.rs's CpuAnswer and
// MemAnswer. Go's heap is its own field: the Rust and C heaps of pqprof's own
// server are zero here.
type cpuAnswer struct {
	Served uint64 `json:"served"`
	Failed uint64 `json:"failed"`
	CPUNs  int64  `json:"cpu_ns"`
}

type memAnswer struct {
	Held          int     `json:"held"`
	Failed        uint64  `json:"failed"`
	HeapRustBytes int64   `json:"heap_rust_bytes"`
	HeapCBytes    int64   `json:"heap_c_bytes"`
	HeapGoBytes   int64   `json:"heap_go_bytes"`
	RSSBytes      uint64  `json:"rss_bytes"`
	PeakBytes     []int64 `json:"peak_bytes"`
	RetainedBytes []int64 `json:"retained_bytes"`
}

func capacityCmd(args []string) error {
	fs := newFlags("capacity")
	group := fs.String("group", "", "the only TLS group to accept")
	certPath := fs.String("cert", "", "the certificates to send: a PEM chain, leaf first, or one DER certificate")
	keyPath := fs.String("key", "", "PEM PKCS#8 private key of the leaf")
	threads := fs.Int("threads", 1, "goroutines that accept and serve connections (pool mode)")
	hold := fs.Bool("hold", false, "serve one connection at a time and keep each open (memory per connection)")
	timeoutS := fs.Int("timeout-s", int(ioTimeout/time.Second), "seconds a connection may take to be served")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *group == "" || *certPath == "" || *keyPath == "" {
		return errors.New("capacity needs --group, --cert and --key")
	}
	if *threads < 1 || *timeoutS < 1 {
		return fmt.Errorf("--threads %d, --timeout-s %d: at least 1 each", *threads, *timeoutS)
	}
	config, err := serverConfig(*group, *certPath, *keyPath)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	s := &capacityServer{timeout: time.Duration(*timeoutS) * time.Second}
	if *hold {
		// Room for every connection a run holds, made before the first
		// measurement so that the list's growth is not memory per connection.
		s.held = make([]*tls.Conn, 0, 20_000)
	}
	fmt.Printf("port %d\n", ln.Addr().(*net.TCPAddr).Port)
	exitWithParent()
	if *hold {
		go s.holdLoop(ln, config)
	} else {
		for range *threads {
			go s.poolLoop(ln, config)
		}
	}
	return s.control(os.Stdin, os.Stdout)
}

// poolLoop accepts and serves connections, each closed after its echo. A
// connection is served once its echo is sent, as pqprof's own server counts
// it: the load client closes with a reset, which may come before the close
// here.
func (s *capacityServer) poolLoop(ln net.Listener, config *tls.Config) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			s.failed.Add(1)
			continue
		}
		tc, err := serveEcho(conn, config, s.timeout)
		if err != nil {
			s.failed.Add(1)
			continue
		}
		tc.Close()
		s.served.Add(1)
	}
}

// holdLoop serves connections one after another and keeps each open; for
// the first keptMemoryRecords, the heap each handshake used is recorded.
//
// Go has no high-water mark of its heap, so for a recorded connection the
// collector is off while it is served: nothing is freed, and the heap in use
// when it is done (HeapAlloc, after collections before it) is its peak.
// Collections after it give what it kept. With the collector on, as in the
// connections not recorded, a collection during a handshake would lower the
// real peak: the recorded peak is what the handshake allocates.
func (s *capacityServer) holdLoop(ln net.Listener, config *tls.Config) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			s.failed.Add(1)
			continue
		}
		s.mu.Lock()
		record := len(s.peak) < keptMemoryRecords
		s.mu.Unlock()
		var before, during, after runtime.MemStats
		var percent int
		if record {
			collect()
			runtime.ReadMemStats(&before)
			percent = debug.SetGCPercent(-1)
		}
		tc, err := serveEcho(conn, config, s.timeout)
		if record {
			runtime.ReadMemStats(&during)
			debug.SetGCPercent(percent)
			collect()
			runtime.ReadMemStats(&after)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "capacity server:", err)
			s.failed.Add(1)
			continue
		}
		s.mu.Lock()
		if record {
			retained := int64(after.HeapAlloc) - int64(before.HeapAlloc)
			// Nothing else allocates while the control goroutine waits, but
			// the mark is at least what is kept, as pqprof's own is.
			peak := max(int64(during.HeapAlloc)-int64(before.HeapAlloc), retained)
			s.peak = append(s.peak, peak)
			s.retained = append(s.retained, retained)
		}
		s.held = append(s.held, tc)
		s.mu.Unlock()
		s.served.Add(1)
	}
}

// collect leaves the heap with only what is live: two collections, since the
// objects sync.Pool caches (crypto/tls keeps its record buffers there) are
// freed only by the second after they were put back.
func collect() {
	runtime.GC()
	runtime.GC()
}

// serveEcho runs one connection's handshake and echo and leaves it open.
func serveEcho(conn net.Conn, config *tls.Config, timeout time.Duration) (*tls.Conn, error) {
	conn.SetDeadline(time.Now().Add(timeout))
	tc := tls.Server(conn, config)
	if err := tc.Handshake(); err != nil {
		tc.Close()
		return nil, err
	}
	buf := make([]byte, payloadSize)
	if _, err := io.ReadFull(tc, buf); err != nil {
		tc.Close()
		return nil, err
	}
	if _, err := tc.Write(buf); err != nil {
		tc.Close()
		return nil, err
	}
	// A held connection idles: no deadline may end it (tls.Conn.Close sets
	// its own for the close_notify).
	conn.SetDeadline(time.Time{})
	return tc, nil
}

// control answers the control lines on stdin until it closes.
func (s *capacityServer) control(in io.Reader, out io.Writer) error {
	lines := bufio.NewScanner(in)
	for lines.Scan() {
		words := strings.Fields(lines.Text())
		cmd := ""
		if len(words) > 0 {
			cmd = words[0]
		}
		var answer any
		switch cmd {
		case "cpu":
			u, err := readUsage()
			if err != nil {
				return err
			}
			answer = cpuAnswer{Served: s.served.Load(), Failed: s.failed.Load(), CPUNs: u.cpuNs}
		case "mem":
			var n uint64
			if len(words) > 1 {
				n, _ = strconv.ParseUint(words[1], 10, 64)
			}
			answer = s.mem(n)
		case "release":
			s.mu.Lock()
			held := s.held
			s.held = nil
			s.mu.Unlock()
			for _, tc := range held {
				tc.Close()
			}
			answer = "ok"
		default:
			answer = "?"
		}
		if err := writeJSON(out, answer); err != nil {
			return err
		}
	}
	return lines.Err()
}

// mem waits until n connections were served or failed (the client knows how
// many it opened; the last may still be finishing here), then reports the
// live heap after collections and the resident set.
func (s *capacityServer) mem(n uint64) memAnswer {
	for t0 := time.Now(); s.served.Load()+s.failed.Load() < n && time.Since(t0) < s.timeout; {
		time.Sleep(time.Millisecond)
	}
	collect()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	s.mu.Lock()
	defer s.mu.Unlock()
	return memAnswer{
		Held:          len(s.held),
		Failed:        s.failed.Load(),
		HeapGoBytes:   int64(m.HeapAlloc),
		RSSBytes:      rssBytes(),
		PeakBytes:     append([]int64{}, s.peak...),
		RetainedBytes: append([]int64{}, s.retained...),
	}
}

// rssBytes is this process's resident set (/proc/self/statm, second field,
// in pages).
func rssBytes() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}
