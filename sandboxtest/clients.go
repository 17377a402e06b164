package sandboxtest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// ClientOption shapes a client NewClient creates.
type ClientOption func(*clientSpec)

// clientSpec is what the client options build; NewClientContext writes it
// as the admin API's body, which stays out of this package's API.
type clientSpec struct {
	roles         []string // nil: every partner role
	tokenLifetime time.Duration
	rateLimit     *float64
	rateBurst     *int
}

// clientRequest is the body of POST /__sandbox/clients that NewClient sends.
type clientRequest struct {
	Roles                *[]string `json:"roles,omitempty"`
	TokenLifetimeSeconds int       `json:"tokenLifetimeSeconds,omitempty"`
	RateLimit            *float64  `json:"rateLimit,omitempty"`
	RateBurst            *int      `json:"rateBurst,omitempty"`
	// TTL makes the sandbox delete the client itself, should the test
	// binary die before it does.
	TTL string `json:"ttl"`
}

// request is the spec as the admin API takes it. Roles given, even none,
// are sent as a list: the sandbox reads an absent list as every partner
// role and an empty one as no role.
func (c clientSpec) request() clientRequest {
	req := clientRequest{
		TokenLifetimeSeconds: int(c.tokenLifetime.Seconds()),
		RateLimit:            c.rateLimit, RateBurst: c.rateBurst, TTL: "1h",
	}
	if c.roles != nil {
		req.Roles = &c.roles
	}
	return req
}

// ClientRoles gives the client exactly these roles instead of every partner
// role; ClientRoles() gives it none, to test a 403.
func ClientRoles(roles ...string) ClientOption {
	return func(c *clientSpec) { c.roles = append([]string{}, roles...) }
}

// ClientTokenLifetime gives the client's tokens this lifetime, to test
// renewal without waiting an hour.
func ClientTokenLifetime(d time.Duration) ClientOption {
	return func(c *clientSpec) { c.tokenLifetime = d }
}

// ClientRateLimit gives the client its own rate limit on the API and ping,
// perSecond requests a second with bursts of burst, whatever WithRateLimit
// says for the others (and whether or not it is given), so one parallel
// test can meet a 429 without slowing any other. A perSecond of 0 turns
// limiting off for this client. The sandbox refuses negative values.
func ClientRateLimit(perSecond float64, burst int) ClientOption {
	return func(c *clientSpec) { c.rateLimit, c.rateBurst = &perSecond, &burst }
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
		// Not t.Context(): it is done before cleanups run. A client the
		// test deleted itself (DeleteClient) is gone already, as wanted.
		err := s.DeleteClientContext(context.Background(), creds.ClientID)
		var refused *refusal
		if err != nil && !(errors.As(err, &refused) && refused.status == http.StatusNotFound) {
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
	var spec clientSpec
	for _, o := range opts {
		if o != nil {
			o(&spec)
		}
	}
	var created struct {
		ClientID     string `json:"clientId"`
		ClientSecret string `json:"clientSecret"`
		Scope        string `json:"scope"`
	}
	if err := s.admin(ctx, http.MethodPost, "/__sandbox/clients", spec.request(), http.StatusCreated, &created); err != nil {
		return Credentials{}, fmt.Errorf("new client: %w", err)
	}
	return Credentials{ClientID: created.ClientID, ClientSecret: created.ClientSecret, Scope: created.Scope}, nil
}

// DeleteClient deletes a runtime client (NewClient's own cleanup does
// this at the end of the test): its tokens are refused from then on, and
// its records, rules, journal entries and clock go with it. An unknown
// client fails the test.
func (s *Sandbox) DeleteClient(t testing.TB, clientID string) {
	t.Helper()
	if err := s.DeleteClientContext(context.Background(), clientID); err != nil {
		t.Fatalf("sandboxtest: %v", err)
	}
}

// DeleteClientContext is DeleteClient without a test: it deletes a client
// NewClientContext created, and an unknown client is an error.
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
