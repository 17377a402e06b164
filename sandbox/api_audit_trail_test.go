package sandbox_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// TestAPI_QualifiedAuditTrailBounded: however often a record is read, it
// answers its newest store.TrailInRecord audit entries, ending with this
// read, and auditTrailTotal; the audit-trail address pages through all of
// them, oldest first, without adding any.
func TestAPI_QualifiedAuditTrailBounded(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	token := s.token(partner2)
	created, _ := s.createQualified(token, "audit-bounded")
	if created.AuditTrailTotal != 1 {
		t.Errorf("created record: auditTrailTotal %d, want 1", created.AuditTrailTotal)
	}
	const reads = 2*store.TrailInRecord + 5
	var readIDs []string
	var last referrals.QualifiedReferral
	for range reads {
		r := s.do(request{path: "/api/v1/referrals/qualified/audit-bounded", token: token})
		if r.Status != http.StatusOK {
			t.Fatalf("GET: %d %s", r.Status, r.Body)
		}
		readIDs = append(readIDs, r.Header.Get("X-Request-Id"))
		r.decode(t, &last)
	}
	if len(last.AuditTrail) != store.TrailInRecord || last.AuditTrailTotal != reads+1 {
		t.Fatalf("after %d reads: %d entries, auditTrailTotal %d; want %d and %d", reads, len(last.AuditTrail), last.AuditTrailTotal, store.TrailInRecord, reads+1)
	}
	if e := last.AuditTrail[store.TrailInRecord-1]; e.Action != referrals.AuditViewed || e.RequestID != readIDs[reads-1] {
		t.Errorf("the record's last entry is %+v, want this read (%s)", e, readIDs[reads-1])
	}

	trail := apiList{path: "/api/v1/referrals/qualified/audit-bounded/audit-trail", items: "auditTrail", id: "requestId"}
	var walked []string
	query, pages := "limit="+fmt.Sprint(store.TrailInRecord), 0
	for ; ; pages++ {
		if pages > reads {
			t.Fatal("the trail's pages do not end")
		}
		p := s.fetchPage(trail, token, query)
		walked = append(walked, p.ids...)
		if p.nextCursor == nil {
			break
		}
		query = "limit=" + fmt.Sprint(store.TrailInRecord) + "&cursor=" + url.QueryEscape(*p.nextCursor)
	}
	want := append([]string{created.AuditTrail[0].RequestID}, readIDs...)
	if fmt.Sprint(walked) != fmt.Sprint(want) || pages != 2 {
		t.Errorf("walked %d entries in %d next links, want the submission and the %d reads in order in 2", len(walked), pages, reads)
	}
	var again referrals.QualifiedReferral
	s.do(request{path: "/api/v1/referrals/qualified/audit-bounded", token: token}).decode(t, &again)
	if again.AuditTrailTotal != reads+2 {
		t.Errorf("auditTrailTotal %d after one more read, want %d: paging the trail must add nothing", again.AuditTrailTotal, reads+2)
	}

	for _, tc := range []struct {
		name, token, path string
		status            int
		field             string
	}{
		{"another partner's record", s.token(partner), trail.path, http.StatusNotFound, ""},
		{"no such record", token, "/api/v1/referrals/qualified/nothing-here/audit-trail", http.StatusNotFound, ""},
		{"bad cursor", token, trail.path + "?cursor=not-a-cursor", http.StatusBadRequest, "cursor"},
		{"limit too large", token, trail.path + "?limit=501", http.StatusBadRequest, "limit"},
	} {
		r := s.do(request{path: tc.path, token: tc.token, invalid: tc.status == http.StatusBadRequest})
		if r.Status != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, r.Status, r.Body, tc.status)
			continue
		}
		if p := r.problem(t); tc.field != "" && (len(p.Errors) != 1 || p.Errors[0].Field != tc.field) {
			t.Errorf("%s: errors %+v, want one naming %s", tc.name, p.Errors, tc.field)
		}
	}
	if r := s.do(request{path: trail.path, token: s.token(noroles)}); r.Status != http.StatusForbidden {
		t.Errorf("a client without QualifiedReferrals.Read: %d, want 403", r.Status)
	}
}
