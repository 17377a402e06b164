package sandbox_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// fixtureRecords counts the default fixtures' records of a client, which
// count against its quota from the start.
func fixtureRecords(t *testing.T, clientID string) int {
	t.Helper()
	set, err := fixtures.Default()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range set.Referrals {
		if r.ClientID == clientID {
			n++
		}
	}
	for _, q := range set.QualifiedReferrals {
		if q.ClientID == clientID {
			n++
		}
	}
	return n
}

// adminQualified lists the client's qualified referrals through the admin
// data listing, which records no view: what is stored, as it is.
func (s *testSandbox) adminQualified(clientID string) map[string]referrals.QualifiedReferral {
	s.t.Helper()
	r := s.admin(http.MethodGet, "/__sandbox/data/qualified?limit=500&clientId="+url.QueryEscape(clientID), nil)
	if r.Status != http.StatusOK {
		s.t.Fatalf("admin listing: %d %s", r.Status, r.Body)
	}
	var page dataQualifiedPage
	r.decode(s.t, &page)
	out := map[string]referrals.QualifiedReferral{}
	for _, q := range page.QualifiedReferrals {
		out[q.ExternalSourceID] = q.QualifiedReferral
	}
	return out
}

// TestQuotaRecordsRefusesWithProblem: once a client holds its quota of
// records, a submission of either kind is 507 with the quota-exceeded
// problem, stores nothing, leaves every stored record as it was and leaves
// other clients alone; a reset of the client frees the quota.
func TestQuotaRecordsRefusesWithProblem(t *testing.T) {
	held := fixtureRecords(t, partner)
	s := newSandbox(t, withQuota(t, store.Quota{Records: held + 2}))
	token := s.token(partner)
	first, _ := s.createQualified(token, "QUOTA-1")
	s.createQualified(token, "QUOTA-2")
	before := s.adminQualified(partner)

	r := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/qualified", token: token, body: qualifiedBody("QUOTA-3")})
	p := wantProblem(t, r, http.StatusInsufficientStorage, sandbox.ProblemTypeQuotaExceeded)
	if p.Detail == "" {
		t.Errorf("the quota problem says nothing of what to do")
	}
	r = s.do(request{method: http.MethodPost, path: "/api/v1/referrals/", token: token, body: referralBody("TRIAL-CARDIO-001")})
	wantProblem(t, r, http.StatusInsufficientStorage, sandbox.ProblemTypeQuotaExceeded)

	after := s.adminQualified(partner)
	if len(after) != len(before) {
		t.Errorf("%d qualified referrals stored after the refusals, %d before", len(after), len(before))
	}
	if _, ok := after["QUOTA-3"]; ok {
		t.Errorf("the refused submission was stored")
	}
	for id, q := range before {
		if got := after[id]; got.SubmittedAt != q.SubmittedAt || got.Status != q.Status || got.AuditTrailTotal != q.AuditTrailTotal {
			t.Errorf("%s changed by the refusals: %+v, was %+v", id, got, q)
		}
	}
	r = s.do(request{method: http.MethodGet, path: "/api/v1/referrals/qualified/QUOTA-1", token: token})
	if r.Status != http.StatusOK {
		t.Errorf("reading a stored record at the records quota: %d %s", r.Status, r.Body)
	}
	var got referrals.QualifiedReferral
	r.decode(t, &got)
	if got.Patient != first.Patient || got.SubmittedAt != first.SubmittedAt {
		t.Errorf("the stored record reads %+v, was stored as %+v", got, first)
	}

	// The other partner's quota is its own.
	s.createQualified(s.token(partner2), "QUOTA-OTHER")

	// A reset of the client frees its quota.
	if r := s.admin(http.MethodPost, "/__sandbox/reset", map[string]string{"clientId": partner}); r.Status != http.StatusOK {
		t.Fatalf("reset the client: %d %s", r.Status, r.Body)
	}
	s.createQualified(token, "QUOTA-3")
	s.createQualified(token, "QUOTA-4")
}

// TestQuotaBytesRefusesViews: audit entries count in bytes, so once a
// client's bytes are used up, a read that would record a view is 507 too,
// and records nothing; the admin data listing, which records no view,
// still shows every record intact.
func TestQuotaBytesRefusesViews(t *testing.T) {
	// The fixtures' bytes vary by backend; the quota leaves room for a few
	// records and views beyond them.
	s := newSandbox(t, withQuota(t, store.Quota{Bytes: 64 << 10}))
	token := s.token(partner)
	created := 0
	for i := 0; ; i++ {
		r := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/qualified", token: token, body: qualifiedBody(fmt.Sprintf("BYTES-%d", i))})
		if r.Status == http.StatusInsufficientStorage {
			wantProblem(t, r, http.StatusInsufficientStorage, sandbox.ProblemTypeQuotaExceeded)
			break
		}
		if r.Status != http.StatusCreated {
			t.Fatalf("submission %d: %d %s", i, r.Status, r.Body)
		}
		if created++; created > 400 {
			t.Fatalf("%d submissions stored under a quota of 64 KiB", created)
		}
	}
	if created == 0 {
		t.Fatal("no submission fit: the test would prove nothing about views")
	}
	t.Logf("%d submissions fit", created)
	// Views fill what room is left, then are refused.
	for i := 0; ; i++ {
		r := s.do(request{method: http.MethodGet, path: "/api/v1/referrals/qualified/BYTES-0", token: token})
		if r.Status == http.StatusInsufficientStorage {
			wantProblem(t, r, http.StatusInsufficientStorage, sandbox.ProblemTypeQuotaExceeded)
			break
		}
		if r.Status != http.StatusOK || i > 100 {
			t.Fatalf("view %d: %d %s", i, r.Status, r.Body)
		}
	}
	before := s.adminQualified(partner)
	r := s.do(request{method: http.MethodGet, path: "/api/v1/referrals/qualified", token: token})
	wantProblem(t, r, http.StatusInsufficientStorage, sandbox.ProblemTypeQuotaExceeded)
	r = s.do(request{method: http.MethodGet, path: "/api/v1/referrals/qualified/BYTES-0", token: token})
	wantProblem(t, r, http.StatusInsufficientStorage, sandbox.ProblemTypeQuotaExceeded)
	after := s.adminQualified(partner)
	for i := range created {
		id := fmt.Sprintf("BYTES-%d", i)
		b, a := before[id], after[id]
		if a.ExternalSourceID != id || a.AuditTrailTotal != b.AuditTrailTotal {
			t.Errorf("%s after the refused reads: %d audit entries, %d before (stored: %v)", id, a.AuditTrailTotal, b.AuditTrailTotal, a.ExternalSourceID == id)
		}
	}
}
