package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/buntdb"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// awkwardReferrals are referrals whose identifiers and fields exercise
// every escaping the stored form meets: the store's own (%, :, control
// characters), JSON's (quotes, backslashes, HTML characters, U+2028,
// invalid UTF-8 in a field) and none at all.
func awkwardReferrals() []referrals.Referral {
	var out []referrals.Referral
	for i, ids := range [][2]string{
		{"partner", "plain-1"},
		{"part:ner", "id:with:colons"},
		{"50%", "100%25"},
		{`quo"te`, `back\slash`},
		{"<b>&amp;</b>", "line\nbreak\ttab\x7f"},
		{"ünïcode", "sep\u2028arator"},
		{"{x", "~y"},
	} {
		r := referral(ids[0], ids[1], fmt.Sprintf("2026-01-0%dT10:00:00.5+02:00", i+1))
		r.TrialID = `TRIAL "` + ids[1] + `" <&>`
		r.Status = `st\atus` + ids[0]
		r.Notes = "notes " + ids[1] + " \xff"
		r.Submission = json.RawMessage(`{"a":[1,2,{"b":"c"}]}`)
		// Patients whole, without some optional fields, and none.
		switch i % 3 {
		case 0:
			r.Patient = referrals.Patient{FirstName: `A"da` + ids[0], LastName: `Love\lace`, DateOfBirth: "1815-12-10",
				Gender: "female", Email: "<ada>@example.test", Phone: "+44 20", PostalCode: "W1 & 2"}
		case 1:
			r.Patient = referrals.Patient{FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10", Gender: "female",
				Phone: "+44 20"}
		}
		if i == 3 {
			r.Notes, r.Submission = "", nil
		}
		out = append(out, r)
	}
	// Same client and time: the listing orders them by id.
	out = append(out, referral("partner", "plain-0", "2026-01-01T07:00:00.5Z"), referral("partner", "plain-10", "2026-01-01T07:00:00.5Z"))
	return out
}

// TestStoredReferralsReadBackExactly: whatever its identifiers hold, a
// stored referral reads back as it was created (submittedAt canonical),
// singly, by the admin lookup, in its client's listing and written through
// by AppendReferralsJSON byte for byte as encoding it gives; across a
// reopen of the file too.
func TestStoredReferralsReadBackExactly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.db")
	s := mustOpen(t, path)
	want := map[string]referrals.Referral{}
	for _, r := range awkwardReferrals() {
		noErr(t, s.CreateReferral(context.Background(), r))
		at, err := store.CanonicalTimestamp(r.SubmittedAt)
		noErr(t, err)
		r.SubmittedAt = at
		// What JSON keeps of it: invalid UTF-8 becomes U+FFFD.
		js, err := json.Marshal(r)
		noErr(t, err)
		r = referrals.Referral{}
		noErr(t, json.Unmarshal(js, &r))
		want[r.ClientID+"\x00"+r.OutcomesID] = r
	}
	check := func(when string) {
		t.Helper()
		for _, r := range want {
			got, err := s.GetReferral(context.Background(), r.ClientID, r.OutcomesID)
			if err != nil || !reflect.DeepEqual(got, r) {
				t.Errorf("%s: GetReferral(%q, %q) = %+v, %v; want %+v", when, r.ClientID, r.OutcomesID, got, err, r)
			}
			found, err := s.FindReferral(context.Background(), r.OutcomesID)
			if err != nil || !reflect.DeepEqual(found, r) {
				t.Errorf("%s: FindReferral(%q) = %+v, %v; want %+v", when, r.OutcomesID, found, err, r)
			}
			list, _, err := s.ListReferrals(context.Background(), r.ClientID, store.Page{})
			noErr(t, err)
			wantJSON, err := json.Marshal(list)
			noErr(t, err)
			for pass := range 2 { // verified, then written through
				got, _, err := s.AppendReferralsJSON(context.Background(), nil, r.ClientID, store.Page{})
				noErr(t, err)
				if "["+string(got)+"]" != string(wantJSON) {
					t.Errorf("%s, pass %d: AppendReferralsJSON of %q\n[%s]\nwant\n%s", when, pass, r.ClientID, got, wantJSON)
				}
			}
		}
		list, _, err := s.ListReferrals(context.Background(), "partner", store.Page{})
		noErr(t, err)
		var ids []string
		for _, r := range list {
			ids = append(ids, r.OutcomesID)
		}
		if strings.Join(ids, ",") != "plain-1,plain-10,plain-0" {
			t.Errorf("%s: partner's listing %v, want plain-1,plain-10,plain-0 (newest first, then by id)", when, ids)
		}
	}
	check("stored")
	noErr(t, s.Close())
	// Stored without what the sort line holds: the JSON part of each value
	// is the compact form, not the whole record.
	for key, value := range storedValues(t, path) {
		_, record, _ := strings.Cut(value, "\n")
		if !strings.HasPrefix(record, "~") || strings.Contains(record, `"outcomesId"`) ||
			strings.Contains(record, `"clientId"`) || strings.Contains(record, `"submittedAt"`) {
			t.Errorf("stored %q as %q: want the compact form", key, value)
		}
	}
	s = mustOpen(t, path)
	t.Cleanup(func() { _ = s.Close() })
	check("reopened")
}

