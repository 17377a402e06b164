package sandbox_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// refusedAsDeleted checks that tok is refused (401) because its client was
// deleted or created again since it was issued.
func refusedAsDeleted(t *testing.T, s *testSandbox, what, tok string) {
	t.Helper()
	r := s.trials(tok)
	if r.Status != http.StatusUnauthorized || !strings.Contains(r.Header.Get("WWW-Authenticate"), "deleted") {
		t.Errorf("%s: %d %q, want 401 saying the client was deleted", what, r.Status, r.Header.Get("WWW-Authenticate"))
	}
}

// TestTokenBoundToTheClientInstance: a token belongs to the client that got
// it, not to whatever client has its id later. A client deleted and
// created again with fewer roles, or created again after its ttl ran out,
// does not make the old token work again, in either mode.
func TestTokenBoundToTheClientInstance(t *testing.T) {
	inEachMode(t, func(t *testing.T, opts ...sandboxOption) {
		s := newSandbox(t, opts...)
		first := s.newClient(map[string]any{"clientId": "ci-fixed"})
		old := s.clientToken(first)
		if r := s.admin(http.MethodDelete, "/__sandbox/clients/ci-fixed", nil); r.Status != http.StatusNoContent {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		second := s.newClient(map[string]any{"clientId": "ci-fixed", "roles": []string{"Trials.Read"}})
		refusedAsDeleted(t, s, "the first ci-fixed's token once ci-fixed was created again", old)
		if r := s.do(request{method: http.MethodPost, path: "/api/v1/referrals", token: old, body: referralBody("NCT05550001"), plain: true}); r.Status != http.StatusUnauthorized {
			t.Errorf("a write with the old token's roles: %d, want 401", r.Status)
		}
		if r := s.trials(s.clientToken(second)); r.Status != http.StatusOK {
			t.Errorf("the new ci-fixed's own token: %d %s", r.Status, r.Body)
		}

		// The same once a ttl ran out and the id was created again.
		s.newClient(map[string]any{"clientId": "ci-ttl", "ttl": "10m"})
		expiring := s.newClient(map[string]any{"clientId": "ci-ttl2", "ttl": "10m"})
		tok := s.clientToken(expiring)
		s.advance(11 * time.Minute)
		again := s.newClient(map[string]any{"clientId": "ci-ttl2"})
		refusedAsDeleted(t, s, "a token of ci-ttl2 issued before its ttl ran out", tok)
		if r := s.trials(s.clientToken(again)); r.Status != http.StatusOK {
			t.Errorf("the new ci-ttl2's own token: %d %s", r.Status, r.Body)
		}
	})
}

// TestTokenOfAnotherEnvironmentRefused: a runtime client of a production
// sandbox named like a development fixture client does not make the
// development sandbox's tokens (same signing key, same host) valid.
func TestTokenOfAnotherEnvironmentRefused(t *testing.T) {
	dev := newSandbox(t)
	prod := newSandbox(t, withClients(referrals.EnvironmentProduction, func(c []referrals.Client) []referrals.Client { return c }))
	prod.newClient(map[string]any{"clientId": partner})
	host := strings.TrimPrefix(prod.URL, "http://")
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {partner}, "client_secret": {partner + "-secret"}, "scope": {apiScope}}
	r := dev.viaHost(t, http.MethodPost, host, "/"+idp.DefaultTenant+"/oauth2/v2.0/token", "", form)
	if r.Status != http.StatusOK {
		t.Fatalf("development token: %d %s", r.Status, r.Body)
	}
	devToken := accessTokenOf(t, r)
	got := prod.viaHost(t, http.MethodGet, host, trialsPath, devToken, nil)
	if got.Status != http.StatusUnauthorized || !strings.Contains(got.Header.Get("WWW-Authenticate"), "development") {
		t.Errorf("a development token on production: %d %q, want 401 naming the environment", got.Status, got.Header.Get("WWW-Authenticate"))
	}
}

// TestRuntimeClientIDsDifferingOnlyByCase: a runtime id that is a fixture
// id (or another client's) in other letter case is refused.
func TestRuntimeClientIDsDifferingOnlyByCase(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.newClient(map[string]any{"clientId": "ci-Mixed"})
	for _, id := range []string{"SANDBOX-PARTNER", "Sandbox-Partner", "CI-MIXED"} {
		r := s.adminInvalid(http.MethodPost, "/__sandbox/clients", map[string]any{"clientId": id})
		if r.Status != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %s, want 422", id, r.Status, r.Body)
			continue
		}
		if p := r.problem(t); len(p.Errors) != 1 || p.Errors[0].Field != "clientId" {
			t.Errorf("%s: errors %+v, want one naming clientId", id, p.Errors)
		}
	}
}

// TestReplicasAgreeAboutADeletedClient (issue 24): with Redis refusing
// writes, a DELETE through replica A either takes effect everywhere or
// nowhere. It once answered 503 having removed the client, and replica B,
// never told, kept issuing and accepting its tokens for good.
func TestReplicasAgreeAboutADeletedClient(t *testing.T) {
	srv := redistest.Start(t)
	a := newSandbox(t, useRedis(srv.NewClient(t)), useRedisStore(t, srv.Addr, "referrals-sandbox:"))
	b := newSandbox(t, useRedis(srv.NewClient(t)), useRedisStore(t, srv.Addr, "referrals-sandbox:"))
	c := a.newClient(map[string]any{"clientId": "ci-doomed"})
	tok := a.clientToken(c)
	if r := b.trials(tok); r.Status != http.StatusOK {
		t.Fatalf("B with A's client's token: %d %s", r.Status, r.Body)
	}
	allowWrites := redistest.RefuseWrites(t, srv.NewClient(t))
	del := a.do(request{method: http.MethodDelete, path: "/__sandbox/clients/ci-doomed", body: map[string]any{}, plain: true})
	allowWrites()
	switch del.Status {
	case http.StatusNoContent:
	case http.StatusServiceUnavailable:
		if del.Header.Get("Retry-After") == "" {
			t.Error("503 without Retry-After")
		}
	default:
		t.Fatalf("DELETE with writes refused: %d %s, want 204 or 503", del.Status, del.Body)
	}
	// Both replicas agree, whatever the answer was.
	ga, gb := a.trials(tok).Status, b.trials(tok).Status
	if ga != gb || (del.Status == http.StatusNoContent) != (ga == http.StatusUnauthorized) {
		t.Errorf("after DELETE answered %d: the token gets %d on A and %d on B", del.Status, ga, gb)
	}
	// The retry the 503 invites finishes the job on both.
	if r := a.do(request{method: http.MethodDelete, path: "/__sandbox/clients/ci-doomed", body: map[string]any{}, plain: true}); r.Status != http.StatusNoContent && r.Status != http.StatusNotFound {
		t.Fatalf("DELETE again: %d %s", r.Status, r.Body)
	}
	for name, s := range map[string]*testSandbox{"A": a, "B": b} {
		if r := s.trials(tok); r.Status != http.StatusUnauthorized {
			t.Errorf("the deleted client's token on %s: %d", name, r.Status)
		}
		if r := s.admin(http.MethodGet, "/__sandbox/clients/ci-doomed", nil); r.Status != http.StatusNotFound {
			t.Errorf("the deleted client on %s: %d", name, r.Status)
		}
		if r := s.tokenResponse(c.ClientID, c.ClientSecret, apiScope); r.Status != http.StatusUnauthorized {
			t.Errorf("a new token of the deleted client on %s: %d", name, r.Status)
		}
	}
}
