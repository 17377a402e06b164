package sandboxtest

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// ClientOption shapes a client NewClient creates.
type ClientOption func(map[string]any)

// ClientRoles gives the client these roles instead of every partner role.
func ClientRoles(roles ...string) ClientOption {
	return func(body map[string]any) { body["roles"] = roles }
}

// ClientTokenLifetime gives the client's tokens this lifetime, to test
// renewal without waiting an hour.
func ClientTokenLifetime(d time.Duration) ClientOption {
	return func(body map[string]any) { body["tokenLifetimeSeconds"] = int(d.Seconds()) }
}

// ClientRateLimit gives the client its own rate limit (requests per second)
// and burst.
func ClientRateLimit(perSecond float64, burst int) ClientOption {
	return func(body map[string]any) { body["rateLimit"], body["rateBurst"] = perSecond, burst }
}

// NewClient creates a client of the test's own on the sandbox and deletes
// it when the test ends, so parallel tests (t.Parallel) never see each
// other's records, failure rules, clock or journal. Every partner role
// unless ClientRoles says otherwise.
func (s *Sandbox) NewClient(t testing.TB, opts ...ClientOption) Credentials {
	t.Helper()
	body := map[string]any{"ttl": "1h"} // a crashed test binary leaves nothing behind for long
	for _, o := range opts {
		o(body)
	}
	var created struct {
		ClientID     string `json:"clientId"`
		ClientSecret string `json:"clientSecret"`
		Scope        string `json:"scope"`
	}
	if err := s.admin(context.Background(), http.MethodPost, "/__sandbox/clients", body, http.StatusCreated, &created); err != nil {
		t.Fatalf("sandboxtest: new client: %v", err)
	}
	t.Cleanup(func() {
		path := "/__sandbox/clients/" + url.PathEscape(created.ClientID)
		if err := s.admin(context.Background(), http.MethodDelete, path, nil, http.StatusNoContent, nil); err != nil {
			t.Errorf("sandboxtest: delete client %s: %v", created.ClientID, err)
		}
	})
	return Credentials{ClientID: created.ClientID, ClientSecret: created.ClientSecret, Scope: created.Scope}
}

// AdvanceClientClock moves one client's time by d, leaving every other
// client's alone: its tokens expire, its records are stamped later.
func (s *Sandbox) AdvanceClientClock(t testing.TB, clientID string, d time.Duration) {
	t.Helper()
	body := map[string]string{"clientId": clientID, "advance": d.String()}
	if err := s.admin(context.Background(), http.MethodPost, "/__sandbox/clock", body, http.StatusOK, nil); err != nil {
		t.Fatalf("sandboxtest: advance the clock of %s by %s: %v", clientID, d, err)
	}
}

// ResetClient puts one client back as it started: its records back to its
// fixtures (none for a client from NewClient), its rules, journal entries,
// rate limit and clock cleared. Other clients are untouched.
func (s *Sandbox) ResetClient(t testing.TB, clientID string) {
	t.Helper()
	if err := s.admin(context.Background(), http.MethodPost, "/__sandbox/reset", map[string]string{"clientId": clientID}, http.StatusOK, nil); err != nil {
		t.Fatalf("sandboxtest: reset %s: %v", clientID, err)
	}
}
