package sandbox_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redact"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// basic is an HTTP Basic Authorization value (client_secret_basic).
func basic(id, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
}

// TestNoSecretsInJournalOrLogs runs successful and failing token requests in
// every way a client can send credentials, and API calls with valid and
// expired tokens, then searches the whole journal and every log line: no
// client secret and no access token (nor its signature) may appear.
func TestNoSecretsInJournalOrLogs(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	secret := func(id string) string { return id + "-secret" }
	var tokens []string

	// Successful token requests: form and Basic.
	tokens = append(tokens, accessTokenOf(t, s.postToken(tokenForm(partner, secret(partner), apiScope), nil)))
	tokens = append(tokens, accessTokenOf(t, s.postToken(url.Values{"grant_type": {"client_credentials"}, "scope": {apiScope}},
		map[string]string{"Authorization": basic(partner2, secret(partner2))})))
	tokens = append(tokens, s.token(readonly), s.token(noroles), s.token(otherAPI))

	// Failing token requests, each carrying a real secret somewhere.
	failures := []struct {
		name    string
		form    url.Values
		headers map[string]string
		query   string
		want    int
	}{
		{"wrong secret in form (another client's)", tokenForm(partner, secret(partner2), apiScope), nil, "", 401},
		{"wrong secret in Basic", url.Values{"grant_type": {"client_credentials"}, "scope": {apiScope}},
			map[string]string{"Authorization": basic(readonly, secret(noroles))}, "", 401},
		{"unknown client", tokenForm("nobody", secret(otherAPI), apiScope), nil, "", 401},
		{"Basic and form both", tokenForm(partner, secret(partner), apiScope),
			map[string]string{"Authorization": basic(partner, secret(partner))}, "", 400},
		{"wrong scope", tokenForm(partner2, secret(partner2), otherScope), nil, "", 400},
		{"secret in the URL", url.Values{}, nil,
			"?" + tokenForm(readonly, secret(readonly), apiScope).Encode(), 400},
		{"forced invalid_client", tokenForm(noroles, secret(noroles), apiScope),
			map[string]string{sandbox.ForceStatusHeader: "invalid_client"}, "", 401},
		{"secret in a custom header", tokenForm(otherAPI, "wrong", otherScope),
			map[string]string{"X-Client-Secret": secret(otherAPI)}, "", 401},
	}
	for _, f := range failures {
		h := map[string]string{"Content-Type": formType}
		for k, v := range f.headers {
			h[k] = v
		}
		r := s.do(request{method: http.MethodPost, path: tokenPath + f.query, body: f.form.Encode(), headers: h, invalid: true})
		if r.Status != f.want {
			t.Errorf("%s: %d %s, want %d", f.name, r.Status, r.Body, f.want)
		}
	}

	// API calls with valid tokens, a token in the URL, then expired tokens.
	for _, tok := range tokens[:2] {
		if r := s.do(request{path: trialsPath, token: tok}); r.Status != http.StatusOK {
			t.Errorf("valid token: %d", r.Status)
		}
	}
	s.do(request{path: trialsPath + "?access_token=" + tokens[0], plain: true})
	s.do(request{path: pingPath, token: tokens[2], headers: map[string]string{sandbox.ForceStatusHeader: "401"}})
	s.advance(2 * time.Hour)
	for _, tok := range tokens {
		if r := s.do(request{path: trialsPath, token: tok}); r.Status != http.StatusUnauthorized {
			t.Errorf("expired token: %d, want 401", r.Status)
		}
	}

	journal := string(s.admin(http.MethodGet, "/__sandbox/requests", nil).Body)
	logs := s.Logs.String()
	// The search must be able to fail: the journal does hold the calls.
	if !strings.Contains(journal, `"clientId":"`+partner+`"`) || !strings.Contains(journal, `"Authorization":"[redacted]"`) {
		t.Fatalf("the journal lacks the client id or a redacted Authorization; is it empty?\n%.2000s", journal)
	}
	if !strings.Contains(logs, partner) {
		t.Fatalf("the logs do not mention %s; are they captured?", partner)
	}
	for name, text := range map[string]string{"journal": journal, "logs": logs} {
		for _, c := range defaultFixtures(t).Clients {
			if strings.Contains(text, c.ClientSecret) {
				t.Errorf("the %s contain the client secret of %s", name, c.ClientID)
			}
			if encoded := base64.StdEncoding.EncodeToString([]byte(c.ClientID + ":" + c.ClientSecret)); strings.Contains(text, encoded) {
				t.Errorf("the %s contain the Basic credentials of %s", name, c.ClientID)
			}
		}
		for i, tok := range tokens {
			signature := tok[strings.LastIndex(tok, ".")+1:]
			if len(signature) < 40 {
				t.Fatalf("token %d has no signature segment: %q", i, tok)
			}
			if strings.Contains(text, tok) || strings.Contains(text, signature) {
				t.Errorf("the %s contain access token %d (or its signature)", name, i)
			}
		}
	}
}

