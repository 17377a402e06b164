package sandbox_test

import (
	"net/http"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
)

// TestShortTokenPersona: a client whose id has the short-token prefix gets
// tokens of six minutes (expires_in 360), a minute more than the margin
// MSAL renews at, that the API refuses once they have run out; its own tokenLifetimeSeconds still wins, and other
// clients keep the hour.
func TestShortTokenPersona(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	expiresIn := func(id, secret string) (int, string) {
		t.Helper()
		r := s.tokenResponse(id, secret, apiScope)
		var tok struct {
			AccessToken string `json:"access_token"`
			ExpiresIn   int    `json:"expires_in"`
		}
		r.decode(t, &tok)
		return tok.ExpiresIn, tok.AccessToken
	}
	short := s.newClient(map[string]any{"clientId": idp.ShortTokenPrefix + "ci"})
	n, tok := expiresIn(short.ClientID, short.ClientSecret)
	if n != 360 {
		t.Fatalf("%s: expires_in %d, want 360 (MSAL's 5-minute refresh margin plus a minute)", short.ClientID, n)
	}
	if r := s.do(request{path: trialsPath, token: tok}); r.Status != http.StatusOK {
		t.Fatalf("fresh short token: %d", r.Status)
	}
	s.advance(idp.ShortTokenLifetime)
	if r := s.do(request{path: trialsPath, token: tok}); r.Status != http.StatusUnauthorized {
		t.Errorf("short token after six minutes: %d, want 401", r.Status)
	}
	chosen := s.newClient(map[string]any{"clientId": idp.ShortTokenPrefix + "own", "tokenLifetimeSeconds": 600})
	if n, _ := expiresIn(chosen.ClientID, chosen.ClientSecret); n != 600 {
		t.Errorf("prefix with its own tokenLifetimeSeconds: expires_in %d, want 600", n)
	}
	plain := s.newClient(map[string]any{"clientId": "job-short"})
	if n, _ := expiresIn(plain.ClientID, plain.ClientSecret); n != 3599 {
		t.Errorf("other client: expires_in %d, want 3599", n)
	}
}
