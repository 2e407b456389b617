package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

// The phase discipline is pqprof's (src/measure.rs), carried over to Go:
//   - every phase warms up, and its first output is verified before anything
//     is timed;
//   - each call is timed on its own with the monotonic clock, its inputs made
//     before the start timestamp and its outputs kept until after the chunk;
//   - outputs are verified outside the timed stream: the first and last of
//     every chunk, and as many others as fit in half the chunk's timed time;
//   - a phase's iterations are split into rounds, and every round runs a chunk
//     of every phase, so drift on a shared machine spreads over all of them.
// What Go adds is a garbage collector: a collection is forced (untimed) before
// every chunk so that one is less likely to start inside a timed call.

// bench is one phase's workload.
type bench interface {
	// run times n calls, writing one sample per call into samples[:n]. Each
	// call's input is made before its start timestamp; only the measured call
	// sits between the two timestamps. Outputs are kept for check.
	run(n int, samples []int64) error
	// check verifies output i of the last run, outside any timing.
	check(i int) error
}

// phase is one measured (algorithm, operation), as it appears in the JSON.
type phase struct {
	Algorithm string  `json:"algorithm"`
	Operation string  `json:"operation"`
	SamplesNs []int64 `json:"samples_ns"`
	Verified  int     `json:"verified"`
	Warmup    int     `json:"warmup"`
	Includes  string  `json:"includes"`
	// SituNs are calls timed in a handshake's state (src/measure.rs
	// situ_samples): the key exchanges and signatures only.
	SituNs []int64 `json:"situ_ns,omitempty"`

	bench  bench
	target int
	situ   bool
}

// What each call timed in a handshake's state follows, untimed, as
// src/measure.rs does it: situEvictBytes written a cache line at a time (the
// parsing and buffers between two crypto calls) and a sleep of situWait (the
// wait for the peer's flight); situPerChunk such calls after each chunk.
const (
	situEvictBytes = 1 << 20
	situWait       = 100 * time.Microsecond
	situPerChunk   = 20
)

var situBuf = make([]byte, situEvictBytes)

// inState says whether an operation is timed in a handshake's state too: a
// key exchange's or a signature's call a handshake makes (not key generation
// for a certificate).
func inState(operation string) bool {
	return strings.HasPrefix(operation, "kem.") || strings.HasPrefix(operation, "dh.") ||
		operation == "sig.sign" || operation == "sig.verify"
}

// settings are the phases command's flags.
type settings struct {
	iterations   int
	rounds       int
	budgetMs     int
	warmupMs     int
	rawSamples   int
	rawPerSample int
}

// maxWarmupCalls bounds warm-up for very fast phases, as pqprof does.
const maxWarmupCalls = 10_000

// minIterations is the fewest timed calls a phase gets, however slow.
const minIterations = 10