// TestSecretsRedactedByValue sends credentials in every spelling issue 10
// found stored in clear (a token behind a custom header, in ?code=, in a
// path segment; gateway keys; SAS signatures) and a few more, then checks
// that each request's journal entry shows [redacted] and that no credential
// appears anywhere in the journal or the logs.
func TestSecretsRedactedByValue(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tok := s.token(partner)
	dot := strings.LastIndex(tok, ".")
	sig := tok[dot+1:]
	rawSig, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		t.Fatal(err)
	}
	padded := tok[:dot+1] + base64.URLEncoding.EncodeToString(rawSig)
	secret := partner2 + "-secret"
	basicCred := base64.StdEncoding.EncodeToString([]byte(partner2 + ":" + secret))
	cases := []struct {
		name    string
		path    string
		headers map[string]string
		secrets []string // what must never be stored
	}{
		{"Bearer token in X-Auth", trialsPath, map[string]string{"X-Auth": "Bearer " + tok}, []string{tok, sig}},
		{"opaque Bearer credential in a custom header", trialsPath, map[string]string{"X-Upstream": "Bearer opaque-credential-0001"}, []string{"opaque-credential-0001"}},
		{"token in ?code=", trialsPath + "?code=" + tok, nil, []string{tok, sig}},
		{"token in ?access_token=", trialsPath + "?access_token=" + tok, nil, []string{tok, sig}},
		{"token as the whole query", trialsPath + "?" + tok, nil, []string{tok, sig}},
		{"token in a path segment", "/api/v1/referrals/qualified/" + tok, nil, []string{tok, sig}},
		{"token percent-encoded in a header", trialsPath, map[string]string{"X-Original-Url": "/cb?t=" + strings.ReplaceAll(tok, ".", "%2E")}, []string{sig}},
		{"token re-spelled with padding", trialsPath, map[string]string{"X-Forwarded-Credential": padded}, []string{sig}},
		{"client secret in a custom header", trialsPath, map[string]string{"X-Partner": secret}, []string{secret}},
		{"client secret base64-encoded without a scheme", trialsPath, map[string]string{"X-Partner-Login": basicCred}, []string{basicCred}},
		{"client secret in a query value", trialsPath + "?note=" + secret, nil, []string{secret}},
		{"Ocp-Apim-Subscription-Key", trialsPath, map[string]string{"Ocp-Apim-Subscription-Key": "apim-value-0002"}, []string{"apim-value-0002"}},
		{"X-Functions-Key", trialsPath, map[string]string{"X-Functions-Key": "functions-value-0003"}, []string{"functions-value-0003"}},
		{"?sig=", trialsPath + "?sig=sas-signature-0004", nil, []string{"sas-signature-0004"}},
		{"?subscription-key=", trialsPath + "?subscription-key=subscription-value-0005", nil, []string{"subscription-value-0005"}},
		{"?key=", trialsPath + "?key=key-value-0006", nil, []string{"key-value-0006"}},
	}
	for i, c := range cases {
		h := map[string]string{sandbox.RequestIDHeader: fmt.Sprint("secret-case-", i)}
		maps.Copy(h, c.headers)
		s.do(request{path: c.path, headers: h, plain: true})
	}
	entries := s.journal(nil)
	for i, c := range cases {
		var entry *sandbox.JournalEntry
		for j := range entries {
			if entries[j].RequestID == fmt.Sprint("secret-case-", i) {
				entry = &entries[j]
			}
		}
		if entry == nil {
			t.Errorf("%s: not journaled", c.name)
			continue
		}
		text, err := json.Marshal(entry)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(text), redact.Redacted) && !strings.Contains(string(text), url.QueryEscape(redact.Redacted)) {
			t.Errorf("%s: the entry shows nothing redacted: %s", c.name, text)
		}
		for _, secret := range c.secrets {
			if strings.Contains(string(text), secret) {
				t.Errorf("%s: the journal entry holds the credential %.20q...", c.name, secret)
			}
		}
	}
	journalText, err := json.Marshal(entries)
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"journal": string(journalText), "logs": s.Logs.String()} {
		for _, c := range cases {
			for _, secret := range c.secrets {
				if strings.Contains(text, secret) {
					t.Errorf("the %s hold the credential of %q", name, c.name)
				}
			}
		}
	}
}

