package sandbox_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/backend"
)

// TestUnconfirmedWriteSaysItMayBeStored: with --redis-wait 1 and no
// replica answering, a qualified referral is stored on its master but not
// confirmed. The 503 must say that it may have been stored, not that
// Redis could not be reached, and what to do: resent with the same
// externalSourceId once the replicas are back, it answers 409 with the
// record, which reads back 200.
func TestUnconfirmedWriteSaysItMayBeStored(t *testing.T) {
	cluster := redistest.StartCluster(t, 3, 1)
	s := openSandbox(t, sandbox.Config{Redis: backend.RedisConfig{ClusterURL: cluster.URL, Prefix: "unconfirmed:", Wait: 1, Timeout: time.Second}})
	token := s.token(partner)
	for _, replica := range cluster.Nodes[cluster.Masters:] {
		replica.Freeze(t)
	}
	r := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/qualified", token: token, body: qualifiedBody("unconfirmed-1"), plain: true})
	for _, replica := range cluster.Nodes[cluster.Masters:] {
		replica.Thaw(t)
	}
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Fatalf("qualified referral with no replica confirming it: %d (Retry-After %q) %s; want 503 with Retry-After", r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	if p := r.problem(t); !strings.Contains(p.Detail, "may have been stored") || strings.Contains(p.Detail, "cannot be reached") {
		t.Errorf("503 detail %q: want it to say the write may have been stored, not that Redis cannot be reached", p.Detail)
	}
	cluster.WaitHealthy(t)
	again := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/qualified", token: token, body: qualifiedBody("unconfirmed-1"), plain: true})
	if again.Status != http.StatusConflict || again.Header.Get("Location") == "" {
		t.Fatalf("the same qualified referral resent: %d %s; want 409 with Location: it was stored the first time", again.Status, again.Body)
	}
	if got := s.do(request{path: again.Header.Get("Location"), token: token, plain: true}); got.Status != http.StatusOK {
		t.Errorf("read back at its Location: %d %s; want 200", got.Status, got.Body)
	}
}
