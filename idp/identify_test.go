package idp_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
)

// TestIdentifyOnlyGenuineTokens: Identify names the client of a token the
// sandbox signed for one of its clients, expired or not, and nobody for a
// forged one, with the reason Validate would give.
func TestIdentifyOnlyGenuineTokens(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	raw := s.fetchToken(t, partnerID, partnerSecret, defaultScope)
	c, err := s.provider.Identify(raw)
	if err != nil || c.ClientID != partnerID || c.TokenID == "" || !c.ExpiresAt.Equal(issuedExpiry()) {
		t.Fatalf("Identify(issued) = %+v, %v; want %s with its uti and expiry", c, err, partnerID)
	}
	s.clock.Set(issuedExpiry().Add(time.Hour))
	if c, err := s.provider.Identify(raw); err != nil || c.ClientID != partnerID {
		t.Errorf("Identify(expired genuine) = %+v, %v; want it to stay %s's", c, err, partnerID)
	}
	forged := withPayload(t, raw, func(c map[string]any) { c["azp"] = "sandbox-partner-2" })
	if c, err := s.provider.Identify(forged); c != (idp.Claimed{}) || !isReason(err, idp.ReasonSignature) {
		t.Errorf("Identify(forged azp) = %+v, %v; want nobody, %q", c, err, idp.ReasonSignature)
	}
	claims := s.handClaims()
	claims["azp"] = "no-such-client"
	stranger := signJWS(t, jwa.RS256, sandboxKey(t, s.keys.KeyID()), claims, map[string]any{"typ": "JWT"})
	if c, err := s.provider.Identify(stranger); c != (idp.Claimed{}) || !isReason(err, idp.ReasonUnknownClient) {
		t.Errorf("Identify(unknown azp, sandbox key) = %+v, %v; want nobody, %q", c, err, idp.ReasonUnknownClient)
	}
}

// TestRequesterOf reads a token request's credentials without answering
// it, and leaves the body for the token endpoint.
func TestRequesterOf(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tests := []struct {
		name string
		form url.Values
		want idp.TokenRequester
	}{
		{"right secret", postForm(partnerID, partnerSecret, defaultScope), idp.TokenRequester{ClientID: partnerID, Registered: true, Authenticated: true}},
		{"wrong secret", postForm(partnerID, "guess", defaultScope), idp.TokenRequester{ClientID: partnerID, Registered: true}},
		{"unknown client", postForm("ghost", partnerSecret, defaultScope), idp.TokenRequester{ClientID: "ghost"}},
		{"no client", url.Values{"grant_type": {"client_credentials"}}, idp.TokenRequester{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/"+idp.DefaultTenant+"/oauth2/v2.0/token", strings.NewReader(tc.form.Encode()))
			r.Header.Set("Content-Type", formContentType)
			if got := s.provider.RequesterOf(r); got != tc.want {
				t.Errorf("RequesterOf = %+v, want %+v", got, tc.want)
			}
			if !tc.want.Authenticated {
				return
			}
			w := httptest.NewRecorder()
			s.provider.Handler().ServeHTTP(w, r)
			if w.Code != http.StatusOK {
				t.Errorf("the token endpoint after RequesterOf: %d %s", w.Code, w.Body)
			}
		})
	}
}
