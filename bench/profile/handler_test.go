package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// The handler benchmarks measure what the sandbox's middleware and
// handlers cost per request without the network: with -cpuprofile and
// -benchmem they show where a bench/run figure's time goes.
//
//	go test -run '^$' -bench Handler -benchmem -cpuprofile /tmp/cpu.out ./bench/profile

func openBench(b *testing.B) (*sandbox.Instance, string) {
	b.Helper()
	in, err := sandbox.Open(sandbox.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = in.Close() })
	rec := httptest.NewRecorder()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"sandbox-partner"},
		"client_secret": {"sandbox-partner-secret"}, "scope": {"api://referrals-sandbox/.default"}}
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/oauth2/v2.0/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	in.Server.ServeHTTP(rec, req)
	body := rec.Body.String()
	const key = `"access_token":"`
	i := strings.Index(body, key)
	if rec.Code != http.StatusOK || i < 0 {
		b.Fatalf("token: %d %s", rec.Code, body)
	}
	rest := body[i+len(key):]
	return in, rest[:strings.IndexByte(rest, '"')]
}

// benchGet serves GET path with the token, as wrk sends it, b.N times.
func benchGet(b *testing.B, path string) {
	in, token := openBench(b)
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8080"+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		in.Server.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		}
	}
}

// BenchmarkHandlerTrials is GET /api/v1/referrals/trials through the whole
// middleware chain.
func BenchmarkHandlerTrials(b *testing.B) { benchGet(b, "/api/v1/referrals/trials") }

// BenchmarkHandlerPing is GET /health/ping.
func BenchmarkHandlerPing(b *testing.B) { benchGet(b, "/health/ping") }

// BenchmarkHandlerList is the first page of 50 referrals.
func BenchmarkHandlerList(b *testing.B) { benchGet(b, "/api/v1/referrals/?limit=50") }

// BenchmarkHandlerHealth is the unauthenticated health check, outside the
// journal: the floor of the router alone.
func BenchmarkHandlerHealth(b *testing.B) {
	in, _ := openBench(b)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		in.Server.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8080/__sandbox/health", nil))
		if rec.Code != http.StatusOK {
			b.Fatalf("health: %d", rec.Code)
		}
	}
}

// BenchmarkHandlerQualified is POST /api/v1/referrals/qualified with a new
// externalSourceId each time.
func BenchmarkHandlerQualified(b *testing.B) {
	in, token := openBench(b)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		body := fmt.Sprintf(`{"externalSourceId":"bench-%d","trialId":"TRIAL-CARDIO-001",`+
			`"patient":{"firstName":"Ann","lastName":"Lee","dateOfBirth":"1980-04-12","gender":"female"},`+
			`"conditions":[{"code":"I50.9","system":"ICD-10-CM","display":"Heart failure"}]}`, n)
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/api/v1/referrals/qualified", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		in.Server.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			b.Fatalf("qualified: %d %s", rec.Code, rec.Body)
		}
	}
}

// BenchmarkOpen is the part of a cold start spent building the sandbox:
// fixtures, key, scenario library, store, routes.
func BenchmarkOpen(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		in, err := sandbox.Open(sandbox.Config{})
		if err != nil {
			b.Fatal(err)
		}
		if err := in.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// discardWriter is a ResponseWriter that keeps nothing but its headers, so
// the allocations BenchmarkServerTrials counts are the sandbox's own.
type discardWriter struct {
	header http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.header }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(status int)      { w.status = status }

// BenchmarkServerTrials is GET /api/v1/referrals/trials with one request
// value and a writer that keeps nothing: its allocs/op are what the
// sandbox itself allocates per authenticated GET (target: at most 10),
// without httptest's request parsing and recorder.
func BenchmarkServerTrials(b *testing.B) {
	in, token := openBench(b)
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8080/api/v1/referrals/trials", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	w := &discardWriter{header: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.header)
		w.status = 0
		in.Server.ServeHTTP(w, req)
		if w.status != 0 && w.status != http.StatusOK {
			b.Fatalf("trials: %d", w.status)
		}
	}
}

// BenchmarkHandlerToken is a client-credentials token request through the
// whole middleware chain: the RS256 signature and what surrounds it.
func BenchmarkHandlerToken(b *testing.B) {
	in, _ := openBench(b)
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"sandbox-partner"},
		"client_secret": {"sandbox-partner-secret"}, "scope": {"api://referrals-sandbox/.default"}}.Encode()
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/oauth2/v2.0/token", strings.NewReader(form))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		rec := httptest.NewRecorder()
		in.Server.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("token: %d %s", rec.Code, rec.Body)
		}
	}
}
