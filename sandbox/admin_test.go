package sandbox_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// adminToken is the --admin-token of the protected-admin tests.
const adminToken = "s3cret-admin"

// TestAdminToken: with an admin token configured, every admin endpoint
// refuses callers without it, and the token opens nothing else.
func TestAdminToken(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, func(c *sandboxConfig) { c.AdminToken = adminToken })
	endpoints := []struct{ method, path string }{
		{http.MethodGet, "/__sandbox/scenarios"},
		{http.MethodDelete, "/__sandbox/scenarios"},
		{http.MethodGet, "/__sandbox/library"},
		{http.MethodGet, "/__sandbox/library/flaky"},
		{http.MethodGet, "/__sandbox/clock"},
		{http.MethodGet, "/__sandbox/requests"},
		{http.MethodDelete, "/__sandbox/requests"},
		{http.MethodPost, "/__sandbox/reset"},
	}
	for _, ep := range endpoints {
		t.Run(ep.method+" "+ep.path, func(t *testing.T) {
			s := s.as(t)
			var body any // state-changing admin calls need a JSON body
			if ep.method != http.MethodGet {
				body = map[string]any{}
			}
			for _, auth := range []string{"", "Bearer wrong", "Bearer " + adminToken + "x", "Basic " + adminToken, adminToken} {
				r := s.do(request{method: ep.method, path: ep.path, body: body, headers: map[string]string{"Authorization": auth}})
				if r.Status != http.StatusUnauthorized {
					t.Errorf("Authorization %q: %d, want 401", auth, r.Status)
					continue
				}
				r.problem(t)
				if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer ") {
					t.Errorf("Authorization %q: WWW-Authenticate %q, want a Bearer challenge", auth, r.Header.Get("WWW-Authenticate"))
				}
			}
			r := s.do(request{method: ep.method, path: ep.path, body: body, token: adminToken})
			if r.Status != http.StatusOK && r.Status != http.StatusNoContent {
				t.Errorf("with the admin token: %d %s", r.Status, r.Body)
			}
		})
	}
	// A refused admin call changes nothing: the rule below is never added.
	r := s.do(request{method: http.MethodPost, path: "/__sandbox/scenarios", body: map[string]any{"status": 503}})
	if r.Status != http.StatusUnauthorized {
		t.Fatalf("unauthenticated add: %d", r.Status)
	}
	tok := s.token(partner)
	if r := s.do(request{path: trialsPath, token: tok}); r.Status != http.StatusOK {
		t.Errorf("API after a refused rule: %d, want 200", r.Status)
	}
	// The admin token is not an access token, and the health check stays open.
	if r := s.do(request{path: trialsPath, token: adminToken}); r.Status != http.StatusUnauthorized {
		t.Errorf("API with the admin token: %d, want 401", r.Status)
	}
	if r := s.do(request{path: "/__sandbox/health"}); r.Status != http.StatusOK {
		t.Errorf("health without the admin token: %d", r.Status)
	}
}

// TestAdminOpenWithoutToken: without --admin-token the admin API needs no
// credentials, as on a developer's machine.
func TestAdminOpenWithoutToken(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	if r := s.admin(http.MethodGet, "/__sandbox/scenarios", nil); r.Status != http.StatusOK {
		t.Errorf("open admin API: %d", r.Status)
	}
}

// TestReset puts everything back: records, rules, scenarios, journal, clock
// and rate limits.
func TestReset(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, withRateLimit(slowRate, 5))
	tok, tok2, tokRO := s.token(partner), s.token(partner2), s.token(readonly)
	fixture := firstReferral(t, partner)
	fixturePath := "/api/v1/referrals/" + fixture.TrialID + "/" + fixture.OutcomesID

	// Change everything reset is meant to undo.
	created := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/", token: tok,
		body: map[string]any{"trialId": "TRIAL-CARDIO-001", "patient": validPatient()}})
	if created.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", created.Status, created.Body)
	}
	createdPath := created.Header.Get("Location")
	if r := s.do(request{path: createdPath, token: tok}); r.Status != http.StatusOK {
		t.Fatalf("created referral at %q: %d", createdPath, r.Status)
	}
	moveReferral(t, s, fixture, referrals.StatusReviewing, http.StatusOK)
	if got := s.statusSequence(tokRO, 6); got[5] != http.StatusTooManyRequests {
		t.Fatalf("readonly's bucket not empty: %v", got)
	}
	s.addRule(map[string]any{"path": "/api/v1/referrals/qualified", "status": 500})
	s.activate("permissions-revoked", partner2)
	s.advance(time.Hour)

	r := s.admin(http.MethodPost, "/__sandbox/reset", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("reset: %d %s", r.Status, r.Body)
	}

	if got := s.journal(nil); len(got) != 0 {
		t.Errorf("journal after reset: %d entries", len(got))
	}
	var rules struct {
		Rules  []json.RawMessage `json:"rules"`
		Active []json.RawMessage `json:"active"`
	}
	s.admin(http.MethodGet, "/__sandbox/scenarios", nil).decode(t, &rules)
	if len(rules.Rules) != 0 || len(rules.Active) != 0 {
		t.Errorf("rules after reset: %s", s.admin(http.MethodGet, "/__sandbox/scenarios", nil).Body)
	}
	var c clockState
	s.admin(http.MethodGet, "/__sandbox/clock", nil).decode(t, &c)
	if !c.Real || !near(nowOf(t, c), time.Now()) {
		t.Errorf("clock after reset: %+v", c)
	}
	if r := s.do(request{path: createdPath, token: tok}); r.Status != http.StatusNotFound {
		t.Errorf("referral created before the reset: %d, want 404", r.Status)
	}
	var ref referrals.Referral
	s.do(request{path: fixturePath, token: tok}).decode(t, &ref)
	if ref.OutcomesID != fixture.OutcomesID || ref.Status != referrals.StatusReceived {
		t.Errorf("fixture referral after reset: %+v, want it back in status received", ref)
	}
	if r := s.do(request{path: trialsPath, token: tokRO}); r.Status != http.StatusOK {
		t.Errorf("readonly after reset: %d, want a refilled bucket", r.Status)
	}
	if r := s.do(request{path: trialsPath, token: tok2}); r.Status != http.StatusOK {
		t.Errorf("%s after reset: %d, want the scenario gone", partner2, r.Status)
	}
	if r := s.do(request{path: "/api/v1/referrals/qualified", token: tok}); r.Status != http.StatusOK {
		t.Errorf("qualified list after reset: %d, want the rule gone", r.Status)
	}
}