type phasesReport struct {
	GoVersion  string `json:"go_version"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	// The recipe of the calls timed in a handshake's state.
	SituEvictBytes int            `json:"situ_evict_bytes"`
	SituWaitNs     int64          `json:"situ_wait_ns"`
	Phases         []*phase       `json:"phases"`
	Raw            []*rawWorkload `json:"raw"`
}

func phasesCmd(args []string) error {
	fs := newFlags("phases")
	var s settings
	fs.IntVar(&s.iterations, "iterations", 1000, "timed calls per phase, at most")
	fs.IntVar(&s.rounds, "rounds", 10, "interleaved rounds each phase's calls are split into")
	fs.IntVar(&s.budgetMs, "budget-ms", 2000, "time budget per phase, ms (slower phases get fewer calls)")
	fs.IntVar(&s.warmupMs, "warmup-ms", 100, "warm-up per phase, ms (at least one call)")
	fs.IntVar(&s.rawSamples, "raw-samples", 20, "samples of seed 000's raw workload (0: skip it)")
	fs.IntVar(&s.rawPerSample, "raw-per-sample", 100, "round trips per raw sample")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if s.iterations < 1 || s.rounds < 1 || s.budgetMs < 1 || s.warmupMs < 0 || s.rawSamples < 0 || s.rawPerSample < 1 {
		return errors.New("phases: --iterations, --rounds, --budget-ms and --raw-per-sample must be positive; --warmup-ms and --raw-samples not negative")
	}
	phases, err := allPhases()
	if err != nil {
		return err
	}
	if err := measure(phases, s); err != nil {
		return err
	}
	report := phasesReport{
		GoVersion:      runtime.Version(),
		GOMAXPROCS:     runtime.GOMAXPROCS(0),
		SituEvictBytes: situEvictBytes,
		SituWaitNs:     int64(situWait),
		Phases:         phases,
		Raw:            []*rawWorkload{},
	}
	if s.rawSamples > 0 {
		if report.Raw, err = measureRaw(s.rawSamples, s.rawPerSample); err != nil {
			return err
		}
	}
	return writeJSON(os.Stdout, report)
}

// phaseMaker sets up one phase.
type phaseMaker func() (*phase, error)

// allPhases sets up every phase; setup makes the keys and input pools and
// checks once that a wrong output would be caught. The ML-DSA phases are there
// when this Go has crypto/mldsa (1.27 on).
func allPhases() ([]*phase, error) {
	makers := []phaseMaker{
		newKEMKeygen, newKEMEncaps, newKEMDecaps,
		func() (*phase, error) { return newDHKeygen(x25519) },
		func() (*phase, error) { return newDHDerive(x25519) },
		func() (*phase, error) { return newDHKeygen(p256) },
		func() (*phase, error) { return newDHDerive(p256) },
		newSigSign, newSigVerify,
	}
	makers = append(makers, mldsaPhases()...)
	makers = append(makers,
		func() (*phase, error) { return newAEAD(true) },
		func() (*phase, error) { return newAEAD(false) },
		newAEADKey,
		newKDFExtract, newKDFExpand, newMAC,
		func() (*phase, error) { return newHash(false) },
		func() (*phase, error) { return newHash(true) },
	)
	phases := make([]*phase, 0, len(makers))
	for _, m := range makers {
		p, err := m()
		if err != nil {
			return nil, err
		}
		phases = append(phases, p)
	}
	return phases, nil
}

// measure warms every phase up, sets its iteration count, then runs the
// interleaved rounds.
func measure(phases []*phase, s settings) error {
	for _, p := range phases {
		median, err := p.warmUp(time.Duration(s.warmupMs) * time.Millisecond)
		if err != nil {
			return p.fail(err)
		}
		p.target = iterationsFor(s.iterations, time.Duration(s.budgetMs)*time.Millisecond, median)
		p.SamplesNs = make([]int64, 0, p.target)
		p.situ = inState(p.Operation)
	}
	for r := range s.rounds {
		// Rotating the order gives each phase every position in turn, so none
		// always follows the same neighbour's cache footprint.
		for k := range phases {
			p := phases[(k+r)%len(phases)]
			if err := p.runChunk(chunkSize(p.target, s.rounds, r)); err != nil {
				return p.fail(err)
			}
		}
	}
	return nil
}

func (p *phase) fail(err error) error {
	return fmt.Errorf("%s %s: %w", p.Algorithm, p.Operation, err)
}

// warmUp runs the phase for d (at least one call), verifies the first output,
// and returns the median call time.
func (p *phase) warmUp(d time.Duration) (time.Duration, error) {
	var times []int64
	sample := make([]int64, 1)
	start := time.Now()
	for len(times) == 0 || (time.Since(start) < d && len(times) < maxWarmupCalls) {
		if err := p.bench.run(1, sample); err != nil {
			return 0, err
		}
		if len(times) == 0 {
			if err := p.bench.check(0); err != nil {
				return 0, err
			}
			p.Verified++
		}
		times = append(times, sample[0])
	}
	p.Warmup = len(times)
	return time.Duration(median(times)), nil
}

// iterationsFor is how many calls a phase gets: the requested count, or as
// many as fit the budget at the warm-up median, but never fewer than
// minIterations (or the requested count, if that is smaller).
func iterationsFor(requested int, budget, perCall time.Duration) int {
	n := requested
	if perCall > 0 {
		n = min(n, int(budget/perCall))
	}
	return max(n, min(minIterations, requested))
}

// chunkSize is round r's share of target calls over rounds rounds; the
// remainder is spread so that the chunks add up to target.
func chunkSize(target, rounds, r int) int {
	return target*(r+1)/rounds - target*r/rounds
}

// runChunk times n calls and then verifies their outputs.
func (p *phase) runChunk(n int) error {
	if n == 0 {
		return nil
	}
	runtime.GC()
	// The phase before this one has had the caches: one untimed call brings
	// this phase's code and data back.
	if err := p.bench.run(1, make([]int64, 1)); err != nil {
		return err
	}
	samples := make([]int64, n)
	if err := p.bench.run(n, samples); err != nil {
		return err
	}
	p.SamplesNs = append(p.SamplesNs, samples...)
	var timed int64
	for _, s := range samples {
		timed += s
	}
	// The first and last outputs always, the ones between while verification
	// has used less than half the time the calls took.
	verifyStart := time.Now()
	for i := range n {
		if i != 0 && i != n-1 && int64(time.Since(verifyStart))*2 >= timed {
			continue
		}
		if err := p.bench.check(i); err != nil {
			return fmt.Errorf("output %d: %w", len(p.SamplesNs)-n+i, err)
		}
		p.Verified++
	}
	if p.situ {
		return p.situChunk(min(n, situPerChunk))
	}
	return nil
}

// situChunk times m calls one at a time, each after situEvictBytes written
// and a sleep of situWait; the last one's output is verified.
func (p *phase) situChunk(m int) error {
	runtime.GC()
	sample := make([]int64, 1)
	for j := range m {
		for i := 0; i < len(situBuf); i += 64 {
			situBuf[i] += byte(i >> 6)
		}
		// The thread itself sleeps: with time.Sleep(situWait) the peer's
		// phases took 2.9 s where they had taken 1.1 s, about 1.2 ms for
		// each of their 1,500 calls in state (Zen 5 VM, go1.27.3, 2026-12-05):
		// the runtime's timers wake it in whole milliseconds here.
		ts := syscall.NsecToTimespec(int64(situWait))
		for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
		}
		if err := p.bench.run(1, sample); err != nil {
			return err
		}
		p.SituNs = append(p.SituNs, sample[0])
		if j == m-1 {
			if err := p.bench.check(0); err != nil {
				return fmt.Errorf("output in a handshake's state: %w", err)
			}
			p.Verified++
		}
	}
	return nil
}

func median(xs []int64) int64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
