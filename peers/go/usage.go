package main

import (
	"runtime"
	"syscall"
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
// (0 if the call fails).
func monotonicNs() int64 {
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return ts.Nano()
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
