package store_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/buntdb"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// TestAppendReferralsJSON: the records a listing writes through are, byte
// for byte, what encoding each ListReferrals record gives, page by page
// with cursors, on the first listing (verified), the second (written
// through), after an update, for a record stored in another form (keys in
// another order, a field the API does not have, an HTML character escaped
// differently), which is encoded again rather than written through, and
// with a record that no longer decodes, left out of both.
func TestAppendReferralsJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.db")
	s := mustOpen(t, path)
	const client = "partner"
	for _, r := range []referrals.Referral{
		referral(client, "a", "2026-01-01T00:00:00Z"),
		referral(client, "b", "2026-01-02T00:00:00Z"),
		referral(client, "c", "2026-01-03T00:00:00Z"),
		referral(client, "d", "2026-01-04T00:00:00Z"),
		referral(client, "e", "2026-01-05T00:00:00Z"),
	} {
		r.Notes = "<b>&</b>"
		if err := s.CreateReferral(context.Background(), r); err != nil {
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
		if _, _, err = tx.Set(key, line+"\n"+other, nil); err != nil {
			return err
		}
		// Damage "d".
		const damaged = "r:d:partner"
		if value, err = tx.Get(damaged); err != nil {
			return err
		}
		line, _, _ = strings.Cut(value, "\n")
		_, _, err = tx.Set(damaged, line+"\n"+`{"outcomesId":`, nil)
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
		for _, limit := range []int{1, 2, 3, 50} {
			pages, cursor := 0, ""
			for {
				page := store.Page{Limit: limit, Cursor: cursor}
				want, wantNext, err := s.ListReferrals(context.Background(), client, page)
				if err != nil {
					t.Fatal(err)
				}
				wantJSON, err := json.Marshal(want)
				if err != nil {
					t.Fatal(err)
				}
				got, next, err := s.AppendReferralsJSON(context.Background(), []byte("prefix["), client, page)
				if err != nil {
					t.Fatal(err)
				}
				if next != wantNext || string(got)+"]" != "prefix"+string(wantJSON) {
					t.Fatalf("%s, limit %d, page %d: next %q\n%s]\nwant next %q\nprefix%s", when, limit, pages, next, got, wantNext, wantJSON)
				}
				pages++
				if cursor = next; cursor == "" {
					break
				}
			}
			if limit == 1 && pages != 5 {
				t.Errorf("%s, limit 1: %d pages, want one per stored record (5; the damaged one's is empty)", when, pages)
			}
		}
	}
	check("first listing")
	check("second listing")
	if _, err := s.UpdateReferral(context.Background(), client, "c", func(r *referrals.Referral) error {
		r.Status = referrals.StatusEnrolled
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	check("after an update")
}
