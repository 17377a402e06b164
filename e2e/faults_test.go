package e2e

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestFaults is the fault-injection suite (issue 24): three built
// replicas on one Redis (AOF, appendfsync always), each reaching Redis
// through its own in-process toxiproxy proxy, while writers submit and
// read referrals and a rule counts forced answers. A nemesis injects, one
// at a time, latency, connection resets, timeouts (a partition) on one
// replica's link to Redis, SIGSTOP and SIGKILL of a replica, SIGSTOP of
// Redis, and SIGKILL of Redis with a restart on its AOF. Checkers
// (faults_check_test.go):
//
//   - records: every acknowledged write and every read form a per-key
//     register history that must be linearizable (porcupine): an
//     acknowledged referral never read as missing, or read then gone;
//   - before each fault a times: 200 rule is added, so the forced answers
//     over the run are exactly 200 per acknowledged rule (issue 24 saw 193);
//   - every acknowledged rule change and clock move is seen by every
//     later request through every replica, and none answered 2xx that did
//     not happen (faults_admin_test.go);
//   - no answer other than the expected success, a 404 only where a
//     record may not exist, and 503 with Retry-After.
//
// It runs only with FAULTS_DURATION set (.ci/run: FAULTS_DURATION=90s;
// the long run: FAULTS_DURATION=30m go test -run TestFaults -timeout 40m
// ./e2e/).
func TestFaults(t *testing.T) {
	duration, err := time.ParseDuration(os.Getenv("FAULTS_DURATION"))
	if err != nil || duration <= 0 {
		t.Skip("set FAULTS_DURATION (e.g. 90s) to run the fault-injection suite")
	}
	h := startFaultHarness(t, 3)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() { h.writer(w, stop) })
	}
	wg.Go(func() { h.ruleCaller(stop) })
	admin := &adminChecker{h: h}
	wg.Go(func() { admin.run(stop) })
	nemesisDone := make(chan struct{})
	go func() { defer close(nemesisDone); h.nemesis(duration, stop) }()
	<-nemesisDone
	close(stop)
	wg.Wait()
	h.heal()
	h.drainRule()

	h.checkRecords()
	h.checkTimes()
	t.Logf("faults: %s; operations: %d writes acknowledged, %d reads, %d rule calls (%d forced, %d unanswered, %d times rules), %d rule changes, %d clock moves acknowledged (%d admin changes of unknown outcome), %d answers 503, %d transport errors; anomalies: %d",
		h.faultSummary(), h.acked.Load(), h.reads.Load(), h.ruleCalls.Load(), h.forced.Load(), h.ruleUnanswered.Load(), h.timesRules, admin.rulesChanged, admin.clocksMoved, admin.adminUnknown,
		h.unavailable.Load(), h.transportErrs.Load(), len(h.anomalies))
	for _, a := range h.anomalies {
		t.Error(a)
	}
}

// ruleCaller calls the rule's path round-robin until stop, counting the
// forced answers.
func (h *faultHarness) ruleCaller(stop <-chan struct{}) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		h.callRule(i)
	}
}

// drainRule calls the rule's path until the rule is retired: 30 answers
// in a row through every replica are not forced.
func (h *faultHarness) drainRule() {
	unforced := 0
	for i := 0; unforced < 30 && i < 10000; i++ {
		if h.callRule(i) {
			unforced = 0
		} else {
			unforced++
		}
	}
}

// callRule makes one call of the rule's path and reports whether it was
// forced (or not answered at all).
func (h *faultHarness) callRule(i int) bool {
	h.ruleCalls.Add(1)
	r := h.replica(i)
	a, err := h.get(r, "/api/v1/referrals/trials")
	if err != nil {
		// No answer (the replica was killed or stopped mid-request): the
		// decision may have been made and spent, and could not reach us.
		h.ruleUnanswered.Add(1)
		return true
	}
	switch {
	case a.status == http.StatusForbidden:
		h.forced.Add(1)
		return true
	case a.status == http.StatusOK:
		return false
	case a.status == http.StatusServiceUnavailable:
		h.check503(a, "GET /api/v1/referrals/trials")
		return true
	}
	h.anomaly("GET /api/v1/referrals/trials through %s: %d %s", r.base(), a.status, truncate(a.body))
	return true
}

// writer submits referrals through random replicas and reads each
// acknowledged one back through another, and reads earlier ones again.
func (h *faultHarness) writer(w int, stop <-chan struct{}) {
	rng := rand.New(rand.NewPCG(uint64(w), 24))
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		h.writeOne(w, n, rng)
		if key, ok := h.randomAcked(rng); ok {
			h.readOne(w, key, rng)
		}
	}
}

func truncate(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

func (h *faultHarness) faultSummary() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var parts []string
	for _, k := range faultKinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, h.faults[k]))
	}
	return strings.Join(parts, ", ")
}
