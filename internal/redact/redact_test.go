package redact_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redact"
)

// A JWT-shaped value (header {"alg":"RS256"}), as short as the shape allows.
const jwtLike = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"

// TestRedactorKeepsOrdinaryValues: redaction by value must not blank out
// what QA reads the journal for.
func TestRedactorKeepsOrdinaryValues(t *testing.T) {
	x := redact.New([]string{"sandbox-partner-secret", "abc"})
	h := http.Header{
		"Accept":          {"application/json"},
		"User-Agent":      {"azsdk-go-azidentity/v1.8.0 (go1.25; linux)"},
		"X-Plan":          {"Basic tier"},
		"Idempotency-Key": {"order-17"},
		"X-Note":          {"abcdef"}, // holds the 3-letter secret, which only counts when whole
		"X-Request-Id":    {"qa-17.trials"},
	}
	got := x.Headers(h)
	for name, values := range h {
		if got[name] != values[0] {
			t.Errorf("header %s: %q, want it kept as %q", name, got[name], values[0])
		}
	}
	if q := x.Query("limit=5&cursor=abc123&trialId=T-100"); q != "cursor=abc123&limit=5&trialId=T-100" {
		t.Errorf("ordinary query became %q", q)
	}
	if p := x.Path("/api/v1/referrals/qualified/Case-42.a_b:c-d"); p != "/api/v1/referrals/qualified/Case-42.a_b:c-d" {
		t.Errorf("ordinary path became %q", p)
	}
}

// TestRedactorHidesCredentialsByValue: the same credential is found in a
// header, a query value, a query name and a path segment.
func TestRedactorHidesCredentialsByValue(t *testing.T) {
	x := redact.New([]string{"sandbox-partner-secret", "abc"})
	values := map[string]string{
		"JWT":                    jwtLike,
		"JWT inside text":        "token=" + jwtLike + ";",
		"Bearer credential":      "bearer opaque-credential",
		"Basic credential":       "Basic c2FuZGJveDpzZWNyZXQ=",
		"known secret":           "sandbox-partner-secret",
		"known secret in text":   "pw:sandbox-partner-secret!",
		"short secret, whole":    "abc",
		"secret percent-encoded": "sandbox%2Dpartner%2Dsecret",
		"secret base64-encoded":  "c2FuZGJveC1wYXJ0bmVyLXNlY3JldA==",
		// A runtime client's secret: the sandbox keeps only its digest.
		"Entra-shaped secret": "k2J8Q~aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5",
	}
	for name, v := range values {
		if got := x.Headers(http.Header{"X-Custom": {v}})["X-Custom"]; got != redact.Redacted {
			t.Errorf("%s in a header: kept as %q", name, got)
		}
		if got := x.Query(url.Values{"note": {v}}.Encode()); got != "note="+url.QueryEscape(redact.Redacted) {
			t.Errorf("%s in a query value: %q", name, got)
		}
		// Path gets r.URL.Path, already decoded once.
		if got := x.Path("/api/v1/referrals/qualified/" + v); got != "/api/v1/referrals/qualified/"+redact.Redacted {
			t.Errorf("%s in a path segment: %q", name, got)
		}
	}
	if got := x.Query(jwtLike); got != url.QueryEscape(redact.Redacted)+"="+url.QueryEscape(redact.Redacted) {
		t.Errorf("a token as the whole query: %q", got)
	}
}

// TestRedactorDecodesShortestCredentials: base64 too short to hold a
// credential is not decoded, so the shortest ones must still be found:
// a scheme credential ("ntlm" and six characters) and a known secret of six
// characters, each base64-encoded (standard, padded, URL alphabet).
func TestRedactorDecodesShortestCredentials(t *testing.T) {
	cases := []struct {
		secrets []string
		plain   string
	}{
		{nil, "ntlm abcdef"},
		{[]string{"s3cr3t"}, "s3cr3t"},
		{[]string{"s3cr3t"}, "Q\xfa\xfbs3cr3t"},
	}
	for _, c := range cases {
		x := redact.New(c.secrets)
		for name, enc := range map[string]*base64.Encoding{"std": base64.StdEncoding, "raw": base64.RawStdEncoding, "url": base64.URLEncoding, "raw url": base64.RawURLEncoding} {
			v := enc.EncodeToString([]byte(c.plain))
			if got := x.Value(v); got != redact.Redacted {
				t.Errorf("%q as %s base64 %q: kept", c.plain, name, v)
			}
		}
	}
}

// TestCredentialNames: the documented names count whatever their value and
// spelling; ordinary names do not.
func TestCredentialNames(t *testing.T) {
	for _, name := range []string{"Authorization", "Cookie", "Ocp-Apim-Subscription-Key", "X-Functions-Key", "x-api-key",
		"sig", "subscription-key", "KEY", "code", "access_token", "client_secret", "X-Client-Secret", "password", "client_assertion"} {
		if !redact.IsCredentialName(name) {
			t.Errorf("%s is not a credential name", name)
		}
	}
	for _, name := range []string{"Accept", "Content-Type", "Idempotency-Key", "limit", "cursor", "trialId", "X-Request-Id", "monkey"} {
		if redact.IsCredentialName(name) {
			t.Errorf("%s counts as a credential name", name)
		}
	}
}
