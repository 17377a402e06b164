package store_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
	"github.com/tidwall/buntdb"
)

// TestListReferralsJSON: the records a listing writes through are, byte
// for byte, what encoding each ListReferrals record gives, on the first
// listing (verified), the second (written through), after an update, and
// for a record stored in another form (keys in another order, a field the
// API does not have, an HTML character escaped differently), which is
// encoded again rather than written through.
func TestListReferralsJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.db")
	s := mustOpen(t, path)
	const client = "partner"
	for _, r := range []fixtures.Referral{
		referral(client, "a", "2026-01-01T00:00:00Z"),
		referral(client, "b", "2026-01-02T00:00:00Z"),
		referral(client, "c", "2026-01-03T00:00:00Z"),
	} {
		r.Notes = "<b>&</b>"
		if err := s.CreateReferral(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Rewrite "b" in another form that decodes to the same referral.
	db, err := buntdb.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *buntdb.Tx) error {
		const key = "r:b:partner"
		value, err := tx.Get(key)
		if err != nil {
			return err
		}
		line, _, _ := strings.Cut(value, "\n")
		other := `{"notes":"\u003cb>&</b>","outcomesId":"b","trialId":"TRIAL-001","clientId":"partner",` +
			`"status":"received","submittedAt":"2026-01-02T00:00:00.000000Z","patient":{},"extra":1}`
		_, _, err = tx.Set(key, line+"\n"+other, nil)
		return err
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}

	s = mustOpen(t, path)
	t.Cleanup(func() { _ = s.Close() })
	check := func(when string) {
		t.Helper()
		want, wantNext, err := s.ListReferrals(client, store.Page{Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		got, next, err := s.ListReferralsJSON(client, store.Page{Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if next != wantNext || len(got) != len(want) {
			t.Fatalf("%s: %d records, next %q; want %d, %q", when, len(got), next, len(want), wantNext)
		}
		for i := range want {
			b, err := json.Marshal(want[i])
			if err != nil {
				t.Fatal(err)
			}
			if string(got[i]) != string(b) {
				t.Errorf("%s: record %d is\n%s\nwant\n%s", when, i, got[i], b)
			}
		}
	}
	check("first listing")
	check("second listing")
	if _, err := s.UpdateReferral(client, "c", func(r *fixtures.Referral) error {
		r.Status = fixtures.StatusEnrolled
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	check("after an update")
}
