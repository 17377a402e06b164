package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// killCycles is how many times the durability test kills the sandbox on
// the same data file: later cycles also replay a file that a kill has
// already cut short.
const killCycles = 3

// writersPerCycle is how many clients write at once; at most this many
// referrals are in flight, unacknowledged, when the process dies.
const writersPerCycle = 4

// testSeed is E2E_SEED when set (to replay a failing run), else the time.
func testSeed(t *testing.T) uint64 {
	t.Helper()
	if v := os.Getenv("E2E_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("E2E_SEED=%q: want a whole number", v)
		}
		return s
	}
	return uint64(time.Now().UnixNano())
}

// referralRequest is the body of POST /api/v1/referrals/.
type referralRequest struct {
	TrialID string            `json:"trialId"`
	Patient referrals.Patient `json:"patient"`
	Notes   string            `json:"notes"`
}

// TestKillDuringWritesLosesNoAcknowledgedReferral writes referrals to a
// --data sandbox from several clients, kills it with SIGKILL at a seeded
// random moment 300-1500 ms in, restarts it on the same file, and checks
// that every referral answered 201 is there, exactly as acknowledged, three
// times over. Unacknowledged writes may or may not have landed, but no more
// of them than were in flight.
func TestKillDuringWritesLosesNoAcknowledgedReferral(t *testing.T) {
	seed := testSeed(t)
	t.Logf("seed %d (E2E_SEED=%d replays these kill moments)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	dataFile := filepath.Join(t.TempDir(), "sandbox.db")
	client := newClient(writersPerCycle + 2)
	marker := fmt.Sprintf("durability-%d", seed)
	acked := map[string]referrals.Referral{} // by outcomesId

	for cycle := 1; cycle <= killCycles; cycle++ {
		sb := startSandbox(t, "--data", dataFile, "--log-level", "warn")
		token := mustToken(t, client, sb.base, partners[0].id, partners[0].secret)
		checkAcknowledged(t, client, sb.base, token, marker, acked, (cycle-1)*writersPerCycle)

		delay := 300*time.Millisecond + time.Duration(rng.Int64N(int64(1200*time.Millisecond)))
		got := writeUntilKilled(t, client, sb, token, fmt.Sprintf("%s-c%d", marker, cycle), delay)
		if len(got) == 0 {
			t.Fatalf("cycle %d: no referral was acknowledged in %s", cycle, delay)
		}
		for _, r := range got {
			acked[r.OutcomesID] = r
		}
		t.Logf("cycle %d: SIGKILL after %s, %d referrals acknowledged", cycle, delay, len(got))
	}
	sb := startSandbox(t, "--data", dataFile, "--log-level", "warn")
	token := mustToken(t, client, sb.base, partners[0].id, partners[0].secret)
	checkAcknowledged(t, client, sb.base, token, marker, acked, killCycles*writersPerCycle)
}

// writeUntilKilled runs writersPerCycle clients that POST referrals in a
// loop, kills the process with SIGKILL after delay, and returns every
// referral acknowledged with 201.
func writeUntilKilled(t *testing.T, c *http.Client, sb *sandboxProc, token, marker string, delay time.Duration) []referrals.Referral {
	t.Helper()
	var (
		mu     sync.Mutex
		acked  []referrals.Referral
		failed []string
		wg     sync.WaitGroup
	)
	ctx, cancel := context.WithTimeout(t.Context(), delay+requestTimeout)
	defer cancel()
	trials := []string{"TRIAL-CARDIO-001", "TRIAL-ONCO-002", "TRIAL-DIAB-003"}
	for w := range writersPerCycle {
		wg.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				req := referralRequest{
					TrialID: trials[n%len(trials)],
					Patient: referrals.Patient{FirstName: "Kim", LastName: fmt.Sprintf("Writer%d", w), DateOfBirth: "1970-01-01", Gender: "unknown"},
					Notes:   fmt.Sprintf("%s-w%d-%d", marker, w, n),
				}
				body, err := json.Marshal(req)
				if err != nil {
					t.Errorf("encode: %v", err)
					return
				}
				a, err := do(ctx, c, http.MethodPost, sb.base+"/api/v1/referrals/", token, "application/json", body, nil)
				if err != nil {
					return // the process died: this write is unacknowledged
				}
				var got referrals.Referral
				if a.status != http.StatusCreated || json.Unmarshal(a.body, &got) != nil {
					mu.Lock()
					failed = append(failed, fmt.Sprintf("status %d: %.200s", a.status, a.body))
					mu.Unlock()
					return
				}
				if got.Notes != req.Notes || got.TrialID != req.TrialID || got.Patient != req.Patient {
					mu.Lock()
					failed = append(failed, fmt.Sprintf("201 with %+v for %+v", got, req))
					mu.Unlock()
				}
				mu.Lock()
				acked = append(acked, got)
				mu.Unlock()
			}
		})
	}
	select {
	case <-time.After(delay):
	case <-t.Context().Done():
	}
	sb.signal(syscall.SIGKILL)
	wg.Wait()
	sb.waitExit()
	if len(failed) > 0 {
		t.Fatalf("%d write(s) answered other than 201 before the kill; the first: %s", len(failed), failed[0])
	}
	return acked
}

