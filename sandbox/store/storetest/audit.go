package storetest

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// trail returns the stored audit trail, read without recording a view.
func trail(t *testing.T, s store.Store, client, id string) []referrals.AuditEntry {
	t.Helper()
	q, err := s.GetQualified(context.Background(), client, id, nil)
	must(t, err)
	return q.AuditTrail
}

func testAuditOnGet(t *testing.T, s store.Store) {
	q := qualified("alice", "Q-1", at(1))
	must(t, s.CreateQualified(context.Background(), q))
	want := q.AuditTrail
	for _, rid := range []string{"req-1", "req-2"} {
		v := view(rid)
		got, err := s.GetQualified(context.Background(), "alice", "Q-1", v)
		must(t, err)
		want = append(want, *v)
		if !reflect.DeepEqual(got.AuditTrail, want) {
			t.Errorf("returned trail %+v, want %+v", got.AuditTrail, want)
		}
		if stored := trail(t, s, "alice", "Q-1"); !reflect.DeepEqual(stored, want) {
			t.Errorf("stored trail %+v, want %+v", stored, want)
		}
	}
	// Another client's view neither records anything nor reveals the record.
	_, err := s.GetQualified(context.Background(), "bob", "Q-1", view("req-bob"))
	wantErr(t, "bob's view", err, store.ErrNotFound)
	if stored := trail(t, s, "alice", "Q-1"); len(stored) != len(want) {
		t.Errorf("bob's view changed alice's trail: %+v", stored)
	}
}

func testAuditOnList(t *testing.T, s store.Store) {
	for i := range 3 {
		must(t, s.CreateQualified(context.Background(), qualified("alice", fmt.Sprintf("Q-%d", i), at(i))))
	}
	must(t, s.CreateQualified(context.Background(), qualified("bob", "Q-0", at(0))))

	page, cursor, err := s.ListQualified(context.Background(), "alice", store.Page{Limit: 2}, view("req-1"))
	must(t, err)
	if len(page) != 2 || cursor == "" {
		t.Fatalf("first page: %d records, cursor %q; want 2 and a cursor", len(page), cursor)
	}
	// Newest first: were returned, Q-0 only peeked at, if at all.
	wantViews := map[string][]string{"Q-2": {"req-1"}, "Q-1": {"req-1"}, "Q-0": nil}
	for _, q := range page {
		if got := viewIDs(q.AuditTrail); !reflect.DeepEqual(got, wantViews[q.ExternalSourceID]) {
			t.Errorf("returned %s with views %v, want %v", q.ExternalSourceID, got, wantViews[q.ExternalSourceID])
		}
	}
	checkViews(t, s, "alice", wantViews)

	// A bad cursor records nothing.
	_, _, err = s.ListQualified(context.Background(), "alice", store.Page{Limit: 2, Cursor: "bad"}, view("req-bad"))
	wantErr(t, "bad cursor", err, store.ErrBadCursor)
	checkViews(t, s, "alice", wantViews)

	last, next, err := s.ListQualified(context.Background(), "alice", store.Page{Limit: 2, Cursor: cursor}, view("req-2"))
	must(t, err)
	if len(last) != 1 || next != "" {
		t.Fatalf("last page: %d records, cursor %q; want 1 and none", len(last), next)
	}
	wantViews["Q-0"] = []string{"req-2"}
	checkViews(t, s, "alice", wantViews)
	checkViews(t, s, "bob", map[string][]string{"Q-0": nil})
}

// viewIDs lists the request ids of the view entries of a trail.
func viewIDs(trail []referrals.AuditEntry) []string {
	var ids []string
	for _, e := range trail {
		if e.Action == referrals.AuditViewed {
			ids = append(ids, e.RequestID)
		}
	}
	return ids
}

func checkViews(t *testing.T, s store.Store, client string, want map[string][]string) {
	t.Helper()
	for id, w := range want {
		stored := trail(t, s, client, id)
		if got := viewIDs(stored); !reflect.DeepEqual(got, w) {
			t.Errorf("%s's %s stored with views %v, want %v", client, id, got, w)
		}
		if len(stored) == 0 || stored[0].Action != referrals.AuditSubmitted {
			t.Errorf("%s's %s lost its submitted entry: %+v", client, id, stored)
		}
	}
}
