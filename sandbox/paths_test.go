package sandbox_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// A path with an empty or dot segment is a 404 naming it, never a redirect:
// a stock http.Client follows a 301 to a POST with a GET, and the partner
// would read the list and believe the referral was stored.
func TestUncleanPathsAre404NeverRedirects(t *testing.T) {
	s := newSandbox(t)
	token := s.token(partner)
	tests := []struct {
		method, path, meant string
	}{
		{http.MethodPost, "/api/v1//referrals/", "/api/v1/referrals/"},
		{http.MethodPost, "/api/v1/referrals//", "/api/v1/referrals/"},
		{http.MethodPost, "/api/v1/./referrals/qualified", "/api/v1/referrals/qualified"},
		{http.MethodPost, "/api/v1/referrals/x/../qualified", "/api/v1/referrals/qualified"},
		{http.MethodGet, "//health/ping", "/health/ping"},
		{http.MethodGet, "/api/v1/referrals/qualified/../trials", "/api/v1/referrals/trials"},
		{http.MethodPost, "//oauth2/v2.0/token", "/oauth2/v2.0/token"},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			var body any
			if tc.method == http.MethodPost {
				body = referralBody(fixtureTrialID)
			}
			// s.client is a stock http.Client (it follows redirects) with
			// the contract checker as its transport.
			r := s.as(t).do(request{method: tc.method, path: tc.path, token: token, body: body, unknownRoute: true})
			p := wantProblem(t, r, http.StatusNotFound, sandbox.ProblemTypeNotFound)
			if !strings.Contains(p.Detail, tc.path) || !strings.Contains(p.Detail, "did you mean "+tc.meant) {
				t.Errorf("detail %q should name the path %s and suggest %s", p.Detail, tc.path, tc.meant)
			}
		})
	}
	// Nothing was stored by the POSTs.
	page := s.do(request{path: "/api/v1/referrals/?limit=500", token: token})
	var list struct {
		Referrals []map[string]any `json:"referrals"`
	}
	page.decode(t, &list)
	if len(list.Referrals) != fixtureReferrals {
		t.Errorf("%d referrals after the unclean POSTs, want the %d of the fixtures", len(list.Referrals), fixtureReferrals)
	}
}

// An encoded slash or dot-dot inside an id is part of the id, never a step
// up or down the path.
func TestEncodedSlashStaysInTheID(t *testing.T) {
	s := newSandbox(t)
	token := s.token(partner)
	s.createQualified(token, "case-enc")

	// ..%2Ftrials is an id (that does not exist), not the trials list.
	r := s.do(request{path: "/api/v1/referrals/qualified/..%2Ftrials", token: token})
	p := wantProblem(t, r, http.StatusNotFound, sandbox.ProblemTypeNotFound)
	if strings.Contains(string(r.Body), "trials\":[") {
		t.Errorf("the trials list leaked through an encoded path: %s", r.Body)
	}
	if !strings.Contains(p.Detail, "qualified referral") {
		t.Errorf("detail %q: want the qualified referral lookup's 404", p.Detail)
	}

	// qualified%2Fcase-enc is one segment: no route has it.
	r = s.do(request{path: "/api/v1/referrals/qualified%2Fcase-enc", token: token, unknownRoute: true})
	wantProblem(t, r, http.StatusNotFound, sandbox.ProblemTypeNotFound)

	// An id with encoded characters is decoded once: %2D is "-".
	r = s.do(request{path: "/api/v1/referrals/qualified/case%2Denc", token: token})
	if r.Status != http.StatusOK {
		t.Errorf("GET case%%2Denc: %d %s, want the referral case-enc", r.Status, r.Body)
	}
}

// No POST is ever answered with a redirect, whatever the path's spelling:
// every route, with and without a trailing slash, with a doubled slash or a
// dot segment.
func TestNoPostIsEverRedirected(t *testing.T) {
	s := newSandbox(t)
	token := s.token(partner)
	routes := []string{
		"/health/ping", "/api/v1/referrals", "/api/v1/referrals/trials", "/api/v1/referrals/qualified",
		"/api/v1/referrals/qualified/x", "/api/v1/referrals/T/O", "/api/v1/openapi.json",
		"/oauth2/v2.0/token", "/common/discovery/instance",
		"/__sandbox/health", "/__sandbox/clock", "/__sandbox/scenarios", "/__sandbox/library/flaky",
		"/__sandbox/reset", "/__sandbox/requests", "/__sandbox/report", "/__sandbox/ui", "/__sandbox/ui/",
		"/__sandbox/ui/app.js", "/__sandbox/data/trials", "/__sandbox/qualified/x/status",
	}
	client := *s.plain
	client.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		t.Errorf("redirected to %s", req.URL)
		return http.ErrUseLastResponse
	}
	for _, route := range routes {
		for _, path := range []string{route, route + "/", "/" + route, strings.Replace(route, "/", "/./", 2), route + "/../x"} {
			r, err := s.send(&client, request{method: http.MethodPost, path: path, token: token, body: `{}`})
			if err != nil {
				t.Fatalf("POST %s: %v", path, err)
			}
			if r.Status >= 300 && r.Status < 400 {
				t.Errorf("POST %s: %d, a redirect", path, r.Status)
			}
		}
	}
}
