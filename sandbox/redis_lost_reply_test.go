package sandbox_test

import (
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
)

// TestWriteWhoseReplyIsLostSaysItMayBeStored: the store's script of a
// qualified submission runs on Redis, whose node then dies before
// answering (its reply lost, go-redis's retries refused), as a master
// killed in a failover. The referral was stored, so the 503 must say that
// it may have been stored, not that Redis could not be reached; resent
// with the same externalSourceId once Redis is back, it answers 409 with
// the record, which reads back 200.
func TestWriteWhoseReplyIsLostSaysItMayBeStored(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	proxy := redistest.NewFaultProxy(t, srv)
	subject, obs := faultPair(t, srv, proxy)
	tok := obs.token(partner)
	partnersKeys := redistest.Touching("{c:" + partner + "}")
	proxy.ArmMatching(func(cmd []string) bool { return strings.HasPrefix(cmd[0], "EVAL") && partnersKeys(cmd) }, 1, redistest.LoseReplyThenRefuse)
	var r *response
	done := make(chan struct{})
	go func() {
		defer close(done)
		r = subject.do(request{method: http.MethodPost, path: "/api/v1/referrals/qualified", token: tok, body: qualifiedBody("lost-reply-1"), plain: true})
	}()
	// Redis stays down until the request has been answered: however many
	// connections the sandbox tries, none reaches it meanwhile.
	proxy.HealAfterRefusals(math.MaxInt, done)
	<-done
	if !proxy.Fired() {
		t.Fatal("no store script of the partner's passed the proxy")
	}
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Fatalf("qualified referral whose reply was lost: %d (Retry-After %q) %s; want 503 with Retry-After", r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	if p := r.problem(t); !strings.Contains(p.Detail, "may have been stored") || strings.Contains(p.Detail, "cannot be reached") {
		t.Errorf("503 detail %q: want it to say the write may have been stored, not that Redis cannot be reached", p.Detail)
	}
	again := subject.do(request{method: http.MethodPost, path: "/api/v1/referrals/qualified", token: tok, body: qualifiedBody("lost-reply-1"), plain: true})
	if again.Status != http.StatusConflict || again.Header.Get("Location") == "" {
		t.Fatalf("the same qualified referral resent: %d %s; want 409 with Location: it was stored the first time", again.Status, again.Body)
	}
	if got := obs.do(request{path: again.Header.Get("Location"), token: tok, plain: true}); got.Status != http.StatusOK {
		t.Errorf("read back at its Location: %d %s; want 200", got.Status, got.Body)
	}
}
