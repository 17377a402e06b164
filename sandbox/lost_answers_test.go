package sandbox_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/conformance"
)

// lostWrite sends req through a real http.Client on a fresh connection,
// requires a transport error (no answer at all), and returns the journal
// entry of the request, which the sandbox writes once its handler returned.
func (s *testSandbox) lostWrite(req request, runID string) sandbox.JournalEntry {
	s.t.Helper()
	if req.headers == nil {
		req.headers = map[string]string{}
	}
	req.headers["X-Request-Id"] = runID
	req.plain = true
	r, err := s.send(freshConnClient(s.t, 10*time.Second), req)
	if err == nil {
		s.t.Fatalf("%s %s: answered %d %s, want the connection reset and no answer", req.method, req.path, r.Status, r.Body)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, e := range s.journal(nil) {
			if e.RequestID == runID {
				return e
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.t.Fatalf("no journal entry for request %s", runID)
	return sandbox.JournalEntry{}
}

// TestDropAfterCommit: on each write (a referral, a qualified referral, a
// token) the request is handled and its result stored, then the
// connection is reset: a real http.Client gets an error, no answer.
func TestDropAfterCommit(t *testing.T) {
	t.Parallel()
	tokenPath := "/" + idp.DefaultTenant + "/oauth2/v2.0/token"
	cases := []struct {
		name     string
		endpoint string
		req      func(tok string) request
		stored   func(t *testing.T, s *testSandbox, tok string, e sandbox.JournalEntry)
	}{
		{"referral", "api", func(tok string) request {
			return request{method: http.MethodPost, path: "/api/v1/referrals/", token: tok, body: referralBody("TRIAL-CARDIO-001")}
		}, func(t *testing.T, s *testSandbox, tok string, e sandbox.JournalEntry) {
			if e.Status != http.StatusCreated || !strings.HasPrefix(e.Location, "/api/v1/referrals/TRIAL-CARDIO-001/") {
				t.Fatalf("journal: status %d location %q, want the 201 that was committed", e.Status, e.Location)
			}
			if r := s.do(request{path: e.Location, token: tok}); r.Status != http.StatusOK {
				t.Errorf("GET %s: %d, want the stored referral", e.Location, r.Status)
			}
		}},
		{"qualified referral", "api", func(tok string) request {
			return request{method: http.MethodPost, path: "/api/v1/referrals/qualified", token: tok, body: qualifiedBody("lost-1")}
		}, func(t *testing.T, s *testSandbox, tok string, e sandbox.JournalEntry) {
			if e.Status != http.StatusCreated || e.Location != "/api/v1/referrals/qualified/lost-1" {
				t.Fatalf("journal: status %d location %q, want the 201 that was committed", e.Status, e.Location)
			}
			if r := s.do(request{path: "/api/v1/referrals/qualified/lost-1", token: tok}); r.Status != http.StatusOK {
				t.Errorf("read back: %d, want the stored qualified referral", r.Status)
			}
		}},
		{"token", "token", func(string) request {
			return request{method: http.MethodPost, path: tokenPath,
				body:    tokenForm(partner, partner+"-secret", apiScope).Encode(),
				headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}
		}, func(t *testing.T, _ *testSandbox, _ string, e sandbox.JournalEntry) {
			if e.Status != http.StatusOK || e.TokenID == "" || e.TokenExpiresAt == "" {
				t.Errorf("journal: status %d token %q expires %q, want the token issued", e.Status, e.TokenID, e.TokenExpiresAt)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t)
			tok := s.token(partner)
			s.addRule(map[string]any{"endpoint": tc.endpoint, "method": "POST", "fault": "drop-after-commit", "times": 1})
			e := s.lostWrite(tc.req(tok), "lost-"+strings.ReplaceAll(tc.name, " ", "-"))
			if e.Fault != "drop-after-commit" {
				t.Errorf("journal fault %q, want drop-after-commit", e.Fault)
			}
			tc.stored(t, s, tok, e)
			// The rule fired once: the same write now answers.
			if r := s.do(tc.req(tok)); r.Status != http.StatusCreated && r.Status != http.StatusOK && r.Status != http.StatusConflict {
				t.Errorf("second write: %d %s", r.Status, r.Body)
			}
		})
	}
}

// TestDropAfterCommitRefusedCombinations: the fault replaces the answer,
// so it cannot be combined with a status.
func TestDropAfterCommitRefusedCombinations(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	r := s.admin(http.MethodPost, "/__sandbox/scenarios", map[string]any{"fault": "drop-after-commit", "status": 503})
	if r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("fault with status: %d, want 422", r.Status)
	}
	r = s.adminInvalid(http.MethodPost, "/__sandbox/scenarios", map[string]any{"fault": "drop-after-comit"})
	if r.Status != http.StatusUnprocessableEntity || !strings.Contains(string(r.Body), "drop-after-commit") {
		t.Fatalf("misspelt fault: %d %s, want 422 listing drop-after-commit", r.Status, r.Body)
	}
}

// resubmitCheck returns the resubmits-safely verdict on partner.
func (s *testSandbox) resubmitCheck() conformance.Check {
	s.t.Helper()
	var rep conformance.Report
	s.admin(http.MethodGet, "/__sandbox/report?clientId="+partner, nil).decode(s.t, &rep)
	for _, c := range rep.Clients {
		for _, ch := range c.Checks {
			if ch.ID == conformance.CheckResubmitsSafely && ch.Result != conformance.NotExercised {
				return ch
			}
		}
	}
	s.t.Fatalf("report judged no program on %s: %+v", conformance.CheckResubmitsSafely, rep.Clients)
	return conformance.Check{}
}

// TestResubmitsSafely: after the lost-answers scenario lost a write's
// answer, a client that sends the same submission again fails with both
// records as evidence; one that reads back first, or whose resubmission
// is answered 409, passes.
func TestResubmitsSafely(t *testing.T) {
	t.Parallel()
	referral := func(tok string) request {
		return request{method: http.MethodPost, path: "/api/v1/referrals/", token: tok, body: referralBody("TRIAL-CARDIO-001")}
	}
	qualified := func(tok, id string) request {
		return request{method: http.MethodPost, path: "/api/v1/referrals/qualified", token: tok, body: qualifiedBody(id)}
	}
	cases := []struct {
		name   string
		client func(s *testSandbox, tok string) (lost sandbox.JournalEntry, second *response)
		want   conformance.Result
	}{
		{"naive retry of a referral", func(s *testSandbox, tok string) (sandbox.JournalEntry, *response) {
			lost := s.lostWrite(referral(tok), "write-1")
			return lost, s.do(referral(tok))
		}, conformance.Fail},
		{"qualified retry under a new externalSourceId", func(s *testSandbox, tok string) (sandbox.JournalEntry, *response) {
			lost := s.lostWrite(qualified(tok, "q-1"), "write-1")
			return lost, s.do(qualified(tok, "q-2"))
		}, conformance.Fail},
		{"qualified resubmission answered 409", func(s *testSandbox, tok string) (sandbox.JournalEntry, *response) {
			lost := s.lostWrite(qualified(tok, "q-1"), "write-1")
			r := s.do(qualified(tok, "q-1"))
			if r.Status != http.StatusConflict || r.Header.Get("Location") != "/api/v1/referrals/qualified/q-1" {
				s.t.Fatalf("resubmission: %d Location %q, want 409 with the existing record", r.Status, r.Header.Get("Location"))
			}
			return lost, r
		}, conformance.Pass},
		{"qualified read back first", func(s *testSandbox, tok string) (sandbox.JournalEntry, *response) {
			lost := s.lostWrite(qualified(tok, "q-1"), "write-1")
			r := s.do(request{path: "/api/v1/referrals/qualified/q-1", token: tok})
			if r.Status != http.StatusOK {
				s.t.Fatalf("read back: %d, want 200 (the write was stored)", r.Status)
			}
			return lost, r
		}, conformance.Pass},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t)
			tok := s.token(partner)
			s.activate("lost-answers", partner)
			lost, second := tc.client(s, tok)
			check := s.resubmitCheck()
			if check.Result != tc.want {
				t.Fatalf("%s: %s (%s), want %s", conformance.CheckResubmitsSafely, check.Result, check.Explanation, tc.want)
			}
			if tc.want != conformance.Fail {
				return
			}
			for _, want := range []string{lost.RequestID, lost.Location, second.Header.Get("X-Request-Id"), second.Header.Get("Location")} {
				if want == "" || !slices.Contains(check.Evidence, want) {
					t.Errorf("evidence %v lacks %q (both requests and both records)", check.Evidence, want)
				}
			}
		})
	}
}
