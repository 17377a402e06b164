package e2e

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rssBoundMB is the resident memory the sandbox stays under during the
// hostile load (docs/security.md, "Bounds on memory and work"): well
// above what an idle sandbox and its bounded journal hold, and below what
// the default 1,500 64 KB-header requests would take it to if the
// journal kept them unbounded.
const rssBoundMB = 128

// Sizes of the hostile requests.
const (
	hugeHeaderBytes = 64 << 10 // one header value per request
	forgedAzpBytes  = 4 << 10  // the claimed client id of each forged token
	hostileWorkers  = 8
)

// hostileCounts is how many forged tokens and 64 KB-header requests to
// send: a few thousand by default, so the suite stays quick, and the
// issue's 20,000 and 10,000 with HOSTILE_FULL=1.
func hostileCounts() (forged, headers int) {
	if os.Getenv("HOSTILE_FULL") == "1" {
		return 20000, 10000
	}
	return 3000, 1500
}

// TestHostileLoad floods the built binary, on loopback, with what a hostile
// caller on a shared sandbox would send: requests with 64 KB headers,
// tokens forged with a new client id each, rules and runtime clients with
// every field at its bound, 60 KB request paths walked against those rules,
// refusals with 60 KB values (a log flood) and hangs (held connections).
// Resident memory and log bytes must stay under their bounds, and a
// partner's calls during each attack must succeed (their p50 and p99 are
// logged, not asserted); afterwards a partner's ordinary calls and a look
// at the journal must still work.
func TestHostileLoad(t *testing.T) {
	p := startSandbox(t, "--rate-limit", "1000") // the default limit: per-client state is part of the attack
	forged, headers := hostileCounts()
	c := newClient(hostileWorkers)

	t.Run("64KB headers", func(t *testing.T) {
		big := strings.Repeat("h", hugeHeaderBytes)
		statuses := flood(t, c, headers, func(i int) (*http.Request, error) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, p.base+"/api/v1/referrals/trials", nil)
			if err == nil {
				req.Header.Set("X-Padding", big)
				req.Header.Set("X-Request-Id", "hostile-"+strconv.Itoa(i))
			}
			return req, err
		})
		if statuses[http.StatusUnauthorized] != headers {
			t.Errorf("statuses %v, want %d answered 401", statuses, headers)
		}
		checkRSS(t, p, fmt.Sprintf("after %d requests with 64 KB headers", headers))
	})

	t.Run("forged tokens", func(t *testing.T) {
		statuses := flood(t, c, forged, func(i int) (*http.Request, error) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, p.base+"/api/v1/referrals/trials", nil)
			if err == nil {
				req.Header.Set("Authorization", "Bearer "+forgedToken(t, i))
			}
			return req, err
		})
		// Forged tokens share one small "unverified" rate-limit bucket, so
		// most of a flood is answered 429 before authentication: every
		// one is refused, none is served, none fails the server.
		if statuses[http.StatusUnauthorized]+statuses[http.StatusTooManyRequests] != forged || statuses[http.StatusUnauthorized] == 0 {
			t.Errorf("statuses %v, want all %d refused with 401 or 429", statuses, forged)
		}
		checkRSS(t, p, fmt.Sprintf("after %d forged tokens with unique %d-byte azp values", forged, forgedAzpBytes))
	})

	token := mustToken(t, c, p.base, partners[0].id, partners[0].secret)
	partnerBaseline(t, p.base, token)
	t.Run("admin fields at their bounds", func(t *testing.T) { attackBigFields(t, p, c, token) })
	t.Run("long paths", func(t *testing.T) { attackLongPaths(t, p, c, token) })
	t.Run("log flood", func(t *testing.T) { attackLogFlood(t, p, c, token) })
	t.Run("held connections", func(t *testing.T) { attackHeldConnections(t, p, token) })

	// A partner's ordinary calls still work (requestTimeout bounds them),
	// and the journal answers one bounded page.
	a, err := do(t.Context(), c, http.MethodGet, p.base+"/api/v1/referrals/trials", token, "", nil, nil)
	if err != nil || a.status != http.StatusOK {
		t.Fatalf("a partner's call after the flood: %v, status %d %s", err, a.status, a.body)
	}
	a, err = do(t.Context(), c, http.MethodGet, p.base+"/__sandbox/requests", "", "", nil, nil)
	if err != nil || a.status != http.StatusOK {
		t.Fatalf("the journal after the flood: %v, status %d", err, a.status)
	}
	var page struct {
		Requests []json.RawMessage `json:"requests"`
	}
	if err := json.Unmarshal(a.body, &page); err != nil || len(page.Requests) != 100 || len(a.body) > 1<<20 {
		t.Errorf("the journal's first page: %d entries in %d bytes (%v); want 100 in under 1 MiB", len(page.Requests), len(a.body), err)
	}
	checkRSSUnder(t, p, "at the end", bigFieldsRSSBoundMB)
}

