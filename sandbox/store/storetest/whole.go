package storetest

import (
	"context"
	"reflect"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

func checkClients(t *testing.T, s store.Store, want []string) {
	t.Helper()
	got, err := s.Clients(context.Background())
	must(t, err)
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Clients() = %q, want %q", got, want)
	}
}

func checkEmpty(t *testing.T, s store.Store, want bool) {
	t.Helper()
	got, err := s.Empty(context.Background())
	must(t, err)
	if got != want {
		t.Errorf("Empty() = %t, want %t", got, want)
	}
}

func testLoadResetEmptyClients(t *testing.T, s store.Store) {
	checkEmpty(t, s, true)
	checkClients(t, s, nil)
	must(t, s.Load(context.Background(), nil))
	checkEmpty(t, s, true)

	first := &fixtures.Set{
		Referrals:          []referrals.Referral{referral("beta", "R-1", at(1)), referral("alpha", "R-2", at(2))},
		QualifiedReferrals: []referrals.QualifiedReferral{qualified("gamma", "Q-1", at(3))},
	}
	must(t, s.Load(context.Background(), first))
	checkEmpty(t, s, false)
	checkClients(t, s, []string{"alpha", "beta", "gamma"}) // gamma has only a qualified referral
	if _, err := s.GetReferral(context.Background(), "alpha", "R-2"); err != nil {
		t.Errorf("loaded referral: %v", err)
	}
	wantErr(t, "loading the same set again", s.Load(context.Background(), first), store.ErrConflict)

	second := &fixtures.Set{QualifiedReferrals: []referrals.QualifiedReferral{qualified("delta", "Q-9", at(4))}}
	must(t, s.Reset(context.Background(), second))
	checkClients(t, s, []string{"delta"})
	if _, err := s.GetReferral(context.Background(), "beta", "R-1"); err == nil {
		t.Error("Reset kept an old referral")
	}
	if _, err := s.GetQualified(context.Background(), "delta", "Q-9", nil); err != nil {
		t.Errorf("Reset did not load the new set: %v", err)
	}

	// A set that cannot load leaves the store as it was.
	dup := &fixtures.Set{Referrals: []referrals.Referral{referral("eps", "R-1", at(1)), referral("eps", "R-1", at(2))}}
	wantErr(t, "Reset with a duplicate", s.Reset(context.Background(), dup), store.ErrConflict)
	checkClients(t, s, []string{"delta"})

	must(t, s.Reset(context.Background(), nil))
	checkEmpty(t, s, true)
	checkClients(t, s, nil)
}

func testLoadAtomic(t *testing.T, s store.Store) {
	must(t, s.CreateReferral(context.Background(), referral("alpha", "R-1", at(1))))
	tests := []struct {
		name string
		set  *fixtures.Set
		want error
	}{
		{"conflict with a stored record", &fixtures.Set{
			Referrals: []referrals.Referral{referral("alpha", "R-new", at(2)), referral("alpha", "R-1", at(3))},
		}, store.ErrConflict},
		{"invalid qualified referral after a good one", &fixtures.Set{
			Referrals:          []referrals.Referral{referral("alpha", "R-new", at(2))},
			QualifiedReferrals: []referrals.QualifiedReferral{qualified("alpha", "Q-1", "not a time")},
		}, store.ErrInvalid},
	}
	for _, tc := range tests {
		wantErr(t, tc.name, s.Load(context.Background(), tc.set), tc.want)
		if _, err := s.GetReferral(context.Background(), "alpha", "R-new"); err == nil {
			t.Errorf("%s: part of the failed load is stored", tc.name)
		}
	}
	// A conflict in one client stores nothing of another, even one that
	// would be written first.
	other := &fixtures.Set{Referrals: []referrals.Referral{referral("aardvark", "R-new", at(2)), referral("alpha", "R-1", at(3))}}
	wantErr(t, "conflict in another client", s.Load(context.Background(), other), store.ErrConflict)
	if _, err := s.GetReferral(context.Background(), "aardvark", "R-new"); err == nil {
		t.Error("conflict in another client: the other client's record is stored")
	}
	checkClients(t, s, []string{"alpha"})
}
