package sandbox_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// A query that does not parse, a parameter given twice or an empty or
// signed limit is a 400 naming the parameter, never silently the first
// page.
func TestMalformedQueriesAre400NamingTheParameter(t *testing.T) {
	s := newSandbox(t)
	token := s.token(partner)
	tests := []struct{ query, field string }{
		{"cursor=%%%", "cursor"},
		{"cursor=", "cursor"},
		{"limit=", "limit"},
		{"limit=+5", "limit"},
		{"limit=-0", "limit"},
		{"limit=%205", "limit"},
		{"limit=5&limit=6", "limit"},
		{"limit=5&cursor=a&cursor=a", "cursor"},
		{"%zz=1", "%zz"},
		{"limit=5;cursor=x", "limit"},
	}
	for _, path := range []string{"/api/v1/referrals/", "/api/v1/referrals", "/api/v1/referrals/qualified"} {
		for _, tc := range tests {
			t.Run(path+"?"+tc.query, func(t *testing.T) {
				r := s.as(t).do(request{path: path + "?" + tc.query, token: token, invalid: true})
				p := wantProblem(t, r, http.StatusBadRequest, sandbox.ProblemTypeBadRequest)
				if len(p.Errors) != 1 || p.Errors[0].Field != tc.field {
					t.Errorf("errors %+v, want one naming %q", p.Errors, tc.field)
				}
			})
		}
	}
	// Well-formed queries still work, encoded or not.
	for _, query := range []string{"limit=2", "limit=%32", "limit=2&&", "other=1"} {
		if r := s.do(request{path: "/api/v1/referrals/?" + query, token: token, invalid: query == "other=1"}); r.Status != http.StatusOK {
			t.Errorf("?%s: %d %s, want 200", query, r.Status, r.Body)
		}
	}
}

// A malformed value is not quoted back: it may be a secret sent in the URL
// by mistake.
func TestMalformedQueryValueIsNotEchoed(t *testing.T) {
	s := newSandbox(t)
	r := s.do(request{path: "/api/v1/referrals/?client_secret=sandbox%-partner-secret", token: s.token(partner), invalid: true})
	p := wantProblem(t, r, http.StatusBadRequest, sandbox.ProblemTypeBadRequest)
	if len(p.Errors) != 1 || p.Errors[0].Field != "client_secret" {
		t.Errorf("errors %+v, want one naming client_secret", p.Errors)
	}
	if strings.Contains(string(r.Body), "partner-secret") {
		t.Errorf("the error body quotes the value: %s", r.Body)
	}
}
