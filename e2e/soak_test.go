package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
)

// soakClients is how many partner clients run at once.
const soakClients = 50

// soakDuration is SOAK_DURATION (a Go duration), default 5 s so that the
// README's test command stays about a minute; CI runs 15 s and a long soak
// is SOAK_DURATION=10m (see docs/performance.md).
func soakDuration(t *testing.T) time.Duration {
	t.Helper()
	if v := os.Getenv("SOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 3*time.Second || d > time.Hour {
			t.Fatalf("SOAK_DURATION=%q: want a duration from 3s to 1h, such as 15s", v)
		}
		return d
	}
	return 5 * time.Second
}

// soakOp is one kind of request a soak client sends.
type soakOp int

const (
	opToken soakOp = iota
	opTrials
	opPing
	opList
	opReadBack
	opSubmit
)

var opNames = [...]string{"token", "trials", "ping", "list", "read-back", "submit"}

// pickOp draws the mix: mostly submissions and reads, some token requests
// (each one an RS256 signature, the costliest request there is).
func pickOp(rng *rand.Rand) soakOp {
	switch n := rng.IntN(100); {
	case n < 5:
		return opToken
	case n < 20:
		return opTrials
	case n < 30:
		return opPing
	case n < 40:
		return opList
	case n < 55:
		return opReadBack
	}
	return opSubmit
}

// flakyWindow is when the flaky scenario may have been active: from just
// before it was switched on until its switch-off was confirmed.
type flakyWindow struct {
	mu       sync.Mutex
	from, to time.Time
}

func (f *flakyWindow) set(from, to time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !from.IsZero() {
		f.from = from
	}
	if !to.IsZero() {
		f.to = to
	}
}

// overlaps reports whether a request sent at start and answered at end
// may have met the flaky scenario.
func (f *flakyWindow) overlaps(start, end time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.from.IsZero() || end.Before(f.from) {
		return false
	}
	return f.to.IsZero() || !start.After(f.to)
}

// soakWorker is one client's record: what it sent and what came back.
type soakWorker struct {
	id       int
	clientID string
	secret   string
	token    string
	next     int   // next submission number
	acked    []int // submissions answered 201
	rejected []int // submissions answered with a forced 503
}

// soakTally counts answers across workers and keeps the first failures.
type soakTally struct {
	requests, forced atomic.Int64
	perOp            [len(opNames)]atomic.Int64
	mu               sync.Mutex
	failures         []string
	failureCount     int
}

func (s *soakTally) fail(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failureCount++
	if len(s.failures) < 20 {
		s.failures = append(s.failures, fmt.Sprintf(format, args...))
	}
}

// TestSoak runs 50 concurrent clients against the built binary for
// SOAK_DURATION, with the flaky scenario on for the middle third, and then
// checks that nothing was lost: every request got an answer (a transport
// error is a failure), the only 5xx are the flaky scenario's 503s (with
// Sandbox-Rule and Retry-After, on the API, while it was on), and every
// submission answered 201 reads back exactly as sent, while none answered
// 503 was stored.
//
// It runs the built binary rather than sandbox.Open in-process: the
// binary is what partners run (its flags, HTTP server limits and
// logging), and the server's work is not slowed by the race detector
// instrumenting this test's own client code, nor the client by the server's.
func TestSoak(t *testing.T) {
	d := soakDuration(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("soak: %d clients for %s, seed %d", soakClients, d, seed)
	sb := startSandbox(t, "--log-level", "warn")
	client := newClient(soakClients + 10)
	prefix := fmt.Sprintf("soak%d", seed%1_000_000)

	workers := make([]*soakWorker, soakClients)
	for i := range workers {
		p := partners[i%len(partners)]
		workers[i] = &soakWorker{id: i, clientID: p.id, secret: p.secret, token: mustToken(t, client, sb.base, p.id, p.secret)}
	}
	tally := &soakTally{}
	window := &flakyWindow{}
	ctx := t.Context()
	stopAt := time.Now().Add(d)

	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(w.id)))
			for time.Now().Before(stopAt) && ctx.Err() == nil {
				soakStep(ctx, client, sb.base, prefix, w, pickOp(rng), rng, window, tally)
			}
		})
	}
	toggleFlaky(t, client, sb.base, d, stopAt, window)
	wg.Wait()

	t.Logf("soak: %d requests (%.0f/s), %d forced 503s; per op %s", tally.requests.Load(),
		float64(tally.requests.Load())/d.Seconds(), tally.forced.Load(), perOpSummary(tally))
	if tally.failureCount > 0 {
		// The sandbox logs at warn level, so its log holds what net/http
		// and the handlers said about a connection closed without an answer.
		t.Errorf("%d request(s) failed during the soak; the first:\n%s\nthe sandbox's log:\n%s", tally.failureCount, joinLines(tally.failures), sb.stderr)
	}
	if tally.forced.Load() == 0 {
		t.Errorf("the flaky scenario forced no 503 in its third of the soak: was it active?")
	}
	verifySubmissions(t, client, sb.base, prefix, workers)
	if code := sb.exitedEarly(); code != "" {
		t.Errorf("the sandbox exited during the soak: %s\nstderr:\n%s", code, sb.stderr)
	}
}

