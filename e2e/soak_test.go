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

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// soakClients is how many partner clients run at once.
const soakClients = 50

// soakDuration is SOAK_DURATION (a Go duration), default 5 s so that the
// README's test command stays about a minute; CI runs 15 s and a long soak
// is SOAK_DURATION=10m with go test's -timeout raised above it (see
// docs/performance.md).
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
	refused  []int // submissions answered 507: the client's store quota is full
}

// soakTally counts answers across workers and keeps the first failures.
type soakTally struct {
	requests, forced atomic.Int64
	// quota counts 507 answers: the partner's store quota (serve's
	// defaults) is full, which a long soak reaches.
	quota        atomic.Int64
	perOp        [len(opNames)]atomic.Int64
	mu           sync.Mutex
	failures     []string
	failureCount int
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
// Sandbox-Rule and Retry-After, on the API, while it was on) and the store
// quota's 507s (on submissions and on reads, which record a view), and
// every submission answered 201 is stored exactly as sent, while none
// answered 503 or 507 was stored. The sandbox runs with serve's default
// quota, so the soak also shows that the quota holds under load; it ends
// by logging the sandbox's resident memory.
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

	t.Logf("soak: %d requests (%.0f/s), %d forced 503s, %d quota 507s; per op %s", tally.requests.Load(),
		float64(tally.requests.Load())/d.Seconds(), tally.forced.Load(), tally.quota.Load(), perOpSummary(tally))
	if tally.failureCount > 0 {
		// The sandbox logs at warn level, so its log holds what net/http
		// and the handlers said about a connection closed without an answer.
		t.Errorf("%d request(s) failed during the soak; the first:\n%s\nthe sandbox's log:\n%s", tally.failureCount, joinLines(tally.failures), sb.stderr)
	}
	if tally.forced.Load() == 0 {
		t.Errorf("the flaky scenario forced no 503 in its third of the soak: was it active?")
	}
	verifySubmissions(t, client, sb.base, prefix, workers)
	t.Logf("soak: the sandbox's resident memory: %s", residentMemory(sb.cmd.Process.Pid))
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
	if a.status == http.StatusInsufficientStorage && refusedByQuota(a, op) {
		tally.quota.Add(1)
		if op == opSubmit {
			w.refused = append(w.refused, seq)
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
		var got referrals.QualifiedReferral
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

// refusedByQuota reports whether a 507 is the store quota's: the
// quota-exceeded problem, on an operation that stores (a submission, or a
// read of qualified referrals, which records a view).
func refusedByQuota(a answer, op soakOp) bool {
	var p struct {
		Type string `json:"type"`
	}
	stores := op == opSubmit || op == opList || op == opReadBack
	return stores && json.Unmarshal(a.body, &p) == nil && p.Type == "urn:referrals-sandbox:problem:quota-exceeded"
}

// residentMemory reads a process's resident memory now and at its peak
// from /proc (Linux), for the soak's last line.
func residentMemory(pid int) string {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "not known here (" + err.Error() + ")"
	}
	fields := map[string]string{}
	for _, line := range strings.Split(string(status), "\n") {
		if name, value, ok := strings.Cut(line, ":"); ok && (name == "VmRSS" || name == "VmHWM") {
			fields[name] = strings.TrimSpace(value)
		}
	}
	return fmt.Sprintf("%s now, %s at peak", fields["VmRSS"], fields["VmHWM"])
}

// verifySubmissions reads every partner's soak records through the admin
// data listing, which records no view and so never meets the quota, and
// checks that each acknowledged submission is stored exactly as sent, that
// none answered 503 or 507 was stored, and that nothing else was.
func verifySubmissions(t *testing.T, c *http.Client, base, prefix string, workers []*soakWorker) {
	t.Helper()
	total := 0
	for _, w := range workers {
		total += len(w.acked)
	}
	type key struct{ clientID, id string }
	stored := map[key]referrals.QualifiedReferral{}
	for _, p := range partners {
		listURL := base + "/__sandbox/data/qualified?clientId=" + url.QueryEscape(p.id)
		for _, q := range listAll[referrals.QualifiedReferral](t, c, listURL, "qualifiedReferrals", "", total+10_000) {
			if strings.HasPrefix(q.ExternalSourceID, prefix+"-") {
				stored[key{q.ClientID, q.ExternalSourceID}] = q
			}
		}
	}
	tally := &soakTally{}
	for _, w := range workers {
		for _, seq := range w.acked {
			sent := submission(prefix, w.id, seq)
			k := key{w.clientID, sent.ExternalSourceID}
			got, ok := stored[k]
			switch {
			case !ok:
				tally.fail("%s: answered 201, not stored", sent.ExternalSourceID)
			default:
				if diff := sameAsSent(got, sent, w.clientID); diff != "" {
					tally.fail("%s: %s", sent.ExternalSourceID, diff)
				}
			}
			delete(stored, k)
		}
		for what, seqs := range map[string][]int{"503": w.rejected, "507": w.refused} {
			for _, seq := range seqs {
				sent := submission(prefix, w.id, seq)
				if _, ok := stored[key{w.clientID, sent.ExternalSourceID}]; ok {
					tally.fail("%s: answered %s, yet stored", sent.ExternalSourceID, what)
				}
			}
		}
	}
	if tally.failureCount > 0 {
		t.Errorf("%d acknowledged or refused submission(s) not stored as answered; the first:\n%s", tally.failureCount, joinLines(tally.failures))
	}
	if len(stored) > 0 {
		t.Errorf("%d soak records stored that no submission was answered 201 for", len(stored))
	}
	t.Logf("soak: %d acknowledged submissions stored as sent", total)
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
