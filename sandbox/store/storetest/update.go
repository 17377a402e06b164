package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

func testUpdate(t *testing.T, s store.Store) {
	must(t, s.CreateReferral(context.Background(), referral("alice", "R-1", at(1))))
	must(t, s.CreateQualified(context.Background(), qualified("alice", "Q-1", at(1))))

	got, err := s.UpdateReferral(context.Background(), "alice", "R-1", func(r *referrals.Referral) error {
		r.Status = referrals.StatusReviewing
		r.Notes = "checked"
		return nil
	})
	must(t, err)
	if got.Status != referrals.StatusReviewing || got.Notes != "checked" {
		t.Errorf("UpdateReferral returned %+v", got)
	}
	if stored, err := s.GetReferral(context.Background(), "alice", "R-1"); err != nil || !reflect.DeepEqual(stored, got) {
		t.Errorf("stored %+v (%v), want %+v", stored, err, got)
	}

	refusal := errors.New("refused by the caller")
	tests := []struct {
		name    string
		fn      func(*referrals.Referral) error
		wantErr error
	}{
		{"fn error", func(r *referrals.Referral) error { r.Status = referrals.StatusRejected; return refusal }, refusal},
		{"client changed", func(r *referrals.Referral) error { r.ClientID = "bob"; return nil }, store.ErrInvalid},
		{"id changed", func(r *referrals.Referral) error { r.OutcomesID = "R-2"; return nil }, store.ErrInvalid},
		{"bad timestamp", func(r *referrals.Referral) error { r.SubmittedAt = "soon"; return nil }, store.ErrInvalid},
	}
	for _, tc := range tests {
		_, err := s.UpdateReferral(context.Background(), "alice", "R-1", tc.fn)
		wantErr(t, tc.name, err, tc.wantErr)
		if stored, err := s.GetReferral(context.Background(), "alice", "R-1"); err != nil || !reflect.DeepEqual(stored, got) {
			t.Errorf("%s: stored %+v (%v), want it unchanged: %+v", tc.name, stored, err, got)
		}
	}
	if _, err := s.GetReferral(context.Background(), "bob", "R-1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a refused client change still created bob's record: %v", err)
	}

	// Moving submittedAt is allowed and moves the record in the listing.
	must(t, s.CreateReferral(context.Background(), referral("alice", "R-2", at(2))))
	_, err = s.UpdateReferral(context.Background(), "alice", "R-1", func(r *referrals.Referral) error { r.SubmittedAt = at(3); return nil })
	must(t, err)
	list, _, err := s.ListReferrals(context.Background(), "alice", store.Page{})
	must(t, err)
	if len(list) != 2 || list[0].OutcomesID != "R-1" {
		t.Errorf("after moving R-1 to the newest time, listing is %+v", list)
	}

	_, err = s.UpdateQualified(context.Background(), "alice", "Q-1", func(q *referrals.QualifiedReferral) error {
		q.Status = referrals.StatusAccepted
		return refusal
	})
	wantErr(t, "qualified fn error", err, refusal)
	q, err := s.UpdateQualified(context.Background(), "alice", "Q-1", func(q *referrals.QualifiedReferral) error {
		q.AuditTrail = append(q.AuditTrail, referrals.AuditEntry{At: at(9), Action: referrals.AuditStatusChanged, Actor: "qa",
			FromStatus: q.Status, ToStatus: referrals.StatusAccepted})
		q.Status = referrals.StatusAccepted
		return nil
	})
	must(t, err)
	if stored := trail(t, s, "alice", "Q-1"); len(stored) != 2 || stored[1].ToStatus != referrals.StatusAccepted || q.Status != referrals.StatusAccepted {
		t.Errorf("qualified update stored trail %+v, returned status %q", stored, q.Status)
	}
}

// testConcurrentUpdate: concurrent read-modify-writes of one record must
// not lose each other's changes.
func testConcurrentUpdate(t *testing.T, s store.Store) {
	const n = 20
	must(t, s.CreateQualified(context.Background(), qualified("alice", "Q-1", at(1))))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, err := s.UpdateQualified(context.Background(), "alice", "Q-1", func(q *referrals.QualifiedReferral) error {
				q.AuditTrail = append(q.AuditTrail, referrals.AuditEntry{At: at(i), Action: referrals.AuditViewed, Actor: "qa", RequestID: fmt.Sprint(i)})
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	close(start)
	wg.Wait()
	ids := map[string]bool{}
	for _, id := range viewIDs(trail(t, s, "alice", "Q-1")) {
		ids[id] = true
	}
	if len(ids) != n {
		t.Errorf("%d distinct updates survived, want %d", len(ids), n)
	}
}
