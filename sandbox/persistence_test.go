package sandbox_test

import (
	"net/http"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// TestAPI_DataFileSurvivesRestart is `--data FILE` across a restart: a
// second sandbox over the file the first one wrote serves what was
// submitted to the first, and does not seed the fixtures a second time.
func TestAPI_DataFileSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.db")

	// First run: submit one record of each kind, then list and read them,
	// so the qualified one's audit trail has entries written after creation.
	firstStore, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	first := newSandbox(t, useStore(firstStore))
	token := first.token(partner)
	ref, created := first.createReferral(token, referralBody("NCT05550001"))
	q, _ := first.createQualified(token, "kept-1")
	referralsBefore, _ := first.collect(referralsList, token, "500")
	qualifiedBefore, _ := first.collect(qualifiedList, token, "500") // a view of each record
	var viewed referrals.QualifiedReferral
	first.do(request{path: "/api/v1/referrals/qualified/kept-1", token: token}).decode(t, &viewed)
	if len(referralsBefore) != fixtureReferrals+1 || len(qualifiedBefore) != fixtureQualified+1 {
		t.Fatalf("first run lists %d referrals and %d qualified, want %d and %d", len(referralsBefore), len(qualifiedBefore), fixtureReferrals+1, fixtureQualified+1)
	}
	// Stop the first run. The harness closes the store again at cleanup,
	// which buntdb answers with an error the harness ignores.
	if err := firstStore.Close(); err != nil {
		t.Fatalf("close the first run's store: %v", err)
	}

	secondStore, err := store.Open(path)
	if err != nil {
		t.Fatalf("reopen %s: %v", path, err)
	}
	second := newSandbox(t, useStore(secondStore))
	token = second.token(partner) // tokens name the issuer's address, which changed

	t.Run("the referral", func(t *testing.T) {
		r := second.do(request{path: created.Header.Get("Location"), token: token})
		var got referrals.Referral
		r.decode(t, &got)
		if r.Status != http.StatusOK || !reflect.DeepEqual(got, ref) {
			t.Errorf("after restart: %d %+v, want 200 %+v", r.Status, got, ref)
		}
	})
	t.Run("the qualified referral with its audit trail", func(t *testing.T) {
		r := second.do(request{path: "/api/v1/referrals/qualified/kept-1", token: token})
		var got referrals.QualifiedReferral
		r.decode(t, &got)
		if r.Status != http.StatusOK || got.SubmittedAt != q.SubmittedAt || got.Patient != q.Patient {
			t.Fatalf("after restart: %d %s, want 200 with the record %+v", r.Status, r.Body, q)
		}
		kept := len(viewed.AuditTrail) // submitted, viewed by the listing, viewed by the read
		if len(got.AuditTrail) != kept+1 || !slices.Equal(got.AuditTrail[:kept], viewed.AuditTrail) {
			t.Errorf("audit trail %+v, want the first run's %+v and this read", got.AuditTrail, viewed.AuditTrail)
		}
	})
	t.Run("the fixtures are not seeded again", func(t *testing.T) {
		referrals, _ := second.collect(referralsList, token, "500")
		qualified, _ := second.collect(qualifiedList, token, "500")
		if !slices.Equal(referrals, referralsBefore) || !slices.Equal(qualified, qualifiedBefore) {
			t.Errorf("after restart partner lists %d referrals and %d qualified, want the same %d and %d as before",
				len(referrals), len(qualified), len(referralsBefore), len(qualifiedBefore))
		}
	})
}
