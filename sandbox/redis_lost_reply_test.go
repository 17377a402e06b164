package sandbox_test

import (
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// TestWriteWhoseReplyIsLostSaysItMayBeStored: the store's script of a
// qualified submission runs on Redis, whose node then dies before
// answering (its reply lost, go-redis's retries refused), as a master
// killed in a failover. The referral was stored, so the 503 must say that
// it may have been stored, not that Redis could not be reached, and how to
// check; resent with the same externalSourceId once Redis is back, it
// answers 409 with the record, which reads back 200.
func TestWriteWhoseReplyIsLostSaysItMayBeStored(t *testing.T) {
	t.Parallel()
	subject, obs, tok, r := postWhoseReplyIsLost(t, "/api/v1/referrals/qualified", qualifiedBody("lost-reply-1"))
	if p := r.problem(t); !strings.Contains(p.Detail, "GET /api/v1/referrals/qualified/{externalSourceId}") || !strings.Contains(p.Detail, "same externalSourceId") {
		t.Errorf("503 detail %q: want it to say how to check: read it back by its externalSourceId, or resend it with the same one", p.Detail)
	}
	again := subject.do(request{method: http.MethodPost, path: "/api/v1/referrals/qualified", token: tok, body: qualifiedBody("lost-reply-1"), plain: true})
	if again.Status != http.StatusConflict || again.Header.Get("Location") == "" {
		t.Fatalf("the same qualified referral resent: %d %s; want 409 with Location: it was stored the first time", again.Status, again.Body)
	}
	if got := obs.do(request{path: again.Header.Get("Location"), token: tok, plain: true}); got.Status != http.StatusOK {
		t.Errorf("read back at its Location: %d %s; want 200", got.Status, got.Body)
	}
}

// TestTrialWriteWhoseReplyIsLostSaysHowToCheck: the same lost reply for a
// trial referral, which has no id of the caller's choosing. The 503's
// advice must not send the caller to an externalSourceId it does not
// have, but to the listing, where the referral is once Redis is back.
func TestTrialWriteWhoseReplyIsLostSaysHowToCheck(t *testing.T) {
	t.Parallel()
	_, obs, tok, r := postWhoseReplyIsLost(t, "/api/v1/referrals/", referralBody("TRIAL-CARDIO-001"))
	p := r.problem(t)
	if !strings.Contains(p.Detail, "GET /api/v1/referrals/") || strings.Contains(p.Detail, "externalSourceId") {
		t.Errorf("503 detail %q: want it to send the caller to the listing, not to an externalSourceId a trial referral lacks", p.Detail)
	}
	list := obs.do(request{path: "/api/v1/referrals/", token: tok, plain: true})
	if list.Status != http.StatusOK || !strings.Contains(string(list.Body), `"TRIAL-CARDIO-001"`) {
		t.Errorf("the listing the detail points to: %d %s; want 200 holding the referral, stored before its reply was lost", list.Status, list.Body)
	}
}

// postWhoseReplyIsLost posts body to path as the partner through a fault
// proxy that loses the reply of the partner's store script and then
// refuses connections until the answer is in, and checks that the answer
// is a 503 with Retry-After saying the write may have been stored. It
// returns the sandbox behind the proxy, one on Redis directly, the token
// and the answer.
func postWhoseReplyIsLost(t *testing.T, path string, body any) (subject, obs *testSandbox, tok string, r *response) {
	t.Helper()
	srv := redistest.Start(t)
	proxy := redistest.NewFaultProxy(t, srv)
	subject, obs = faultPair(t, srv, proxy)
	tok = obs.token(partner)
	armPartnersStoreScript(proxy, redistest.LoseReplyThenRefuse)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r = subject.do(request{method: http.MethodPost, path: path, token: tok, body: body, plain: true})
	}()
	// Redis stays down until the request has been answered: however many
	// connections the sandbox tries, none reaches it meanwhile.
	proxy.HealAfterRefusals(math.MaxInt, done)
	<-done
	if !proxy.Fired() {
		t.Fatal("no store script of the partner's passed the proxy")
	}
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Fatalf("POST %s whose reply was lost: %d (Retry-After %q) %s; want 503 with Retry-After", path, r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	if p := r.problem(t); !strings.Contains(p.Detail, "may have been stored") || strings.Contains(p.Detail, "cannot be reached") {
		t.Errorf("503 detail %q: want it to say the write may have been stored, not that Redis cannot be reached", p.Detail)
	}
	return subject, obs, tok, r
}

// TestWriteRefusedAtItsFirstReadSaysRedisCannotBeReached: with Redis down
// from the start, a qualified submission fails at its first Redis call,
// the read of the shared state, before anything could be written: the
// 503 says Redis cannot be reached, not that the referral may have been
// stored, and once Redis is back the referral is not there.
func TestWriteRefusedAtItsFirstReadSaysRedisCannotBeReached(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	// go-redis's default retries, as the sandbox's client has.
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	s := newSandbox(t, useRedis(rdb), useRedisStore(t, srv.Addr, "referrals-sandbox:"))
	tok := s.token(partner)
	srv.Stop(t)
	sandbox.ExpireSharedRead(t, s.server)
	r := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/qualified", token: tok, body: qualifiedBody("refused-at-read"), plain: true})
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Fatalf("qualified referral with Redis down: %d (Retry-After %q) %s; want 503 with Retry-After", r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	if p := r.problem(t); !strings.Contains(p.Detail, "cannot be reached") {
		t.Errorf("503 detail %q: want it to say Redis cannot be reached: the request failed before any write", p.Detail)
	}
	srv.Restart(t)
	if got := s.do(request{path: "/api/v1/referrals/qualified/refused-at-read", token: tok, plain: true}); got.Status != http.StatusNotFound {
		t.Errorf("the refused referral reads %d %s, want 404: nothing stored", got.Status, got.Body)
	}
}