// toggleFlaky switches the flaky scenario on for the middle third of the
// soak: POST at d/3, DELETE at 2d/3.
func toggleFlaky(t *testing.T, client *http.Client, base string, d time.Duration, stopAt time.Time, window *flakyWindow) {
	t.Helper()
	start := stopAt.Add(-d)
	sleepUntil(t, start.Add(d/3))
	window.set(time.Now(), time.Time{})
	a, err := do(t.Context(), client, http.MethodPost, base+"/__sandbox/library/flaky", "", "application/json", []byte(`{}`), nil)
	if err != nil || a.status/100 != 2 {
		t.Errorf("activate flaky: %v status %d %s", err, a.status, a.body)
	}
	sleepUntil(t, start.Add(2*d/3))
	a, err = do(t.Context(), client, http.MethodDelete, base+"/__sandbox/library/flaky", "", "application/json", []byte(`{}`), nil)
	if err != nil || a.status/100 != 2 {
		t.Errorf("deactivate flaky: %v status %d %s", err, a.status, a.body)
	}
	window.set(time.Time{}, time.Now())
}

func sleepUntil(t *testing.T, at time.Time) {
	select {
	case <-t.Context().Done():
	case <-time.After(time.Until(at)):
	}
}

// soakStep sends one request of kind op and judges its answer.
func soakStep(ctx context.Context, c *http.Client, base, prefix string, w *soakWorker, op soakOp, rng *rand.Rand, window *flakyWindow, tally *soakTally) {
	var (
		method, path, contentType string
		body                      []byte
		token                     = w.token
		want                      = http.StatusOK
		sent                      qualifiedRequest
		seq                       int
	)
	switch op {
	case opToken:
		method, path, contentType, token = http.MethodPost, "/oauth2/v2.0/token", "application/x-www-form-urlencoded", ""
		body = tokenForm(w.clientID, w.secret)
	case opTrials:
		method, path = http.MethodGet, "/api/v1/referrals/trials"
	case opPing:
		method, path = http.MethodGet, "/health/ping"
	case opList:
		method, path = http.MethodGet, "/api/v1/referrals/qualified?limit=20"
	case opReadBack:
		if len(w.acked) == 0 {
			return
		}
		seq = w.acked[rng.IntN(len(w.acked))]
		sent = submission(prefix, w.id, seq)
		method, path = http.MethodGet, "/api/v1/referrals/qualified/"+url.PathEscape(sent.ExternalSourceID)
	case opSubmit:
		seq = w.next
		w.next++
		sent = submission(prefix, w.id, seq)
		var err error
		if body, err = sent.body(); err != nil {
			tally.fail("%v", err)
			return
		}
		method, path, contentType, want = http.MethodPost, "/api/v1/referrals/qualified", "application/json", http.StatusCreated
	}
	start := time.Now()
	a, err := do(ctx, c, method, base+path, token, contentType, body, nil)
	end := time.Now()
	tally.requests.Add(1)
	tally.perOp[op].Add(1)
	if err != nil {
		if ctx.Err() == nil {
			tally.fail("%s %s (worker %d): no answer: %v", method, path, w.id, err)
		}
		return
	}
	if a.status == http.StatusServiceUnavailable && forcedByFlaky(a, op, start, end, window) {
		tally.forced.Add(1)
		if op == opSubmit {
			w.rejected = append(w.rejected, seq)
		}
		return
	}
	if a.status != want {
		tally.fail("%s %s (worker %d): status %d, want %d; Sandbox-Rule %q; body %.300s", method, path, w.id, a.status, want, a.header.Get("Sandbox-Rule"), a.body)
		return
	}
	switch op {
	case opToken:
		tok, err := accessToken(a)
		if err != nil {
			tally.fail("worker %d: %v", w.id, err)
			return
		}
		w.token = tok
	case opSubmit:
		w.acked = append(w.acked, seq)
		fallthrough
	case opReadBack:
		var got fixtures.QualifiedReferral
		if err := json.Unmarshal(a.body, &got); err != nil {
			tally.fail("%s %s: %v", method, path, err)
			return
		}
		if diff := sameAsSent(got, sent, w.clientID); diff != "" {
			tally.fail("%s %s: %s", method, path, diff)
		}
	}
}

