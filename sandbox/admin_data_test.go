package sandbox_test

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// dataReferral is a row of GET /__sandbox/data/referrals.
type dataReferral struct {
	referrals.Referral
	NextStatuses []string `json:"nextStatuses"`
}

// dataQualified is a row of GET /__sandbox/data/qualified.
type dataQualified struct {
	referrals.QualifiedReferral
	NextStatuses []string `json:"nextStatuses"`
}

type dataReferralsPage struct {
	Referrals  []dataReferral `json:"referrals"`
	NextCursor *string        `json:"nextCursor"`
}

type dataQualifiedPage struct {
	QualifiedReferrals []dataQualified `json:"qualifiedReferrals"`
	NextCursor         *string         `json:"nextCursor"`
}

func TestDataTrialsListsEveryTrial(t *testing.T) {
	s := newSandbox(t)
	r := s.admin(http.MethodGet, "/__sandbox/data/trials", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	var body struct {
		Trials []referrals.Trial `json:"trials"`
	}
	r.decode(t, &body)
	want, err := fixtures.Default()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(body.Trials, want.Trials) {
		t.Errorf("trials = %+v\nwant every fixture trial, listed or not: %+v", body.Trials, want.Trials)
	}
}

func TestDataClientsNeverShowSecrets(t *testing.T) {
	s := newSandbox(t)
	r := s.admin(http.MethodGet, "/__sandbox/data/clients", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	if strings.Contains(strings.ToLower(string(r.Body)), "secret") {
		t.Errorf("clients listing mentions a secret: %s", r.Body)
	}
	var body struct {
		Clients []struct {
			ClientID    string   `json:"clientId"`
			Roles       []string `json:"roles"`
			Environment string   `json:"environment"`
		} `json:"clients"`
	}
	r.decode(t, &body)
	roles := map[string][]string{}
	for _, c := range body.Clients {
		roles[c.ClientID] = c.Roles
		if c.Environment != referrals.EnvironmentDevelopment {
			t.Errorf("%s environment %q, want development", c.ClientID, c.Environment)
		}
		if c.Roles == nil {
			t.Errorf("%s roles null, want a list", c.ClientID)
		}
	}
	tests := []struct {
		client string
		roles  []string
	}{
		{partner, []string{sandbox.RoleTrialsRead, sandbox.RoleReferralsRead, sandbox.RoleReferralsWrite, sandbox.RoleQualifiedReferralsRead, sandbox.RoleQualifiedReferralsWrite}},
		{readonly, []string{sandbox.RoleTrialsRead, sandbox.RoleReferralsRead, sandbox.RoleQualifiedReferralsRead}},
		{noroles, []string{}},
	}
	for _, tc := range tests {
		got, ok := roles[tc.client]
		if !ok {
			t.Errorf("%s missing from %s", tc.client, r.Body)
			continue
		}
		if !slices.Equal(got, tc.roles) {
			t.Errorf("%s roles %v, want %v", tc.client, got, tc.roles)
		}
	}
}

func TestDataReferralsPagesWithNextStatuses(t *testing.T) {
	s := newSandbox(t)
	var all dataReferralsPage
	s.admin(http.MethodGet, "/__sandbox/data/referrals?clientId="+partner, nil).decode(t, &all)
	if len(all.Referrals) != 8 || all.NextCursor != nil {
		t.Fatalf("%d referrals, next %v; want the 8 fixtures on one page", len(all.Referrals), all.NextCursor)
	}
	for i, ref := range all.Referrals {
		if want := referrals.NextStatuses(ref.Status); !slices.Equal(ref.NextStatuses, want) || ref.NextStatuses == nil {
			t.Errorf("%s (%s) nextStatuses %v, want %v (never null)", ref.OutcomesID, ref.Status, ref.NextStatuses, want)
		}
		if i > 0 && ref.SubmittedAt > all.Referrals[i-1].SubmittedAt {
			t.Errorf("not newest first at %d: %s after %s", i, ref.SubmittedAt, all.Referrals[i-1].SubmittedAt)
		}
	}

	var first, second dataReferralsPage
	s.admin(http.MethodGet, "/__sandbox/data/referrals?clientId="+partner+"&limit=3", nil).decode(t, &first)
	if len(first.Referrals) != 3 || first.NextCursor == nil {
		t.Fatalf("first page: %d referrals, next %v", len(first.Referrals), first.NextCursor)
	}
	s.admin(http.MethodGet, "/__sandbox/data/referrals?clientId="+partner+"&limit=3&cursor="+*first.NextCursor, nil).decode(t, &second)
	if len(second.Referrals) != 3 || second.Referrals[0].OutcomesID != all.Referrals[3].OutcomesID {
		t.Errorf("second page starts at %+v, want the fourth referral %s", second.Referrals, all.Referrals[3].OutcomesID)
	}

	var other dataReferralsPage
	s.admin(http.MethodGet, "/__sandbox/data/referrals?clientId="+partner2, nil).decode(t, &other)
	if other.Referrals == nil || len(other.Referrals) != 0 {
		t.Errorf("partner 2 referrals = %v, want [] (records are per partner)", other.Referrals)
	}
}

func TestDataQueryErrors(t *testing.T) {
	s := newSandbox(t)
	tests := []struct {
		path, field string
	}{
		{"/__sandbox/data/referrals", "clientId"},
		{"/__sandbox/data/qualified", "clientId"},
		{"/__sandbox/data/referrals?clientId=" + partner + "&limit=0", "limit"},
		{"/__sandbox/data/qualified?clientId=" + partner + "&limit=501", "limit"},
		{"/__sandbox/data/referrals?clientId=" + partner + "&cursor=not-a-cursor", "cursor"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			r := s.adminInvalid(http.MethodGet, tc.path, nil)
			if r.Status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", r.Status, r.Body)
			}
			p := r.problem(t)
			if len(p.Errors) != 1 || p.Errors[0].Field != tc.field {
				t.Errorf("errors %+v, want one naming %s", p.Errors, tc.field)
			}
		})
	}
}

