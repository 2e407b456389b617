package main

import (
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// usage is a snapshot of what the process has consumed so far: CPU time of all
// its threads (the Go runtime's too: garbage collection belongs to the cost of
// a handshake in Go) and the runtime's allocation counters.
type usage struct {
	cpuNs      int64
	mallocs    uint64
	allocBytes uint64
}

func readUsage() (usage, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return usage{}, err
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return usage{
		cpuNs:      timevalNs(ru.Utime) + timevalNs(ru.Stime),
		mallocs:    ms.Mallocs,
		allocBytes: ms.TotalAlloc,
	}, nil
}

// monotonicNs is CLOCK_MONOTONIC (1 on Linux) in nanoseconds: the clock the
// network emulator stamps packets with, one for every process and namespace
// (0 if the call fails). clock_gettime never blocks, so the raw call skips
// the runtime's bookkeeping for a blocking system call.
func monotonicNs() int64 {
	var ts syscall.Timespec
	if _, _, e := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return ts.Nano()
}

// startClock starts a connection's clock: a time.Time for its spans and the
// CLOCK_MONOTONIC reading it was taken at (bracketed, below).
func startClock() (time.Time, int64) {
	return bracketed(monotonicNs, time.Now)
}

// bracketed reads now between two readings of mono and gives now's value and
// the bracket's midpoint on mono's scale. A goroutine preempted between two
// separate reads would put the spans' origin that long after StartedNs, and a
// handshake's span [StartedNs, StartedNs+ReadyNs) would end before the
// handshake did: the network grid, which looks for the server's flight in
// that span, found none for one of a Go cell's handshakes under load. So the
// read is taken again, a few times at most, until the bracket is tight (two
// clock_gettime calls and time.Now, no preemption), the tightest kept, as
// pqprof's own start_clock does. A failed mono read gives 0: unknown, which
// pqprof replaces with its own reading.
func bracketed(mono func() int64, now func() time.Time) (time.Time, int64) {
	const tightNs = 2000
	var best struct {
		t       time.Time
		at, gap int64
	}
	for i := 0; i < 9; i++ {
		before := mono()
		t := now()
		after := mono()
		if before == 0 || after == 0 {
			return now(), 0
		}
		if gap := after - before; i == 0 || gap < best.gap {
			best.t, best.at, best.gap = t, before+gap/2, gap
		}
		if best.gap <= tightNs {
			break
		}
	}
	return best.t, best.at
}

func timevalNs(tv syscall.Timeval) int64 {
	return int64(tv.Sec)*1e9 + int64(tv.Usec)*1e3
}

// usageDelta is what was consumed between two snapshots, as the serve and
// client commands report it.
type usageDelta struct {
	CPUNs        int64  `json:"cpu_ns"`
	GoMallocs    uint64 `json:"go_mallocs"`
	GoAllocBytes uint64 `json:"go_alloc_bytes"`
}

func (u usage) since(before usage) usageDelta {
	return usageDelta{
		CPUNs:        u.cpuNs - before.cpuNs,
		GoMallocs:    u.mallocs - before.mallocs,
		GoAllocBytes: u.allocBytes - before.allocBytes,
	}
}