// storedValues reads every value of the data file at path by key.
func storedValues(t *testing.T, path string) map[string]string {
	t.Helper()
	db, err := buntdb.Open(path)
	noErr(t, err)
	defer db.Close()
	out := map[string]string{}
	noErr(t, db.View(func(tx *buntdb.Tx) error {
		return tx.Ascend("", func(k, v string) bool {
			out[k] = v
			return true
		})
	}))
	return out
}

// TestFileOfTheOlderFormOpens: a data file written before stored referrals
// left out what their sort line holds (each value the sort line and the
// whole JSON) opens with every record as it was: read singly, listed in
// order with cursors, among records written since in the newer form, and
// updated.
func TestFileOfTheOlderFormOpens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.db")
	db, err := buntdb.Open(path)
	noErr(t, err)
	old := []referrals.Referral{
		referral("alice", "OLD-1", "2025-10-13T09:00:01.000000Z"),
		referral("alice", "OLD-3", "2025-10-13T09:00:03.000000Z"),
		referral("alice", "OLD-5", "2025-10-13T09:00:05.000000Z"),
		referral("a:b", "x%y", "2025-10-13T09:00:05.000000Z"),
	}
	noErr(t, db.Update(func(tx *buntdb.Tx) error {
		for _, r := range old {
			js, err := json.Marshal(r)
			if err != nil {
				return err
			}
			// The form the store wrote until this change.
			key := "r:" + escapeID(r.OutcomesID) + ":" + escapeID(r.ClientID)
			value := escapeID(r.ClientID) + ":" + r.SubmittedAt + ":" + escapeID(r.OutcomesID) + "\n" + string(js)
			if _, _, err := tx.Set(key, value, nil); err != nil {
				return err
			}
		}
		return nil
	}))
	noErr(t, db.Close())

	s := mustOpen(t, path)
	t.Cleanup(func() { _ = s.Close() })
	for _, r := range old {
		got, err := s.GetReferral(context.Background(), r.ClientID, r.OutcomesID)
		if err != nil || !reflect.DeepEqual(got, r) {
			t.Errorf("GetReferral(%q, %q) = %+v, %v; want %+v", r.ClientID, r.OutcomesID, got, err, r)
		}
	}
	noErr(t, s.CreateReferral(context.Background(), referral("alice", "NEW-2", "2025-10-13T09:00:02Z")))
	noErr(t, s.CreateReferral(context.Background(), referral("alice", "NEW-4", "2025-10-13T09:00:05Z")))
	updated, err := s.UpdateReferral(context.Background(), "alice", "OLD-3", func(r *referrals.Referral) error {
		r.Status = referrals.StatusEnrolled
		return nil
	})
	noErr(t, err)
	if got, err := s.GetReferral(context.Background(), "alice", "OLD-3"); err != nil || !reflect.DeepEqual(got, updated) || got.Status != referrals.StatusEnrolled {
		t.Errorf("after the update: %+v, %v; want %+v", got, err, updated)
	}
	var ids []string
	for cursor := ""; ; {
		page, next, err := s.ListReferrals(context.Background(), "alice", store.Page{Limit: 2, Cursor: cursor})
		noErr(t, err)
		for _, r := range page {
			ids = append(ids, r.OutcomesID)
		}
		if cursor = next; cursor == "" {
			break
		}
	}
	if got, want := strings.Join(ids, ","), "OLD-5,NEW-4,OLD-3,NEW-2,OLD-1"; got != want {
		t.Errorf("alice's listing in pages of 2: %s, want %s", got, want)
	}
	if clients, err := s.Clients(context.Background()); err != nil || strings.Join(clients, ",") != "a:b,alice" {
		t.Errorf("Clients() = %v, %v; want [a:b alice]", clients, err)
	}
	noErr(t, s.Close())
	// What was not written since keeps the older form; what was, the newer.
	for key, value := range storedValues(t, path) {
		_, record, _ := strings.Cut(value, "\n")
		compact := strings.HasPrefix(record, "~")
		if wantCompact := strings.Contains(key, "NEW-") || strings.Contains(key, "OLD-3"); compact != wantCompact {
			t.Errorf("%q stored as %q: compact %v, want %v", key, value, compact, wantCompact)
		}
	}
}

// escapeID is the store's escaping of identifiers in keys and sort lines,
// for the ones this file's older-form records use.
func escapeID(s string) string {
	return strings.NewReplacer("%", "%25", ":", "%3A").Replace(s)
}