// flood sends n requests built by build from hostileWorkers goroutines and
// counts the answers by status. A transport error fails the test: the
// sandbox must answer every one.
func flood(t *testing.T, c *http.Client, n int, build func(i int) (*http.Request, error)) map[int]int {
	t.Helper()
	var next atomic.Int64
	var mu sync.Mutex
	statuses := map[int]int{}
	var failures atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for range hostileWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				status, err := send(t.Context(), c, build, i)
				if err != nil {
					failures.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				mu.Lock()
				statuses[status]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if f := failures.Load(); f > 0 {
		t.Errorf("%d of %d requests got no answer; first: %v", f, n, firstErr.Load())
	}
	return statuses
}

func send(ctx context.Context, c *http.Client, build func(i int) (*http.Request, error), i int) (int, error) {
	req, err := build(i)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	resp, err := c.Do(req.WithContext(ctx))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = bufio.NewReader(resp.Body).Discard(1 << 20)
	return resp.StatusCode, nil
}

// forgedToken is a JWT that looks like the sandbox's, claiming a client id
// of its own, with a random signature no key made.
func forgedToken(t *testing.T, i int) string {
	t.Helper()
	enc := base64.RawURLEncoding
	header, err := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT"})
	if err != nil {
		t.Fatal(err)
	}
	azp := fmt.Sprintf("forged-%06d-%s", i, strings.Repeat("x", forgedAzpBytes))
	claims, err := json.Marshal(map[string]any{
		"azp": azp, "aud": "api://referrals-sandbox", "exp": time.Now().Add(time.Hour).Unix(), "roles": []string{"Trials.Read"},
	})
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 256)
	_, _ = rand.Read(sig)
	return enc.EncodeToString(header) + "." + enc.EncodeToString(claims) + "." + enc.EncodeToString(sig)
}

// checkRSS fails the test when the process's resident memory (VmRSS in
// /proc/PID/status) is over rssBoundMB.
func checkRSS(t *testing.T, p *sandboxProc, when string) {
	t.Helper()
	checkRSSUnder(t, p, when, rssBoundMB)
}

// checkRSSUnder fails the test when the process's resident memory is over
// boundMB.
func checkRSSUnder(t *testing.T, p *sandboxProc, when string, boundMB int) {
	t.Helper()
	rss, err := residentMB(p.cmd.Process.Pid)
	if err != nil {
		t.Fatalf("read resident memory: %v", err)
	}
	t.Logf("resident memory %s: %d MB", when, rss)
	if rss > boundMB {
		t.Errorf("resident memory %s is %d MB, over the %d MB bound", when, rss, boundMB)
	}
}

// residentMB reads VmRSS of process pid, in MB.
func residentMB(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read /proc/%d/status: %w", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				return 0, fmt.Errorf("parse VmRSS %q: %w", v, err)
			}
			return kb / 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// TestJournalBytesFlag: --journal-bytes reaches the journal of the running
// binary: with the smallest budget, 1 MiB, requests with 58 KB of headers
// each (kept about 58 KB after truncation) push the oldest out long before
// --journal-size would.
func TestJournalBytesFlag(t *testing.T) {
	p := startSandbox(t, "--journal-bytes", "1048576")
	c := newClient(1)
	header := http.Header{}
	for i := range 64 {
		header.Set(fmt.Sprintf("X-Pad-%02d", i), strings.Repeat("p", 900))
	}
	const sent = 40
	for range sent {
		if _, err := do(t.Context(), c, http.MethodGet, p.base+"/health/ping", "", "", nil, header); err != nil {
			t.Fatal(err)
		}
	}
	a, err := do(t.Context(), c, http.MethodGet, p.base+"/__sandbox/requests?limit=1000", "", "", nil, nil)
	if err != nil || a.status != http.StatusOK {
		t.Fatalf("journal: %v, status %d", err, a.status)
	}
	var page struct {
		Requests []json.RawMessage `json:"requests"`
	}
	if err := json.Unmarshal(a.body, &page); err != nil {
		t.Fatal(err)
	}
	if n := len(page.Requests); n == 0 || n >= sent || len(a.body) > 1<<20 {
		t.Errorf("the journal keeps %d of %d requests in %d bytes; a 1 MiB budget keeps about 17", n, sent, len(a.body))
	}
}
