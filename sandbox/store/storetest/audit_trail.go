package storetest

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// readsPastTheRecord is how many views the trail tests record: more than a
// record carries, and more than a few pages of the trail.
const readsPastTheRecord = 3*store.TrailInRecord + 7

// viewed records n views of alice's Q-1, with request ids req-1 to req-n,
// and returns the record the last read answered.
func viewed(t *testing.T, s store.Store, n int) referrals.QualifiedReferral {
	t.Helper()
	var last referrals.QualifiedReferral
	for i := 1; i <= n; i++ {
		var err error
		last, err = s.GetQualified(context.Background(), "alice", "Q-1", view(fmt.Sprintf("req-%d", i)))
		must(t, err)
	}
	return last
}

// testAuditTrailBounded: however often a record is read, it carries its
// newest store.TrailInRecord entries, oldest first, ending with this read,
// and counts them all; listing shows the same.
func testAuditTrailBounded(t *testing.T, s store.Store) {
	must(t, s.CreateQualified(context.Background(), qualified("alice", "Q-1", at(1))))
	last := viewed(t, s, readsPastTheRecord)
	wantIDs := make([]string, 0, store.TrailInRecord)
	for i := readsPastTheRecord - store.TrailInRecord + 1; i <= readsPastTheRecord; i++ {
		wantIDs = append(wantIDs, fmt.Sprintf("req-%d", i))
	}
	check := func(what string, q referrals.QualifiedReferral, total int) {
		t.Helper()
		if got := viewIDs(q.AuditTrail); !reflect.DeepEqual(got, wantIDs) || len(q.AuditTrail) != store.TrailInRecord {
			t.Errorf("%s: trail of %d entries with views %v, want the newest %d: %v", what, len(q.AuditTrail), got, store.TrailInRecord, wantIDs)
		}
		if q.AuditTrailTotal != total {
			t.Errorf("%s: auditTrailTotal %d, want %d", what, q.AuditTrailTotal, total)
		}
	}
	check("the last read", last, readsPastTheRecord+1)
	stored, err := s.GetQualified(context.Background(), "alice", "Q-1", nil)
	must(t, err)
	check("a read without a view", stored, readsPastTheRecord+1)
	page, _, err := s.ListQualified(context.Background(), "alice", store.Page{}, nil)
	must(t, err)
	if len(page) != 1 {
		t.Fatalf("listing has %d records, want 1", len(page))
	}
	check("the listing", page[0], readsPastTheRecord+1)
}

// testAuditTrailPaging: the whole trail pages oldest first, without a
// repeat or a gap, and reading it records nothing; a cursor works only for
// the trail it came from.
func testAuditTrailPaging(t *testing.T, s store.Store) {
	must(t, s.CreateQualified(context.Background(), qualified("alice", "Q-1", at(1))))
	must(t, s.CreateQualified(context.Background(), qualified("alice", "Q-2", at(2))))
	viewed(t, s, readsPastTheRecord)

	var all []referrals.AuditEntry
	cursor, pages := "", 0
	for {
		page, next, err := s.QualifiedAuditTrail(context.Background(), "alice", "Q-1", store.Page{Limit: store.TrailInRecord, Cursor: cursor})
		must(t, err)
		all = append(all, page...)
		pages++
		if next == "" {
			break
		}
		if pages > readsPastTheRecord {
			t.Fatal("the trail's pages do not end")
		}
		cursor = next
	}
	if len(all) != readsPastTheRecord+1 || all[0].Action != referrals.AuditSubmitted {
		t.Fatalf("paged %d entries starting %+v, want %d starting with the submission", len(all), all[0], readsPastTheRecord+1)
	}
	for i, e := range all[1:] {
		if want := fmt.Sprintf("req-%d", i+1); e.RequestID != want {
			t.Fatalf("entry %d has request id %q, want %q: pages repeat, skip or reorder", i+1, e.RequestID, want)
		}
	}
	if want := (readsPastTheRecord + store.TrailInRecord) / store.TrailInRecord; pages != want {
		t.Errorf("%d pages of %d, want %d", pages, store.TrailInRecord, want)
	}
	if q, err := s.GetQualified(context.Background(), "alice", "Q-1", nil); err != nil || q.AuditTrailTotal != readsPastTheRecord+1 {
		t.Errorf("reading the trail recorded something: total %d, err %v", q.AuditTrailTotal, err)
	}

	first, cursor, err := s.QualifiedAuditTrail(context.Background(), "alice", "Q-1", store.Page{Limit: 2})
	must(t, err)
	if len(first) != 2 || cursor == "" {
		t.Fatalf("first page of 2: %d entries, cursor %q", len(first), cursor)
	}
	_, _, err = s.QualifiedAuditTrail(context.Background(), "alice", "Q-2", store.Page{Limit: 2, Cursor: cursor})
	wantErr(t, "Q-1's cursor on Q-2", err, store.ErrBadCursor)
	_, _, err = s.QualifiedAuditTrail(context.Background(), "alice", "Q-1", store.Page{Cursor: "bad"})
	wantErr(t, "a bad cursor", err, store.ErrBadCursor)
	_, listCursor, err := s.ListQualified(context.Background(), "alice", store.Page{Limit: 1}, nil)
	must(t, err)
	_, _, err = s.QualifiedAuditTrail(context.Background(), "alice", "Q-1", store.Page{Cursor: listCursor})
	wantErr(t, "a listing's cursor", err, store.ErrBadCursor)
	_, _, err = s.QualifiedAuditTrail(context.Background(), "bob", "Q-1", store.Page{})
	wantErr(t, "another client's trail", err, store.ErrNotFound)
	_, _, err = s.QualifiedAuditTrail(context.Background(), "alice", "Q-1", store.Page{Limit: -1})
	wantErr(t, "a negative limit", err, store.ErrInvalid)
}

