package storetest

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

func testCreateGet(t *testing.T, s store.Store) {
	// A timestamp with an offset and a short fraction is stored canonically.
	r := referral("alice", "R-1", "2025-10-13T14:00:00.5+02:00")
	must(t, s.CreateReferral(context.Background(), r))
	want := r
	want.SubmittedAt = "2025-10-13T12:00:00.500000Z"
	got, err := s.GetReferral(context.Background(), "alice", "R-1")
	must(t, err)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GetReferral = %+v, want %+v", got, want)
	}

	q := qualified("alice", "Q-1", at(5))
	must(t, s.CreateQualified(context.Background(), q))
	gotQ, err := s.GetQualified(context.Background(), "alice", "Q-1", nil)
	must(t, err)
	q.AuditTrailTotal = len(q.AuditTrail) // the store counts the trail
	if !reflect.DeepEqual(gotQ, q) {
		t.Errorf("GetQualified = %+v, want %+v", gotQ, q)
	}
}

func testNotFound(t *testing.T, s store.Store) {
	must(t, s.CreateReferral(context.Background(), referral("alice", "R-1", at(1))))
	must(t, s.CreateQualified(context.Background(), qualified("alice", "Q-1", at(1))))
	called := false
	tests := []struct {
		name string
		call func() error
	}{
		{"GetReferral", func() error { _, err := s.GetReferral(context.Background(), "alice", "R-2"); return err }},
		{"GetQualified", func() error { _, err := s.GetQualified(context.Background(), "alice", "Q-2", nil); return err }},
		{"GetQualified with view", func() error { _, err := s.GetQualified(context.Background(), "alice", "Q-2", view("x")); return err }},
		{"FindReferral", func() error { _, err := s.FindReferral(context.Background(), "R-2"); return err }},
		{"FindReferral of a qualified id", func() error { _, err := s.FindReferral(context.Background(), "Q-1"); return err }},
		{"GetReferral of a qualified id", func() error { _, err := s.GetReferral(context.Background(), "alice", "Q-1"); return err }},
		{"GetQualified of a referral id", func() error { _, err := s.GetQualified(context.Background(), "alice", "R-1", nil); return err }},
		{"UpdateReferral", func() error {
			_, err := s.UpdateReferral(context.Background(), "alice", "R-2", func(*referrals.Referral) error { called = true; return nil })
			return err
		}},
		{"UpdateQualified", func() error {
			_, err := s.UpdateQualified(context.Background(), "alice", "Q-2", func(*referrals.QualifiedReferral) error { called = true; return nil })
			return err
		}},
	}
	for _, tc := range tests {
		wantErr(t, tc.name, tc.call(), store.ErrNotFound)
	}
	if called {
		t.Error("update function called for a missing record")
	}
	if _, err := s.GetReferral(context.Background(), "alice", "R-1"); err != nil {
		t.Errorf("the stored referral is gone: %v", err)
	}
}

func testInvalid(t *testing.T, s store.Store) {
	tests := []struct {
		name string
		call func() error
	}{
		{"referral without client", func() error { return s.CreateReferral(context.Background(), referral("", "R-1", at(1))) }},
		{"referral without id", func() error { return s.CreateReferral(context.Background(), referral("alice", "", at(1))) }},
		{"referral with bad submittedAt", func() error { return s.CreateReferral(context.Background(), referral("alice", "R-1", "yesterday")) }},
		{"referral with date only", func() error { return s.CreateReferral(context.Background(), referral("alice", "R-1", "2025-10-13")) }},
		{"qualified without client", func() error { return s.CreateQualified(context.Background(), qualified("", "Q-1", at(1))) }},
		{"qualified without id", func() error { return s.CreateQualified(context.Background(), qualified("alice", "", at(1))) }},
		{"qualified with bad submittedAt", func() error { return s.CreateQualified(context.Background(), qualified("alice", "Q-1", "")) }},
		{"negative page limit", func() error {
			_, _, err := s.ListReferrals(context.Background(), "alice", store.Page{Limit: -1})
			return err
		}},
	}
	for _, tc := range tests {
		wantErr(t, tc.name, tc.call(), store.ErrInvalid)
	}
	empty, err := s.Empty(context.Background())
	must(t, err)
	if !empty {
		t.Error("an invalid record was stored")
	}
}