// moveReferral posts a status move and checks the answer's status.
func moveReferral(t *testing.T, s *testSandbox, ref fixtureReferral, status string, want int) *response {
	t.Helper()
	r := s.as(t).admin(http.MethodPost, "/__sandbox/referrals/"+ref.TrialID+"/"+ref.OutcomesID+"/status", map[string]string{"status": status})
	if r.Status != want {
		t.Fatalf("move %s to %s: %d %s, want %d", ref.OutcomesID, status, r.Status, r.Body, want)
	}
	return r
}

// TestReferralStatusMoves walks a referral through the processing order and
// refuses moves that break it.
func TestReferralStatusMoves(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tok := s.token(partner)
	ref := firstReferral(t, partner)
	apiPath := "/api/v1/referrals/" + ref.TrialID + "/" + ref.OutcomesID

	var moved referrals.Referral
	moveReferral(t, s, ref, referrals.StatusReviewing, http.StatusOK).decode(t, &moved)
	if moved.Status != referrals.StatusReviewing || moved.OutcomesID != ref.OutcomesID || moved.ClientID != partner {
		t.Errorf("moved record %+v", moved)
	}
	var seen referrals.Referral
	s.do(request{path: apiPath, token: tok}).decode(t, &seen)
	if seen.Status != referrals.StatusReviewing {
		t.Errorf("API shows status %q after the move, want reviewing", seen.Status)
	}
	for _, step := range []string{referrals.StatusAccepted, referrals.StatusEnrolled} {
		moveReferral(t, s, ref, step, http.StatusOK)
	}

	fresh := referralIn(t, partner, referrals.StatusReceived, ref.OutcomesID)
	tests := []struct {
		name   string
		path   string
		status string
		want   int
		says   string
	}{
		{"skips the order", statusPath(fresh), referrals.StatusEnrolled, http.StatusConflict, "reviewing"},
		{"from a final status", statusPath(ref), referrals.StatusWithdrawn, http.StatusConflict, "final"},
		{"unknown status", statusPath(fresh), "done", http.StatusUnprocessableEntity, ""},
		{"empty status", statusPath(fresh), "", http.StatusUnprocessableEntity, ""},
		{"unknown record", "/__sandbox/referrals/" + fresh.TrialID + "/00000000-0000-0000-0000-000000000000/status", referrals.StatusReviewing, http.StatusNotFound, ""},
		{"wrong trial", "/__sandbox/referrals/TRIAL-NEURO-004/" + fresh.OutcomesID + "/status", referrals.StatusReviewing, http.StatusNotFound, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := s.as(t).adminInvalid(http.MethodPost, tc.path, map[string]string{"status": tc.status})
			if r.Status != tc.want {
				t.Fatalf("status %d, want %d; body %s", r.Status, tc.want, r.Body)
			}
			p := r.problem(t)
			if tc.says != "" && !strings.Contains(p.Detail, tc.says) {
				t.Errorf("detail %q does not say %q", p.Detail, tc.says)
			}
			if tc.want == http.StatusUnprocessableEntity && (len(p.Errors) != 1 || p.Errors[0].Field != "status") {
				t.Errorf("errors %+v, want one naming status", p.Errors)
			}
		})
	}
	var still referrals.Referral
	s.do(request{path: "/api/v1/referrals/" + fresh.TrialID + "/" + fresh.OutcomesID, token: tok}).decode(t, &still)
	if still.Status != referrals.StatusReceived {
		t.Errorf("refused moves changed the record: status %q", still.Status)
	}
}