// testAuditAppendOnly: an update may append audit entries, which are then
// paged like the others, but not change or drop the ones it was given.
func testAuditAppendOnly(t *testing.T, s store.Store) {
	must(t, s.CreateQualified(context.Background(), qualified("alice", "Q-1", at(1))))
	viewed(t, s, 2)
	moved := referrals.AuditEntry{At: at(2000), Action: referrals.AuditStatusChanged, Actor: "admin", FromStatus: "received", ToStatus: "reviewing"}
	got, err := s.UpdateQualified(context.Background(), "alice", "Q-1", func(q *referrals.QualifiedReferral) error {
		q.Status = referrals.StatusReviewing
		q.AuditTrail = append(q.AuditTrail, moved)
		return nil
	})
	must(t, err)
	if got.Status != referrals.StatusReviewing || got.AuditTrailTotal != 4 || got.AuditTrail[len(got.AuditTrail)-1] != moved {
		t.Errorf("after the update: status %s, total %d, trail %+v; want reviewing, 4, ending with the move", got.Status, got.AuditTrailTotal, got.AuditTrail)
	}
	for name, edit := range map[string]func(q *referrals.QualifiedReferral){
		"changed": func(q *referrals.QualifiedReferral) { q.AuditTrail[0].Actor = "someone else" },
		"dropped": func(q *referrals.QualifiedReferral) { q.AuditTrail = q.AuditTrail[1:] },
	} {
		_, err := s.UpdateQualified(context.Background(), "alice", "Q-1", func(q *referrals.QualifiedReferral) error {
			q.Status = referrals.StatusAccepted
			edit(q)
			return nil
		})
		wantErr(t, "an update that "+name+" an audit entry", err, store.ErrInvalid)
	}
	all, _, err := s.QualifiedAuditTrail(context.Background(), "alice", "Q-1", store.Page{})
	must(t, err)
	if len(all) != 4 || all[0].Actor != "alice" || all[3] != moved {
		t.Errorf("stored trail %+v, want submitted, two views and the move, unchanged", all)
	}
	if q, err := s.GetQualified(context.Background(), "alice", "Q-1", nil); err != nil || q.Status != referrals.StatusReviewing {
		t.Errorf("a refused update changed the status to %s (err %v)", q.Status, err)
	}
}

// testAuditInOrder: entries appended by a view or an update are never
// earlier than the entry before them (a client's clock moved back between
// the two): such an entry takes the previous entry's time, so the trail,
// which lists entries in the order they were stored, never goes back in
// time. Fixture trails are stored as given.
func testAuditInOrder(t *testing.T, s store.Store) {
	must(t, s.CreateQualified(context.Background(), qualified("alice", "Q-1", at(100))))
	moved, err := s.UpdateQualified(context.Background(), "alice", "Q-1", func(q *referrals.QualifiedReferral) error {
		q.AuditTrail = append(q.AuditTrail, referrals.AuditEntry{At: at(50), Action: referrals.AuditStatusChanged, Actor: "admin",
			FromStatus: q.Status, ToStatus: referrals.StatusReviewing})
		q.Status = referrals.StatusReviewing
		return nil
	})
	must(t, err)
	if n := len(moved.AuditTrail); n != 2 || moved.AuditTrail[1].At != at(100) {
		t.Errorf("the update answers the trail %+v; want the status move second, at %s", moved.AuditTrail, at(100))
	}
	early := &referrals.AuditEntry{At: at(10), Action: referrals.AuditViewed, Actor: "viewer", RequestID: "early-get"}
	_, err = s.GetQualified(context.Background(), "alice", "Q-1", early)
	must(t, err)
	early.RequestID = "early-list"
	_, _, err = s.ListQualified(context.Background(), "alice", store.Page{}, early)
	must(t, err)
	later := &referrals.AuditEntry{At: at(200), Action: referrals.AuditViewed, Actor: "viewer", RequestID: "later"}
	_, err = s.GetQualified(context.Background(), "alice", "Q-1", later)
	must(t, err)

	trail, _, err := s.QualifiedAuditTrail(context.Background(), "alice", "Q-1", store.Page{})
	must(t, err)
	var got []string
	for _, e := range trail {
		got = append(got, e.Action+"@"+e.At)
	}
	want := []string{
		referrals.AuditSubmitted + "@" + at(100),
		referrals.AuditStatusChanged + "@" + at(100),
		referrals.AuditViewed + "@" + at(100),
		referrals.AuditViewed + "@" + at(100),
		referrals.AuditViewed + "@" + at(200),
	}
	if !slices.Equal(got, want) {
		t.Errorf("trail %v\nwant %v", got, want)
	}
}
