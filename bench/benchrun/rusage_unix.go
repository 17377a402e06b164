//go:build unix

package main

import (
	"errors"
	"os"
	"runtime"
	"syscall"
	"time"
)

// processUsage is the CPU time (user plus system) and the peak resident
// memory, in bytes, of a process that has exited, from its rusage.
func processUsage(st *os.ProcessState) (cpu time.Duration, peakRSS int64, err error) {
	ru, ok := st.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return 0, 0, errors.New("no rusage for the process")
	}
	peak := ru.Maxrss * 1024 // kilobytes on Linux and the BSDs
	if runtime.GOOS == "darwin" {
		peak = ru.Maxrss // bytes there
	}
	return st.UserTime() + st.SystemTime(), int64(peak), nil
}