// checkAcknowledged reads every acknowledged referral back by its trial and
// outcomes id and compares it with the 201's body, then counts this test's
// referrals in the partner's list: at least the acknowledged ones, and at
// most inFlight more (writes the kill cut off after they were stored).
func checkAcknowledged(t *testing.T, c *http.Client, base, token, marker string, acked map[string]referrals.Referral, inFlight int) {
	t.Helper()
	lost := 0
	for id, want := range acked {
		a, err := do(t.Context(), c, http.MethodGet, base+"/api/v1/referrals/"+want.TrialID+"/"+id, token, "", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got referrals.Referral
		if a.status != http.StatusOK || json.Unmarshal(a.body, &got) != nil || !reflect.DeepEqual(got, want) {
			lost++
			if lost <= 5 {
				t.Errorf("acknowledged referral %s: status %d %s; want %+v", id, a.status, a.body, want)
			}
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d acknowledged referrals lost or changed after SIGKILL and restart", lost, len(acked))
	}
	stored := 0
	seen := map[string]bool{}
	for _, r := range listAllReferrals(t, c, base, token, len(acked)+inFlight+10_000) {
		if !strings.HasPrefix(r.Notes, marker+"-") {
			continue
		}
		if seen[r.Notes] {
			t.Errorf("referral %q stored twice", r.Notes)
		}
		seen[r.Notes] = true
		stored++
	}
	if stored < len(acked) || stored > len(acked)+inFlight {
		t.Errorf("%d of this test's referrals stored; want %d acknowledged plus at most %d in flight", stored, len(acked), inFlight)
	}
}

// TestSIGTERMDrainsRequestsInFlight starts slow requests (X-Sandbox-Delay:
// 1500ms) of several kinds, sends SIGTERM once the server has accepted
// each one's connection, and checks that each still got its full answer,
// that the process then exited 0, and that the writes among them are in
// the data file on the next start.
func TestSIGTERMDrainsRequestsInFlight(t *testing.T) {
	dataFile := filepath.Join(t.TempDir(), "sandbox.db")
	sb := startSandbox(t, "--data", dataFile, "--log-level", "info")
	client := newClient(10)
	token := mustToken(t, client, sb.base, partners[0].id, partners[0].secret)
	const delay = 1500 * time.Millisecond
	slow := http.Header{"X-Sandbox-Delay": {"1500ms"}}
	type inFlight struct {
		name, method, path string
		body               []byte
		want               int
	}
	post := func(n int) []byte {
		b, err := json.Marshal(referralRequest{TrialID: "TRIAL-CARDIO-001", Notes: fmt.Sprintf("drain-%d", n),
			Patient: referrals.Patient{FirstName: "Dee", LastName: "Rain", DateOfBirth: "1985-05-05", Gender: "female"}})
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		return b
	}
	requests := []inFlight{
		{"trials 1", http.MethodGet, "/api/v1/referrals/trials", nil, http.StatusOK},
		{"trials 2", http.MethodGet, "/api/v1/referrals/trials", nil, http.StatusOK},
		{"ping", http.MethodGet, "/health/ping", nil, http.StatusOK},
		{"list", http.MethodGet, "/api/v1/referrals/?limit=5", nil, http.StatusOK},
		{"create 1", http.MethodPost, "/api/v1/referrals/", post(1), http.StatusCreated},
		{"create 2", http.MethodPost, "/api/v1/referrals/", post(2), http.StatusCreated},
	}
	type outcome struct {
		a       answer
		err     error
		elapsed time.Duration
	}
	outcomes := make([]outcome, len(requests))
	// A client of their own, so that each request opens a new connection:
	// one sent on the token's idle connection could still be unread, and
	// so idle to the server, when it shuts down.
	slowClient := newClient(len(requests))
	var conns connWatch
	var wg sync.WaitGroup
	for i, r := range requests {
		wg.Go(func() {
			ct := ""
			if r.body != nil {
				ct = "application/json"
			}
			start := time.Now()
			a, err := do(conns.trace(t.Context()), slowClient, r.method, sb.base+r.path, token, ct, r.body, slow)
			outcomes[i] = outcome{a, err, time.Since(start)}
		})
	}
	// Every request in flight, its connection accepted, well within its
	// delay: a SIGTERM now must let each finish.
	conns.waitAccepted(t, sb.base, len(requests))
	sb.signal(syscall.SIGTERM)
	wg.Wait()
	for i, r := range requests {
		o := outcomes[i]
		switch {
		case o.err != nil:
			t.Errorf("%s: no answer after SIGTERM: %v", r.name, o.err)
		case o.a.status != r.want:
			t.Errorf("%s: status %d after SIGTERM, want %d: %s", r.name, o.a.status, r.want, o.a.body)
		case o.elapsed < delay:
			t.Errorf("%s: answered after %s, before its %s delay: not the delayed request", r.name, o.elapsed, delay)
		case !json.Valid(o.a.body):
			t.Errorf("%s: truncated body %q", r.name, o.a.body)
		}
	}
	if code := sb.waitExit(); code != 0 {
		t.Errorf("exit status %d after SIGTERM, want 0\nstderr:\n%s", code, sb.stderr)
	}
	if !strings.Contains(sb.stderr.String(), "shutting down") {
		t.Errorf("no shutdown line in the log:\n%s", sb.stderr)
	}

	again := startSandbox(t, "--data", dataFile, "--log-level", "warn")
	token = mustToken(t, client, again.base, partners[0].id, partners[0].secret)
	for i, r := range requests {
		if r.method != http.MethodPost || outcomes[i].err != nil {
			continue
		}
		var created referrals.Referral
		if err := json.Unmarshal(outcomes[i].a.body, &created); err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		a, err := do(t.Context(), client, http.MethodGet, again.base+"/api/v1/referrals/"+created.TrialID+"/"+created.OutcomesID, token, "", nil, nil)
		if err != nil || a.status != http.StatusOK {
			t.Errorf("%s: written during the drain, then %v status %d on restart", r.name, err, a.status)
		}
	}
}
