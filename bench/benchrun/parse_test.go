package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

const wrkSample = `Running 2s test @ http://127.0.0.1:34683/
  2 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     5.82ms    8.92ms  65.64ms   90.85%
    Req/Sec     7.16k     2.69k   13.59k    70.00%
  Latency Distribution
     50%  812.00us
     75%    6.11ms
     90%   13.76ms
     99%    1.20s
  28588 requests in 2.02s, 3.46MB read
  Non-2xx or 3xx responses: 7
  Socket errors: connect 1, read 2, write 0, timeout 3
Requests/sec:  14181.62
Transfer/sec:      1.72MB
`

func TestParseWrk(t *testing.T) {
	got, err := parseWrk(wrkSample)
	if err != nil {
		t.Fatal(err)
	}
	want := wrkResult{RequestsPerSec: 14181.62, Requests: 28588, Non2xx: 7, SocketErrors: 6, P50Ms: 0.812, P99Ms: 1200}
	if math.Abs(got.P50Ms-want.P50Ms) > 1e-9 {
		t.Errorf("P50Ms = %v, want %v", got.P50Ms, want.P50Ms)
	}
	got.P50Ms = want.P50Ms
	if got != want {
		t.Errorf("parseWrk = %+v, want %+v", got, want)
	}
}

func TestParseWrkErrors(t *testing.T) {
	tests := []struct {
		name, out, wantErr string
	}{
		{"no rate line", "Running 2s test @ x\n  28588 requests in 2.02s, 3.46MB read\n", "Requests/sec"},
		{"empty", "", "Requests/sec"},
		{"bad latency", "     99%   12.0parsecs\nRequests/sec: 1\n", "latency"},
		{"bad socket errors", "  Socket errors: connect x, read 0\nRequests/sec: 1\n", "socket errors"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseWrk(tt.out)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("parseWrk error = %v, want one mentioning %q", err, tt.wantErr)
			}
		})
	}
}

func TestParseWrkDuration(t *testing.T) {
	tests := []struct {
		in   string
		want float64
	}{
		{"812.00us", 0.812}, {"1.23ms", 1.23}, {"2.01s", 2010}, {"1.50m", 90000},
	}
	for _, tt := range tests {
		got, err := parseWrkDuration(tt.in)
		if err != nil || math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("parseWrkDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	if _, err := parseWrkDuration("12"); err == nil {
		t.Error("a latency without a unit parsed")
	}
}

func TestParseBenchNsPerOp(t *testing.T) {
	out := `goos: linux
BenchmarkIssue-2                	     705	   1700000 ns/op
BenchmarkIssueParallel-2   	     205	   5854373 ns/op	  4000 B/op
BenchmarkIssueParallel-2   	     222	   4791439 ns/op
BenchmarkIssueParallelX-2   	     222	   1 ns/op
PASS
`
	got, err := parseBenchNsPerOp(out, "BenchmarkIssueParallel")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != 5854373 || got[1] != 4791439 {
		t.Errorf("ns/op = %v, want [5854373 4791439]", got)
	}
	if _, err := parseBenchNsPerOp("PASS\n", "BenchmarkIssueParallel"); err == nil {
		t.Error("output without the benchmark parsed")
	}
}

func TestParseBenchAllocs(t *testing.T) {
	out := "BenchmarkServerTrials-2   \t    2000\t     14278 ns/op\t    2036 B/op\t       8 allocs/op\n" +
		"BenchmarkServerTrialsX-2   \t    2000\t     1 ns/op\t    2 B/op\t       99 allocs/op\n"
	got, err := parseBenchMetric(out, "BenchmarkServerTrials", "allocs/op")
	if err != nil || len(got) != 1 || got[0] != 8 {
		t.Errorf("allocs/op = %v, %v; want [8]", got, err)
	}
	if _, err := parseBenchMetric("BenchmarkServerTrials-2 2000 14278 ns/op\n", "BenchmarkServerTrials", "allocs/op"); err == nil {
		t.Error("a line without allocs/op parsed")
	}
}

func TestParseVmRSS(t *testing.T) {
	status := "Name:\treferrals-sandbox\nVmPeak:\t  999 kB\nVmRSS:\t   15360 kB\nThreads:\t5\n"
	got, err := parseVmRSS(strings.NewReader(status))
	if err != nil || got != 15360*1024 {
		t.Errorf("parseVmRSS = %d, %v; want %d", got, err, 15360*1024)
	}
	if _, err := parseVmRSS(strings.NewReader("Name:\tx\n")); err == nil {
		t.Error("a status without VmRSS parsed")
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{
		{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5},
	}
	for _, tt := range tests {
		in := append([]float64(nil), tt.in...)
		if got := median(tt.in); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
		for i := range in {
			if in[i] != tt.in[i] {
				t.Errorf("median reordered its argument: %v", tt.in)
			}
		}
	}
}

func TestThousands(t *testing.T) {
	for in, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 71234: "71,234", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := thousands(in); got != want {
			t.Errorf("thousands(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestTailBufferKeepsTheEnd(t *testing.T) {
	b := &tailBuffer{max: 5}
	for _, s := range []string{"abc", "defg", "h"} {
		if _, err := b.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if got := b.String(); got != "defgh" {
		t.Errorf("tail = %q, want %q", got, "defgh")
	}
}

func TestParseStatCPU(t *testing.T) {
	// utime 250 and stime 50 ticks; the command name holds a space and a ')'.
	stat := "4242 (ref (x) sandbox) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 9 0 100 1000000 3000 18446744073709551615"
	got, err := parseStatCPU(stat)
	if err != nil || got != 3*time.Second {
		t.Errorf("parseStatCPU = %v, %v; want 3s", got, err)
	}
	for _, bad := range []string{"", "1 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 10 x 0"} {
		if _, err := parseStatCPU(bad); err == nil {
			t.Errorf("parseStatCPU(%q) succeeded", bad)
		}
	}
}