func testIsolation(t *testing.T, s store.Store) {
	for _, k := range kinds() {
		t.Run(k.name, func(t *testing.T) {
			must(t, k.create(s, "alice", "A-1", at(1)))
			must(t, k.create(s, "bob", "B-1", at(2)))
			pairs := []struct{ owner, other, id string }{
				{"alice", "bob", "A-1"},
				{"bob", "alice", "B-1"},
			}
			for _, p := range pairs {
				_, err := k.get(s, p.other, p.id)
				wantErr(t, p.other+" gets "+p.owner+"'s record", err, store.ErrNotFound)
				wantErr(t, p.other+" updates "+p.owner+"'s record", k.update(s, p.other, p.id, referrals.StatusRejected), store.ErrNotFound)
				list, _, err := k.list(s, p.other, store.Page{})
				must(t, err)
				for _, e := range list {
					if e.id == p.id || e.client != p.other {
						t.Errorf("%s's listing holds %+v", p.other, e)
					}
				}
				got, err := k.get(s, p.owner, p.id)
				must(t, err)
				if got.status != referrals.StatusReceived {
					t.Errorf("%s's record changed by %s's update: status %q", p.owner, p.other, got.status)
				}
			}
		})
	}
}

func testConflict(t *testing.T, s store.Store) {
	for _, k := range kinds() {
		t.Run(k.name, func(t *testing.T) {
			must(t, k.create(s, "alice", "X-1", at(1)))
			wantErr(t, "same client and id", k.create(s, "alice", "X-1", at(2)), store.ErrConflict)
			got, err := k.get(s, "alice", "X-1")
			must(t, err)
			if got.submittedAt != at(1) {
				t.Errorf("conflicting create overwrote the record: submittedAt %s", got.submittedAt)
			}
			if err := k.create(s, "bob", "X-1", at(3)); err != nil {
				t.Errorf("same id for another client: %v", err)
			}
		})
	}
	// The two kinds live apart: an id used by one is free in the other.
	if err := s.CreateReferral(context.Background(), referral("carol", "SAME", at(1))); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateQualified(context.Background(), qualified("carol", "SAME", at(1))); err != nil {
		t.Errorf("qualified referral with a referral's id: %v", err)
	}
}

func testConcurrentCreate(t *testing.T, s store.Store) {
	const n = 20
	for _, k := range kinds() {
		t.Run(k.name, func(t *testing.T) {
			errs := make([]error, n)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					// Each attempt carries its own timestamp so the winner
					// can be recognised.
					errs[i] = k.create(s, "alice", "SAME-ID", at(i))
				}()
			}
			close(start)
			wg.Wait()
			winner := -1
			for i, err := range errs {
				switch {
				case err == nil && winner >= 0:
					t.Errorf("attempts %d and %d both succeeded", winner, i)
				case err == nil:
					winner = i
				default:
					wantErr(t, fmt.Sprintf("attempt %d", i), err, store.ErrConflict)
				}
			}
			if winner < 0 {
				t.Fatal("no attempt succeeded")
			}
			got, err := k.get(s, "alice", "SAME-ID")
			must(t, err)
			if got.submittedAt != at(winner) {
				t.Errorf("stored submittedAt %s, the winner wrote %s", got.submittedAt, at(winner))
			}
		})
	}
}

func testFindReferral(t *testing.T, s store.Store) {
	must(t, s.CreateReferral(context.Background(), referral("alice", "R-A", at(1))))
	must(t, s.CreateReferral(context.Background(), referral("bob", "R-B", at(2))))
	for _, tc := range []struct{ id, client string }{{"R-A", "alice"}, {"R-B", "bob"}} {
		got, err := s.FindReferral(context.Background(), tc.id)
		must(t, err)
		if got.ClientID != tc.client || got.OutcomesID != tc.id {
			t.Errorf("FindReferral(%q) = client %q id %q, want client %q", tc.id, got.ClientID, got.OutcomesID, tc.client)
		}
	}
	// A prefix of an id is not the id.
	_, err := s.FindReferral(context.Background(), "R-")
	wantErr(t, "FindReferral of a prefix", err, store.ErrNotFound)
}
