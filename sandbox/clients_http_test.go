package sandbox_test

import (
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// runtimeClient is the answer to POST /__sandbox/clients.
type runtimeClient struct {
	ClientID     string   `json:"clientId"`
	ClientSecret string   `json:"clientSecret"`
	SecretID     string   `json:"secretId"`
	Origin       string   `json:"origin"`
	Roles        []string `json:"roles"`
	ExpiresAt    string   `json:"expiresAt"`
	TokenURL     string   `json:"tokenUrl"`
	BaseURL      string   `json:"baseUrl"`
	Scope        string   `json:"scope"`
}

// newClient creates a runtime client through the admin API.
func (s *testSandbox) newClient(body map[string]any) runtimeClient {
	s.t.Helper()
	if body == nil {
		body = map[string]any{}
	}
	r := s.admin(http.MethodPost, "/__sandbox/clients", body)
	if r.Status != http.StatusCreated {
		s.t.Fatalf("create client: %d %s", r.Status, r.Body)
	}
	var c runtimeClient
	r.decode(s.t, &c)
	if c.ClientID == "" || c.ClientSecret == "" {
		s.t.Fatalf("created client without id or secret: %s", r.Body)
	}
	return c
}

// clientToken gets a token for a runtime client.
func (s *testSandbox) clientToken(c runtimeClient) string {
	s.t.Helper()
	return accessTokenOf(s.t, s.tokenResponse(c.ClientID, c.ClientSecret, apiScope))
}

// trials calls the trials list with token and returns the status.
func (s *testSandbox) trials(token string) *response {
	s.t.Helper()
	return s.do(request{path: trialsPath, token: token, plain: true})
}

func TestRuntimeClientLifecycle(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	c := s.newClient(nil)
	if !strings.HasPrefix(c.ClientID, idp.RuntimeClientPrefix) || c.Origin != "runtime" || len(c.Roles) != 5 {
		t.Errorf("generated client %+v: want a ci- id, runtime origin and every partner role", c)
	}
	if c.Scope != apiScope || !strings.HasSuffix(c.TokenURL, "/oauth2/v2.0/token") || !strings.HasSuffix(c.BaseURL, "/api/v1") {
		t.Errorf("addresses of the created client: %+v", c)
	}
	tok := s.clientToken(c)
	if r := s.trials(tok); r.Status != http.StatusOK {
		t.Fatalf("trials with a runtime client's token: %d %s", r.Status, r.Body)
	}
	created, _ := s.createReferral(tok, referralBody("TRIAL-CARDIO-001"))

	// Listed (fixtures marked as such), never with a secret.
	list := s.admin(http.MethodGet, "/__sandbox/clients", nil)
	one := s.admin(http.MethodGet, "/__sandbox/clients/"+c.ClientID, nil)
	for _, r := range []*response{list, one} {
		if r.Status != http.StatusOK || strings.Contains(string(r.Body), c.ClientSecret) || strings.Contains(string(r.Body), "sha256") {
			t.Errorf("listing: %d, and it must not hold the secret or its digest: %s", r.Status, r.Body)
		}
	}
	if !strings.Contains(string(list.Body), `"clientId":"sandbox-partner","origin":"fixtures"`) {
		t.Errorf("fixture client not listed as such: %s", list.Body)
	}

	// Deleted: its token is refused at once, saying why; its records go.
	if r := s.admin(http.MethodDelete, "/__sandbox/clients/"+c.ClientID, nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	r := s.trials(tok)
	if r.Status != http.StatusUnauthorized || !strings.Contains(r.Header.Get("WWW-Authenticate"), "was deleted") {
		t.Errorf("token of a deleted client: %d, WWW-Authenticate %q", r.Status, r.Header.Get("WWW-Authenticate"))
	}
	checkEntraError(t, s.tokenResponse(c.ClientID, c.ClientSecret, apiScope), http.StatusUnauthorized, "invalid_client")
	if r := s.admin(http.MethodGet, "/__sandbox/data/referrals?clientId="+c.ClientID, nil); strings.Contains(string(r.Body), created.OutcomesID) {
		t.Errorf("records of a deleted client remain: %s", r.Body)
	}
	if r := s.admin(http.MethodDelete, "/__sandbox/clients/"+c.ClientID, nil); r.Status != http.StatusNotFound {
		t.Errorf("deleting twice: %d", r.Status)
	}
	if r := s.admin(http.MethodDelete, "/__sandbox/clients/"+partner, nil); r.Status != http.StatusConflict {
		t.Errorf("deleting a fixture client: %d %s", r.Status, r.Body)
	}
	// Neither the secret nor a token reached the logs or the journal, even
	// sent where no secret belongs: a runtime secret is known by its shape.
	s.do(request{path: trialsPath + "?note=" + url.QueryEscape(c.ClientSecret), token: tok, headers: map[string]string{"X-Note": c.ClientSecret}, plain: true})
	journal := s.admin(http.MethodGet, "/__sandbox/requests?limit=1000", nil)
	for where, text := range map[string]string{"logs": s.Logs.String(), "journal": string(journal.Body)} {
		if strings.Contains(text, c.ClientSecret) || strings.Contains(text, tok) {
			t.Errorf("the %s hold the client's secret or token", where)
		}
	}
}

func TestRuntimeClientRequests(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	chosen := s.newClient(map[string]any{"clientId": "job-42", "roles": []string{"Trials.Read"}, "tokenLifetimeSeconds": 600})
	if chosen.ClientID != "job-42" {
		t.Errorf("client id %q, want job-42", chosen.ClientID)
	}
	tok := s.clientToken(chosen)
	if r := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/", token: tok, body: referralBody("TRIAL-CARDIO-001"), plain: true}); r.Status != http.StatusForbidden {
		t.Errorf("write with only Trials.Read: %d", r.Status)
	}
	tests := []struct {
		name   string
		body   map[string]any
		status int
		field  string
	}{
		{"duplicate id", map[string]any{"clientId": "job-42"}, http.StatusConflict, ""},
		{"fixture id", map[string]any{"clientId": partner}, http.StatusConflict, ""},
		{"bad id", map[string]any{"clientId": "a/b"}, http.StatusUnprocessableEntity, "clientId"},
		{"bad ttl", map[string]any{"ttl": "forever"}, http.StatusUnprocessableEntity, "ttl"},
		{"other environment", map[string]any{"environment": "production"}, http.StatusUnprocessableEntity, "environment"},
		{"negative lifetime", map[string]any{"tokenLifetimeSeconds": -1}, http.StatusUnprocessableEntity, "tokenLifetimeSeconds"},
		{"unknown field", map[string]any{"rol": []string{"x"}}, http.StatusUnprocessableEntity, "rol"},
	}
	for _, tc := range tests {
		send := s.admin
		if tc.status == http.StatusUnprocessableEntity && tc.field != "ttl" && tc.field != "environment" {
			send = s.adminInvalid // the document refuses these bodies too
		}
		r := send(http.MethodPost, "/__sandbox/clients", tc.body)
		if r.Status != tc.status {
			t.Errorf("%s: %d, want %d; %s", tc.name, r.Status, tc.status, r.Body)
			continue
		}
		if p := r.problem(t); tc.field != "" {
			wantFieldError(t, p, tc.field)
		}
	}
}

func TestRuntimeClientSecretRotation(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	c := s.newClient(nil)
	r := s.admin(http.MethodPost, "/__sandbox/clients/"+c.ClientID+"/secrets", map[string]any{"expiresIn": "1h"})
	if r.Status != http.StatusCreated {
		t.Fatalf("add secret: %d %s", r.Status, r.Body)
	}
	var second struct {
		ID           string `json:"id"`
		ClientSecret string `json:"clientSecret"`
		ExpiresAt    string `json:"expiresAt"`
	}
	r.decode(t, &second)
	// During the overlap both secrets work.
	for _, secret := range []string{c.ClientSecret, second.ClientSecret} {
		if r := s.tokenResponse(c.ClientID, secret, apiScope); r.Status != http.StatusOK {
			t.Errorf("secret during the overlap: %d %s", r.Status, r.Body)
		}
	}
	// The old secret deleted: refused as a wrong secret.
	if r := s.admin(http.MethodDelete, "/__sandbox/clients/"+c.ClientID+"/secrets/"+c.SecretID, nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete old secret: %d %s", r.Status, r.Body)
	}
	old := s.tokenResponse(c.ClientID, c.ClientSecret, apiScope)
	checkEntraError(t, old, http.StatusUnauthorized, "invalid_client")
	if !strings.Contains(string(old.Body), "AADSTS7000215") {
		t.Errorf("deleted secret: %s", old.Body)
	}
	if r := s.admin(http.MethodDelete, "/__sandbox/clients/"+c.ClientID+"/secrets/"+second.ID, nil); r.Status != http.StatusConflict {
		t.Errorf("deleting the last secret: %d %s", r.Status, r.Body)
	}
	// Past its end, on the client's own clock: Entra's expired-secret error.
	if r := s.admin(http.MethodPost, "/__sandbox/clock", map[string]any{"clientId": c.ClientID, "advance": "2h"}); r.Status != http.StatusOK {
		t.Fatalf("advance the client's clock: %d %s", r.Status, r.Body)
	}
	expired := s.tokenResponse(c.ClientID, second.ClientSecret, apiScope)
	checkEntraError(t, expired, http.StatusUnauthorized, "invalid_client")
	if !strings.Contains(string(expired.Body), "AADSTS7000222") {
		t.Errorf("expired secret: %s", expired.Body)
	}
	list := s.admin(http.MethodGet, "/__sandbox/clients/"+c.ClientID, nil)
	if !strings.Contains(string(list.Body), `"expired":true`) || strings.Contains(string(list.Body), second.ClientSecret) {
		t.Errorf("client view after expiry: %s", list.Body)
	}
}

func TestRuntimeClientTTL(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	c := s.newClient(map[string]any{"ttl": "10m"})
	if c.ExpiresAt == "" {
		t.Fatalf("a client with a ttl has no expiresAt: %+v", c)
	}
	tok := s.clientToken(c)
	s.advance(11 * time.Minute)
	r := s.trials(tok)
	if r.Status != http.StatusUnauthorized || !strings.Contains(r.Header.Get("WWW-Authenticate"), "ttl ran out") {
		t.Errorf("token after the ttl: %d %q", r.Status, r.Header.Get("WWW-Authenticate"))
	}
	checkEntraError(t, s.tokenResponse(c.ClientID, c.ClientSecret, apiScope), http.StatusUnauthorized, "invalid_client")
	if r := s.admin(http.MethodGet, "/__sandbox/clients", nil); strings.Contains(string(r.Body), c.ClientID) {
		t.Errorf("expired client still listed: %s", r.Body)
	}
}

func TestRuntimeClientsAreBounded(t *testing.T) {
	t.Parallel()
	memoryOnly(t, "in the shared mode each create makes the next request reload every runtime client, so reaching the cap (a constant) takes a minute")
	s := newSandbox(t)
	for i := range idp.MaxRuntimeClients {
		// Plain, unchecked requests: a thousand contract checks would cost
		// more than the thousand clients.
		if r := s.do(request{method: http.MethodPost, path: "/__sandbox/clients", body: map[string]any{}, plain: true}); r.Status != http.StatusCreated {
			t.Fatalf("client %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	r := s.admin(http.MethodPost, "/__sandbox/clients", map[string]any{})
	if r.Status != http.StatusUnprocessableEntity || !strings.Contains(string(r.Body), fmt.Sprint(idp.MaxRuntimeClients)) {
		t.Errorf("client past the limit: %d %s", r.Status, r.Body)
	}
}

func TestClockAndResetPerClient(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	a, b := s.newClient(nil), s.newClient(nil)
	tokA, tokB := s.clientToken(a), s.clientToken(b)
	refA, _ := s.createReferral(tokA, referralBody("TRIAL-CARDIO-001"))
	refB, _ := s.createReferral(tokB, referralBody("TRIAL-CARDIO-001"))
	s.addRule(map[string]any{"endpoint": "api", "status": 503, "clientId": b.ClientID, "path": "/api/v1/referrals/trials"})

	// A's clock jumps past its token's lifetime; B's does not move.
	r := s.admin(http.MethodPost, "/__sandbox/clock", map[string]any{"clientId": a.ClientID, "advance": "2h"})
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"ownClock":true`) {
		t.Fatalf("advance A: %d %s", r.Status, r.Body)
	}
	if r := s.trials(tokA); r.Status != http.StatusUnauthorized || !strings.Contains(r.Header.Get("WWW-Authenticate"), "expired") {
		t.Errorf("A's token after A's clock moved: %d %q", r.Status, r.Header.Get("WWW-Authenticate"))
	}
	if r := s.do(request{path: pingPath, token: tokB, plain: true}); r.Status != http.StatusOK {
		t.Errorf("B's token after A's clock moved: %d", r.Status)
	}
	tokA = s.clientToken(a) // recovers with a new token on its own clock
	if r := s.trials(tokA); r.Status != http.StatusOK {
		t.Errorf("A's new token: %d %s", r.Status, r.Body)
	}
	later, _ := s.createReferral(tokA, referralBody("TRIAL-CARDIO-001"))
	if at, _ := time.Parse(time.RFC3339, later.SubmittedAt); time.Until(at) < 110*time.Minute {
		t.Errorf("A's record stamped %s, want about two hours ahead", later.SubmittedAt)
	}
	clockB := s.admin(http.MethodGet, "/__sandbox/clock?clientId="+url.QueryEscape(b.ClientID), nil)
	if !strings.Contains(string(clockB.Body), `"real":true`) {
		t.Errorf("B's clock: %s", clockB.Body)
	}

	// Resetting A leaves B's records, rules and journal alone.
	if r := s.admin(http.MethodPost, "/__sandbox/reset", map[string]any{"clientId": a.ClientID}); r.Status != http.StatusOK {
		t.Fatalf("reset A: %d %s", r.Status, r.Body)
	}
	if got := s.journal(url.Values{"clientId": {a.ClientID}}); len(got) != 0 {
		t.Errorf("A's journal after A's reset: %d entries", len(got))
	}
	if r := s.do(request{path: "/api/v1/referrals/" + refA.TrialID + "/" + refA.OutcomesID, token: tokA, plain: true}); r.Status != http.StatusUnauthorized && r.Status != http.StatusNotFound {
		t.Errorf("A's record after A's reset: %d", r.Status)
	}
	if r := s.do(request{path: "/api/v1/referrals/" + refB.TrialID + "/" + refB.OutcomesID, token: tokB, plain: true}); r.Status != http.StatusOK {
		t.Errorf("B's record after A's reset: %d", r.Status)
	}
	if r := s.trials(tokB); r.Status != http.StatusServiceUnavailable {
		t.Errorf("B's rule after A's reset: %d, want its forced 503", r.Status)
	}
	if got := s.journal(url.Values{"clientId": {b.ClientID}}); len(got) == 0 {
		t.Error("B's journal went with A's reset")
	}
	if r := s.admin(http.MethodGet, "/__sandbox/clock?clientId="+url.QueryEscape(a.ClientID), nil); !strings.Contains(string(r.Body), `"real":true`) {
		t.Errorf("A's clock after A's reset: %s", r.Body)
	}
	// B clears its own journal.
	if r := s.admin(http.MethodDelete, "/__sandbox/requests?clientId="+url.QueryEscape(b.ClientID), nil); r.Status != http.StatusNoContent {
		t.Fatalf("clear B's journal: %d", r.Status)
	}
	if got := s.journal(url.Values{"clientId": {b.ClientID}}); len(got) != 0 {
		t.Errorf("B's journal after clearing it: %d entries", len(got))
	}
	for _, bad := range []map[string]any{{"clientId": "nobody"}} {
		if r := s.admin(http.MethodPost, "/__sandbox/reset", bad); r.Status != http.StatusNotFound {
			t.Errorf("reset of an unknown client: %d", r.Status)
		}
		if r := s.admin(http.MethodPost, "/__sandbox/clock", map[string]any{"clientId": "nobody", "advance": "1h"}); r.Status != http.StatusNotFound {
			t.Errorf("clock of an unknown client: %d", r.Status)
		}
	}
}

// TestRuntimeClientSurvivesRestart: runtime clients live in the store, so a
// sandbox restarted on its --data file knows them, with the same secret.
func TestRuntimeClientSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.db")
	firstStore, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	first := newSandbox(t, useStore(firstStore))
	kept, gone := first.newClient(nil), first.newClient(nil)
	if r := first.admin(http.MethodDelete, "/__sandbox/clients/"+gone.ClientID, nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d", r.Status)
	}
	if err := firstStore.Close(); err != nil {
		t.Fatal(err)
	}
	secondStore, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	second := newSandbox(t, useStore(secondStore))
	if r := second.trials(second.clientToken(kept)); r.Status != http.StatusOK {
		t.Errorf("kept client after restart: %d", r.Status)
	}
	checkEntraError(t, second.tokenResponse(gone.ClientID, gone.ClientSecret, apiScope), http.StatusUnauthorized, "invalid_client")
}
