package main

import (
	"bufio"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// profileStartup profiles what bench/run --growth times as start-up:
// sandbox.Open on the options given (a --fixtures directory, a --data
// file), with a CPU profile of the whole open and a heap profile of what
// stays live after it (in use, not allocations), and prints the time taken
// and the resident memory after, as bench/run reads it.
func profileStartup(opts sandbox.Config, out string) error {
	opts.Logger = slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cpu, err := os.Create(out + ".cpu.pprof")
	if err != nil {
		return fmt.Errorf("cpu profile: %w", err)
	}
	defer cpu.Close()
	if err := pprof.StartCPUProfile(cpu); err != nil {
		return fmt.Errorf("cpu profile: %w", err)
	}
	start := time.Now()
	in, err := sandbox.Open(opts)
	took := time.Since(start)
	pprof.StopCPUProfile()
	if err != nil {
		return fmt.Errorf("open the sandbox: %w", err)
	}
	defer in.Close()
	rss, rssErr := vmRSS()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	heap, err := os.Create(out + ".heap.pprof")
	if err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	defer heap.Close()
	if err := pprof.Lookup("heap").WriteTo(heap, 0); err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	fmt.Printf("open took %.2f s; resident %s; live heap %.1f MB; heap in use %.1f MB, released %.1f MB\n",
		took.Seconds(), rss, float64(ms.HeapAlloc)/1e6, float64(ms.HeapInuse)/1e6, float64(ms.HeapReleased)/1e6)
	if rssErr != nil {
		fmt.Println("resident memory:", rssErr)
	}
	printMemoryClasses()
	fmt.Printf("wrote %s.cpu.pprof (the open) and %s.heap.pprof (live after it); e.g. go tool pprof -sample_index=inuse_space -top %s.heap.pprof\n", out, out, out)
	return nil
}

// vmRSS is this process's resident memory (VmRSS of /proc/self/status).
func vmRSS() (string, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return "unknown", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 3 && fields[0] == "VmRSS:" {
			kb, err := strconv.Atoi(fields[1])
			if err != nil {
				return "unknown", fmt.Errorf("VmRSS %q: %w", fields[1], err)
			}
			return fmt.Sprintf("%.1f MB", float64(kb)*1024/1e6), nil
		}
	}
	return "unknown", fmt.Errorf("no VmRSS line in /proc/self/status")
}

// printMemoryClasses prints the runtime's account of the memory it has
// mapped (runtime/metrics' /memory/classes/), which splits what a resident
// figure holds besides the live heap: free and unused heap pages, stacks,
// and the runtime's own metadata.
func printMemoryClasses() {
	var samples []metrics.Sample
	for _, d := range metrics.All() {
		if strings.HasPrefix(d.Name, "/memory/classes/") && d.Kind == metrics.KindUint64 {
			samples = append(samples, metrics.Sample{Name: d.Name})
		}
	}
	metrics.Read(samples)
	for _, s := range samples {
		fmt.Printf("  %-45s %7.2f MB\n", strings.TrimPrefix(s.Name, "/memory/classes/"), float64(s.Value.Uint64())/1e6)
	}
}
