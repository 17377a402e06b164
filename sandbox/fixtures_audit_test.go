package sandbox_test

import (
	"net/http"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// Custom fixtures may write audit times in any RFC 3339 form; they are
// served in the documented one (six fraction digits, UTC, Z), as
// submittedAt is.
func TestCustomFixtureAuditTimesAreNormalised(t *testing.T) {
	set := defaultFixtures(t)
	idx := -1
	for i, q := range set.QualifiedReferrals {
		if q.ClientID == partner && q.ExternalSourceID == fixtureSourceID {
			idx = i
		}
	}
	if idx < 0 {
		t.Fatalf("no fixture %s of %s", fixtureSourceID, partner)
	}
	set.QualifiedReferrals[idx].AuditTrail = []referrals.AuditEntry{
		{At: "2025-01-03T10:00:00.5Z", Action: "submitted", Actor: partner},
		{At: "2025-01-03T12:30:00+02:00", Action: "status-changed", Actor: "sandbox", FromStatus: "received", ToStatus: "reviewing"},
	}
	dir := t.TempDir()
	if err := fixtures.WriteDir(set, dir); err != nil {
		t.Fatal(err)
	}
	loaded, err := fixtures.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := newSandbox(t, func(c *sandboxConfig) { c.Fixtures = loaded })

	// The contract checker holds the answer to the Timestamp schema.
	r := s.do(request{path: "/api/v1/referrals/qualified/" + fixtureSourceID, token: s.token(partner)})
	if r.Status != http.StatusOK {
		t.Fatalf("GET: %d %s", r.Status, r.Body)
	}
	var got referrals.QualifiedReferral
	r.decode(t, &got)
	want := []string{"2025-01-03T10:00:00.500000Z", "2025-01-03T10:30:00.000000Z"}
	if len(got.AuditTrail) < 2 || got.AuditTrail[0].At != want[0] || got.AuditTrail[1].At != want[1] {
		t.Errorf("audit trail %+v, want the fixture's times as %v", got.AuditTrail, want)
	}
}