// failingGets is a store whose qualified-referral reads fail, to make the
// sandbox log a 500.
type failingGets struct{ store.Store }

func (failingGets) GetQualified(context.Context, string, string, *referrals.AuditEntry) (referrals.QualifiedReferral, error) {
	return referrals.QualifiedReferral{}, errors.New("disk unreadable")
}

// TestFailureLogRedactsThePath: a 500 is logged with its path, and a token
// sent as a path segment must not reach the log that way.
func TestFailureLogRedactsThePath(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, func(c *sandboxConfig) { c.Store = failingGets{c.Store} })
	tok := s.token(partner)
	r := s.do(request{path: "/api/v1/referrals/qualified/" + tok, token: tok, plain: true})
	if r.Status != http.StatusInternalServerError {
		t.Fatalf("read with a failing store: %d, want 500", r.Status)
	}
	logs := s.Logs.String()
	if !strings.Contains(logs, "request failed") || !strings.Contains(logs, "/api/v1/referrals/qualified/"+redact.Redacted) {
		t.Fatalf("no failure logged with the redacted path:\n%s", logs)
	}
	if strings.Contains(logs, tok[strings.LastIndex(tok, ".")+1:]) {
		t.Error("the failure log holds the token")
	}
}

// TestTokenErrorsNeverEchoASecret: Entra's error descriptions echo the
// grant type, the scope and the tenant a client sent; a client that pasted
// its secret (or a token) into one of them gets it back [redacted], as a
// client id is, and the error is still Entra's.
func TestTokenErrorsNeverEchoASecret(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	secret := partner + "-secret"
	tok := s.token(partner2)
	form := func(field, value string) url.Values {
		f := url.Values{"grant_type": {"client_credentials"}, "client_id": {partner}, "client_secret": {secret}, "scope": {apiScope}}
		f.Set(field, value)
		return f
	}
	cases := []struct {
		name, path string
		form       url.Values
		code       string
		leaked     string
	}{
		{"secret as grant_type", "/" + idp.DefaultTenant + "/oauth2/v2.0/token", form("grant_type", secret), "invalid_grant", secret},
		{"secret as scope", "/" + idp.DefaultTenant + "/oauth2/v2.0/token", form("scope", secret), "invalid_scope", secret},
		{"token as a scope's resource", "/" + idp.DefaultTenant + "/oauth2/v2.0/token", form("scope", tok+"/.default"), "invalid_scope", tok},
		{"secret as the tenant", "/" + secret + "/oauth2/v2.0/token", form("scope", apiScope), "invalid_tenant", secret},
		{"token as the tenant", "/" + tok + "/oauth2/v2.0/token", form("scope", apiScope), "invalid_tenant", tok},
	}
	for _, c := range cases {
		r := s.do(request{method: http.MethodPost, path: c.path, body: c.form.Encode(),
			headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, plain: true})
		var body struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		r.decode(t, &body)
		if body.Error != c.code || !strings.Contains(body.Description, redact.Redacted) {
			t.Errorf("%s: %d %s %q, want %s naming the value %s", c.name, r.Status, body.Error, body.Description, c.code, redact.Redacted)
		}
		if strings.Contains(string(r.Body), c.leaked) {
			t.Errorf("%s: the error body holds the credential", c.name)
		}
	}
}

// TestJournalRedactsRoutePathHoldingASecret: the journal looks the
// sandbox's own route paths up rather than scanning them, so a client
// secret that is also a segment of such a path must still be redacted
// there: a partner whose secret is "trials" does not find it in the
// journal's path of GET /api/v1/referrals/trials.
func TestJournalRedactsRoutePathHoldingASecret(t *testing.T) {
	s := newSandbox(t, withClients("", func(cs []referrals.Client) []referrals.Client {
		for i := range cs {
			if cs[i].ClientID == partner2 {
				cs[i].ClientSecret = "trials"
			}
		}
		return cs
	}))
	token := s.token(partner)
	for _, path := range []string{"/api/v1/referrals/trials", "/health/ping"} {
		if r := s.do(request{path: path, token: token}); r.Status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
		}
	}
	paths := map[string]bool{}
	for _, e := range s.journalOf(url.Values{"clientId": {partner}}, 2) {
		paths[e.Path] = true
	}
	if !paths["/api/v1/referrals/[redacted]"] || paths["/api/v1/referrals/trials"] || !paths["/health/ping"] {
		t.Errorf("journal paths %v: want /api/v1/referrals/[redacted] and /health/ping", paths)
	}
}
