package sandbox_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// Partner isolation: a partner reads only its own records, and a 404 never
// tells a record of another partner from one that does not exist.

// TestAPI_PartnerIsolation: partners cannot read each other's records, in
// either direction, one by one or in lists.
func TestAPI_PartnerIsolation(t *testing.T) {
	s := newSandbox(t)
	tokens := map[string]string{partner: s.token(partner), partner2: s.token(partner2)}
	refs := map[string]referrals.Referral{}
	for client, token := range tokens {
		refs[client], _ = s.createReferral(token, referralBody("TRIAL-CARDIO-001"))
		s.createQualified(token, "only-"+client)
	}
	tests := []struct {
		name, reader, path string
	}{
		{"partner reads partner-2's referral", partner, referralPath(refs[partner2])},
		{"partner-2 reads partner's referral", partner2, referralPath(refs[partner])},
		{"partner-2 reads partner's fixture referral", partner2, "/api/v1/referrals/" + fixtureTrialID + "/" + fixtureOutcomesID},
		{"partner reads partner-2's qualified referral", partner, "/api/v1/referrals/qualified/only-" + partner2},
		{"partner-2 reads partner's qualified referral", partner2, "/api/v1/referrals/qualified/only-" + partner},
		{"partner-2 reads partner's fixture qualified referral", partner2, "/api/v1/referrals/qualified/" + fixtureSourceID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(request{path: tt.path, token: tokens[tt.reader]})
			wantProblem(t, r, http.StatusNotFound, sandbox.ProblemTypeNotFound)
		})
	}

	t.Run("lists hold only the caller's records", func(t *testing.T) {
		for client, token := range tokens {
			for _, l := range []apiList{referralsList, qualifiedList} {
				page := s.fetchPage(l, token, "limit=500")
				for i, raw := range page.records {
					var rec struct{ ClientID string }
					if err := json.Unmarshal(raw, &rec); err != nil {
						t.Fatal(err)
					}
					if rec.ClientID != client {
						t.Errorf("%s lists %s of %s", client, page.ids[i], rec.ClientID)
					}
				}
			}
		}
		if ids := s.fetchPage(referralsList, tokens[partner2], "").ids; !slices.Equal(ids, []string{refs[partner2].OutcomesID}) {
			t.Errorf("partner-2 lists referrals %v, want only its own %s", ids, refs[partner2].OutcomesID)
		}
	})

	t.Run("another partner's failed read leaves no trace in the audit trail", func(t *testing.T) {
		var q referrals.QualifiedReferral
		s.do(request{path: "/api/v1/referrals/qualified/only-" + partner, token: tokens[partner]}).decode(t, &q)
		for _, e := range q.AuditTrail {
			if e.Actor != partner {
				t.Errorf("audit entry by %s on partner's record: %+v", e.Actor, e)
			}
		}
	})
}

// TestAPI_SameExternalSourceIDPerPartner: each partner reads its own record
// under an externalSourceId both use.
func TestAPI_SameExternalSourceIDPerPartner(t *testing.T) {
	s := newSandbox(t)
	for _, client := range []string{partner, partner2} {
		token := s.token(client)
		body := qualifiedBody("shared-1")
		body["patient"].(map[string]any)["firstName"] = client
		r := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/qualified", token: token, body: body})
		if r.Status != http.StatusCreated {
			t.Fatalf("%s submits shared-1: %d %s", client, r.Status, r.Body)
		}
	}
	for _, client := range []string{partner, partner2} {
		var q referrals.QualifiedReferral
		r := s.do(request{path: "/api/v1/referrals/qualified/shared-1", token: s.token(client)})
		r.decode(t, &q)
		if r.Status != http.StatusOK || q.ClientID != client || q.Patient.FirstName != client {
			t.Errorf("%s reads shared-1: %d clientId %q patient %q, want its own record", client, r.Status, q.ClientID, q.Patient.FirstName)
		}
	}
}

// TestAPI_NotFoundRevealsNothing: an unknown id, a wrong trial and another
// partner's record get the same 404 body, apart from the request's own
// instance and traceId, so probing cannot find out which ids exist.
func TestAPI_NotFoundRevealsNothing(t *testing.T) {
	s := newSandbox(t)
	partnerToken, partner2Token := s.token(partner), s.token(partner2)
	theirs, _ := s.createReferral(partner2Token, referralBody("TRIAL-ONCO-002"))
	s.createQualified(partner2Token, "theirs-1")
	tests := []struct {
		name  string
		cases map[string]string // what is asked for: path
	}{
		{"referrals", map[string]string{
			"an unknown outcomes id":       "/api/v1/referrals/TRIAL-ONCO-002/00000000-0000-4000-8000-000000000000",
			"an outcomes id that is no id": "/api/v1/referrals/TRIAL-ONCO-002/not-an-id",
			"an unknown trial":             "/api/v1/referrals/TRIAL-NOPE-999/" + fixtureOutcomesID,
			"another valid trial":          "/api/v1/referrals/TRIAL-CARDIO-001/" + fixtureOutcomesID,
			"another partner's referral":   referralPath(theirs),
		}},
		{"qualified referrals", map[string]string{
			"an unknown id":                      "/api/v1/referrals/qualified/nobody-has-this",
			"an id that could never be stored":   "/api/v1/referrals/qualified/has%20space",
			"another partner's qualified record": "/api/v1/referrals/qualified/theirs-1",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var first sandbox.Problem
			var firstName string
			var firstKeys []string
			for _, name := range slices.Sorted(maps.Keys(tt.cases)) {
				r := s.do(request{path: tt.cases[name], token: partnerToken})
				p := wantProblem(t, r, http.StatusNotFound, sandbox.ProblemTypeNotFound)
				var raw map[string]any
				r.decode(t, &raw)
				keys := slices.Sorted(maps.Keys(raw))
				p.Instance, p.TraceID = "", ""
				if firstName == "" {
					first, firstName, firstKeys = p, name, keys
					continue
				}
				if !slices.Equal(keys, firstKeys) || !problemsEqual(p, first) {
					t.Errorf("404 for %s differs from the one for %s:\n%+v %v\n%+v %v", name, firstName, p, keys, first, firstKeys)
				}
			}
		})
	}
}

func problemsEqual(a, b sandbox.Problem) bool {
	return a.Type == b.Type && a.Title == b.Title && a.Status == b.Status && a.Detail == b.Detail &&
		a.Instance == b.Instance && a.TraceID == b.TraceID && slices.Equal(a.Errors, b.Errors)
}

// referralPath is where a referral is read, by its canonical trialId.
func referralPath(ref referrals.Referral) string {
	return "/api/v1/referrals/" + ref.TrialID + "/" + ref.OutcomesID
}