// TestDataQualifiedAddsNoViewedEntries checks that QA browsing leaves the
// audit trail alone, while a status move shows in it.
func TestDataQualifiedAddsNoViewedEntries(t *testing.T) {
	s := newSandbox(t)
	list := func() map[string]dataQualified {
		var page dataQualifiedPage
		r := s.admin(http.MethodGet, "/__sandbox/data/qualified?clientId="+partner, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
		r.decode(t, &page)
		byID := map[string]dataQualified{}
		for _, q := range page.QualifiedReferrals {
			byID[q.ExternalSourceID] = q
		}
		return byID
	}
	before := list()
	if len(before) != 4 {
		t.Fatalf("%d qualified referrals, want the 4 fixtures", len(before))
	}
	list()
	after := list()
	const id = "src-b659f7ea79aaa166"
	if got, want := len(after[id].AuditTrail), len(before[id].AuditTrail); got != want {
		t.Errorf("audit trail grew from %d to %d entries by browsing", want, got)
	}
	stored, err := s.Store.GetQualified(context.Background(), partner, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored.AuditTrail) != len(before[id].AuditTrail) {
		t.Errorf("stored audit trail has %d entries, the listing %d", len(stored.AuditTrail), len(before[id].AuditTrail))
	}

	if r := s.admin(http.MethodPost, "/__sandbox/qualified/"+id+"/status", map[string]string{"status": referrals.StatusReviewing, "clientId": partner}); r.Status != http.StatusOK {
		t.Fatalf("move: %d %s", r.Status, r.Body)
	}
	moved := list()[id]
	last := moved.AuditTrail[len(moved.AuditTrail)-1]
	if moved.Status != referrals.StatusReviewing || last.Action != referrals.AuditStatusChanged || last.ToStatus != referrals.StatusReviewing {
		t.Errorf("after the move: status %s, last audit entry %+v", moved.Status, last)
	}
	if want := referrals.NextStatuses(referrals.StatusReviewing); !slices.Equal(moved.NextStatuses, want) {
		t.Errorf("nextStatuses %v, want %v", moved.NextStatuses, want)
	}
}

func TestDataNeedsTheAdminToken(t *testing.T) {
	s := newSandbox(t, func(c *sandboxConfig) { c.AdminToken = "qa-token" })
	for _, path := range []string{"/__sandbox/data/trials", "/__sandbox/data/clients", "/__sandbox/data/referrals?clientId=" + partner, "/__sandbox/data/qualified?clientId=" + partner} {
		if r := s.admin(http.MethodGet, path, nil); r.Status != http.StatusUnauthorized {
			t.Errorf("%s without the admin token: %d, want 401", path, r.Status)
		}
		r := s.do(request{path: path, token: "qa-token"})
		if r.Status != http.StatusOK {
			t.Errorf("%s with the admin token: %d %s", path, r.Status, r.Body)
		}
	}
	// The page itself carries no data: a browser gets it without a token and
	// the page asks for one.
	if r := s.admin(http.MethodGet, "/__sandbox/ui/", nil); r.Status != http.StatusOK {
		t.Errorf("console page with an admin token configured: %d, want 200", r.Status)
	}
}

func TestConsoleRoutes(t *testing.T) {
	s := newSandbox(t)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	tests := []struct {
		method, path string
		status       int
		contentType  string
		location     string
	}{
		{http.MethodGet, "/__sandbox/ui", http.StatusMovedPermanently, "", "/__sandbox/ui/"},
		{http.MethodGet, "/__sandbox/ui/", http.StatusOK, "text/html; charset=utf-8", ""},
		{http.MethodHead, "/__sandbox/ui/", http.StatusOK, "text/html; charset=utf-8", ""},
		{http.MethodGet, "/__sandbox/ui/app.js", http.StatusOK, "text/javascript; charset=utf-8", ""},
		{http.MethodGet, "/__sandbox/ui/style.css", http.StatusOK, "text/css; charset=utf-8", ""},
		{http.MethodGet, "/__sandbox/ui/nothing.js", http.StatusNotFound, "", ""},
		{http.MethodPost, "/__sandbox/ui/", http.StatusMethodNotAllowed, "", ""},
		{http.MethodPost, "/__sandbox/data/trials", http.StatusMethodNotAllowed, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, s.URL+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			_, _ = io.Copy(io.Discard, resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if tc.contentType != "" && resp.Header.Get("Content-Type") != tc.contentType {
				t.Errorf("Content-Type %q, want %q", resp.Header.Get("Content-Type"), tc.contentType)
			}
			if tc.location != "" && resp.Header.Get("Location") != tc.location {
				t.Errorf("Location %q, want %q", resp.Header.Get("Location"), tc.location)
			}
		})
	}
	// The console's own requests are not the partner's traffic: the journal
	// stays empty.
	var journal struct {
		Requests []sandbox.JournalEntry `json:"requests"`
	}
	s.admin(http.MethodGet, "/__sandbox/requests", nil).decode(t, &journal)
	if len(journal.Requests) != 0 {
		t.Errorf("console requests were journaled: %+v", journal.Requests)
	}
}
