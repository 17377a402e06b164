package sandboxtest

import (
	"context"
	"fmt"
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
	creds, err := s.NewClientContext(context.Background(), opts...)
	if err != nil {
		t.Fatalf("sandboxtest: %v", err)
	}
	t.Cleanup(func() {
		// Not t.Context(): it is done before cleanups run.
		if err := s.DeleteClientContext(context.Background(), creds.ClientID); err != nil {
			t.Errorf("sandboxtest: %v", err)
		}
	})
	return creds
}

// NewClientContext is NewClient without a test: the caller deletes the
// client with DeleteClientContext. The sandbox deletes it itself an hour
// after it was created, so a crashed test binary leaves nothing behind
// for long.
func (s *Sandbox) NewClientContext(ctx context.Context, opts ...ClientOption) (Credentials, error) {
	body := map[string]any{"ttl": "1h"}
	for _, o := range opts {
		if o != nil {
			o(body)
		}
	}
	var created struct {
		ClientID     string `json:"clientId"`
		ClientSecret string `json:"clientSecret"`
		Scope        string `json:"scope"`
	}
	if err := s.admin(ctx, http.MethodPost, "/__sandbox/clients", body, http.StatusCreated, &created); err != nil {
		return Credentials{}, fmt.Errorf("new client: %w", err)
	}
	return Credentials{ClientID: created.ClientID, ClientSecret: created.ClientSecret, Scope: created.Scope}, nil
}

// DeleteClientContext deletes a client NewClientContext created: its
// records, rules, journal entries and clock go with it.
func (s *Sandbox) DeleteClientContext(ctx context.Context, clientID string) error {
	path := "/__sandbox/clients/" + url.PathEscape(clientID)
	if err := s.admin(ctx, http.MethodDelete, path, nil, http.StatusNoContent, nil); err != nil {
		return fmt.Errorf("delete client %s: %w", clientID, err)
	}
	return nil
}

// ResetClient puts one client back as it started: its records back to its
// fixtures (none for a client from NewClient), its rules, journal entries,
// rate limit and clock cleared. Other clients are untouched.
func (s *Sandbox) ResetClient(t testing.TB, clientID string) {
	t.Helper()
	if err := s.ResetClientContext(context.Background(), clientID); err != nil {
		t.Fatalf("sandboxtest: %v", err)
	}
}

// ResetClientContext is ResetClient without a test.
func (s *Sandbox) ResetClientContext(ctx context.Context, clientID string) error {
	if err := s.admin(ctx, http.MethodPost, "/__sandbox/reset", map[string]string{"clientId": clientID}, http.StatusOK, nil); err != nil {
		return fmt.Errorf("reset %s: %w", clientID, err)
	}
	return nil
}