// forcedByFlaky reports whether a 503 is the flaky scenario's: on the API
// (flaky's rule names endpoint api; ping and token never get it), naming
// its rule, with Retry-After, while the scenario may have been on.
func forcedByFlaky(a answer, op soakOp, start, end time.Time, window *flakyWindow) bool {
	onAPI := op != opToken && op != opPing
	return onAPI && a.header.Get("Sandbox-Rule") != "" && a.header.Get("Retry-After") != "" && window.overlaps(start, end)
}

// verifySubmissions reads every acknowledged submission back by its id and
// compares it with what was sent, checks that no submission answered 503
// was stored, and that each partner's list holds exactly the acknowledged
// ones.
func verifySubmissions(t *testing.T, c *http.Client, base, prefix string, workers []*soakWorker) {
	t.Helper()
	tokens := map[string]string{}
	for _, p := range partners {
		tokens[p.id] = mustToken(t, c, base, p.id, p.secret)
	}
	type check struct {
		w       *soakWorker
		seq     int
		wantGet int
	}
	checks := make(chan check)
	tally := &soakTally{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for ch := range checks {
				sent := submission(prefix, ch.w.id, ch.seq)
				u := base + "/api/v1/referrals/qualified/" + url.PathEscape(sent.ExternalSourceID)
				a, err := do(t.Context(), c, http.MethodGet, u, tokens[ch.w.clientID], "", nil, nil)
				switch {
				case err != nil:
					tally.fail("read back %s: %v", sent.ExternalSourceID, err)
				case a.status != ch.wantGet:
					tally.fail("read back %s: status %d, want %d: %.300s", sent.ExternalSourceID, a.status, ch.wantGet, a.body)
				case a.status == http.StatusOK:
					var got fixtures.QualifiedReferral
					if err := json.Unmarshal(a.body, &got); err != nil {
						tally.fail("read back %s: %v", sent.ExternalSourceID, err)
					} else if diff := sameAsSent(got, sent, ch.w.clientID); diff != "" {
						tally.fail("read back %s: %s", sent.ExternalSourceID, diff)
					}
				}
			}
		})
	}
	acked := map[string]int{}
	total := 0
	for _, w := range workers {
		for _, seq := range w.acked {
			checks <- check{w, seq, http.StatusOK}
		}
		for _, seq := range w.rejected {
			checks <- check{w, seq, http.StatusNotFound}
		}
		acked[w.clientID] += len(w.acked)
		total += len(w.acked)
	}
	close(checks)
	wg.Wait()
	if tally.failureCount > 0 {
		t.Errorf("%d acknowledged submission(s) did not read back as sent; the first:\n%s", tally.failureCount, joinLines(tally.failures))
	}
	for _, p := range partners {
		stored := 0
		for _, q := range listAllQualified(t, c, base, tokens[p.id], total+10_000) {
			if strings.HasPrefix(q.ExternalSourceID, prefix+"-") {
				stored++
			}
		}
		if stored != acked[p.id] {
			t.Errorf("%s: %d soak submissions stored, %d acknowledged with 201", p.id, stored, acked[p.id])
		}
	}
	t.Logf("soak: %d acknowledged submissions read back", total)
}

func perOpSummary(s *soakTally) string {
	out := ""
	for i, name := range opNames {
		out += fmt.Sprintf("%s=%d ", name, s.perOp[i].Load())
	}
	return out
}

func joinLines(lines []string) string {
	out := ""
	for _, l := range lines {
		out += "  " + l + "\n"
	}
	return out
}