// statusPath is the admin status path of ref.
func statusPath(ref fixtureReferral) string {
	return "/__sandbox/referrals/" + ref.TrialID + "/" + ref.OutcomesID + "/status"
}

// referralIn returns a fixture referral of clientID in status other than skip.
func referralIn(t *testing.T, clientID, status, skip string) fixtureReferral {
	t.Helper()
	for _, ref := range defaultFixtures(t).Referrals {
		if ref.ClientID == clientID && ref.Status == status && ref.OutcomesID != skip {
			return fixtureReferral{TrialID: ref.TrialID, OutcomesID: ref.OutcomesID}
		}
	}
	t.Fatalf("no second %s referral of %s in the fixtures", status, clientID)
	return fixtureReferral{}
}

// TestQualifiedStatusMove: a status move on a qualified referral is visible
// through the API and leaves a status-changed line in its audit trail.
func TestQualifiedStatusMove(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tok := s.token(partner)
	var id string
	for _, q := range defaultFixtures(t).QualifiedReferrals {
		if q.ClientID == partner && q.Status == referrals.StatusReceived {
			id = q.ExternalSourceID
			break
		}
	}
	if id == "" {
		t.Fatal("no received qualified referral of sandbox-partner in the fixtures")
	}
	r := s.admin(http.MethodPost, "/__sandbox/qualified/"+id+"/status", map[string]string{"status": referrals.StatusReviewing})
	if r.Status != http.StatusOK {
		t.Fatalf("move: %d %s", r.Status, r.Body)
	}
	var moved referrals.QualifiedReferral
	r.decode(t, &moved)
	if moved.Status != referrals.StatusReviewing || len(moved.AuditTrail) == 0 {
		t.Fatalf("moved record %+v", moved)
	}
	last := moved.AuditTrail[len(moved.AuditTrail)-1]
	if last.Action != referrals.AuditStatusChanged || last.FromStatus != referrals.StatusReceived || last.ToStatus != referrals.StatusReviewing ||
		last.At == "" || last.Actor == "" || last.RequestID != r.Header.Get(sandbox.RequestIDHeader) {
		t.Errorf("audit entry %+v, want status-changed received→reviewing with the request id %q", last, r.Header.Get(sandbox.RequestIDHeader))
	}

	var seen referrals.QualifiedReferral
	s.do(request{path: "/api/v1/referrals/qualified/" + id, token: tok}).decode(t, &seen)
	if seen.Status != referrals.StatusReviewing {
		t.Errorf("API shows status %q, want reviewing", seen.Status)
	}
	found := false
	for _, e := range seen.AuditTrail {
		if e.Action == referrals.AuditStatusChanged && e.FromStatus == referrals.StatusReceived && e.ToStatus == referrals.StatusReviewing {
			found = true
		}
	}
	if !found {
		t.Errorf("API audit trail lacks the status change: %+v", seen.AuditTrail)
	}

	for _, tc := range []struct {
		name, id, status string
		want             int
	}{
		{"backwards", id, referrals.StatusReceived, http.StatusConflict},
		{"unknown status", id, "archived", http.StatusUnprocessableEntity},
		{"unknown record", "src-does-not-exist", referrals.StatusReviewing, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.as(t).adminInvalid(http.MethodPost, "/__sandbox/qualified/"+tc.id+"/status", map[string]string{"status": tc.status})
			if r.Status != tc.want {
				t.Fatalf("status %d, want %d; body %s", r.Status, tc.want, r.Body)
			}
			r.problem(t)
		})
	}
}

// TestResetRestoresFixturesByteForByte: after records were changed and
// created, a reset gives back the fixtures' referrals exactly as they
// read before: the same listing and the same record, byte for byte
// (the fixtures are kept encoded, in the store's form, to reset to).
func TestResetRestoresFixturesByteForByte(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tok := s.token(partner)
	fixture := firstReferral(t, partner)
	fixturePath := "/api/v1/referrals/" + fixture.TrialID + "/" + fixture.OutcomesID
	const listPath = "/api/v1/referrals/?limit=500"
	read := func(path string) string {
		t.Helper()
		r := s.do(request{path: path, token: tok})
		if r.Status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
		}
		return string(r.Body)
	}
	list, record := read(listPath), read(fixturePath)

	for round := range 2 {
		created := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/", token: tok,
			body: map[string]any{"trialId": "TRIAL-CARDIO-001", "patient": validPatient()}})
		if created.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", created.Status, created.Body)
		}
		moveReferral(t, s, fixture, referrals.StatusReviewing, http.StatusOK)
		if read(listPath) == list || read(fixturePath) == record {
			t.Fatal("the changes did not show: the test would prove nothing")
		}
		if r := s.admin(http.MethodPost, "/__sandbox/reset", nil); r.Status != http.StatusOK {
			t.Fatalf("reset: %d %s", r.Status, r.Body)
		}
		if got := read(listPath); got != list {
			t.Errorf("listing after reset %d:\n%s\nwant, as before the changes:\n%s", round+1, got, list)
		}
		if got := read(fixturePath); got != record {
			t.Errorf("fixture referral after reset %d:\n%s\nwant:\n%s", round+1, got, record)
		}
	}
}
