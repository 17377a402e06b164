package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

func runtimeClient(id string) referrals.Client {
	created := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	return referrals.Client{
		ClientID: id, Roles: []string{"Referrals.Read"}, Runtime: true, CreatedAt: created,
		ExpiresAt: created.Add(time.Hour),
		Secrets:   []referrals.Secret{{ID: "s1", Hint: "abc", SHA256: "00ff", CreatedAt: created}},
	}
}

func runtimeClientIDs(t *testing.T, s store.Store) map[string]referrals.Client {
	t.Helper()
	list, err := s.RuntimeClients(context.Background())
	must(t, err)
	out := map[string]referrals.Client{}
	for _, c := range list {
		out[c.ClientID] = c
	}
	return out
}

func testRuntimeClients(t *testing.T, s store.Store) {
	if got := runtimeClientIDs(t, s); len(got) != 0 {
		t.Fatalf("new store has runtime clients %v", got)
	}
	a, b := runtimeClient("ci-a"), runtimeClient("ci:b") // ids with a colon are escaped
	must(t, s.PutClient(context.Background(), a))
	must(t, s.PutClient(context.Background(), b))
	checkEmpty(t, s, false) // a store holding runtime clients is not seeded again
	got := runtimeClientIDs(t, s)
	if len(got) != 2 || !got["ci-a"].ExpiresAt.Equal(a.ExpiresAt) || got["ci:b"].Secrets[0].SHA256 != "00ff" {
		t.Fatalf("stored clients %+v", got)
	}
	a.Secrets = append(a.Secrets, referrals.Secret{ID: "s2", SHA256: "11ee"})
	must(t, s.PutClient(context.Background(), a)) // replace
	if got := runtimeClientIDs(t, s)["ci-a"]; len(got.Secrets) != 2 {
		t.Errorf("replaced client has %d secrets, want 2", len(got.Secrets))
	}
	must(t, s.DeleteClient(context.Background(), "ci-a"))
	must(t, s.DeleteClient(context.Background(), "ci-a")) // deleting twice is fine
	if got := runtimeClientIDs(t, s); len(got) != 1 || got["ci:b"].ClientID == "" {
		t.Errorf("after delete: %v", got)
	}
	wantErr(t, "a client without id", s.PutClient(context.Background(), referrals.Client{}), store.ErrInvalid)
	must(t, s.Reset(context.Background(), nil))
	if got := runtimeClientIDs(t, s); len(got) != 0 {
		t.Errorf("Reset kept runtime clients %v", got)
	}
}

func testResetClient(t *testing.T, s store.Store) {
	set := &fixtures.Set{
		Referrals:          []referrals.Referral{referral("alpha", "R-1", at(1)), referral("beta", "R-2", at(2))},
		QualifiedReferrals: []referrals.QualifiedReferral{qualified("alpha", "Q-1", at(3)), qualified("beta", "Q-2", at(4))},
	}
	must(t, s.Load(context.Background(), set))
	must(t, s.CreateReferral(context.Background(), referral("alpha", "R-new", at(5))))
	must(t, s.CreateQualified(context.Background(), qualified("alpha", "Q-new", at(6))))
	must(t, s.CreateReferral(context.Background(), referral("beta", "R-beta-new", at(7))))

	for i := range 3 { // reads add to Q-1's audit trail, kept apart from the record
		_, err := s.GetQualified(context.Background(), "alpha", "Q-1", view(fmt.Sprint("req-", i)))
		must(t, err)
	}
	must(t, s.ResetClient(context.Background(), "alpha", set))
	if back, err := s.GetQualified(context.Background(), "alpha", "Q-1", nil); err != nil || back.AuditTrailTotal != len(qualified("alpha", "Q-1", at(3)).AuditTrail) {
		t.Errorf("Q-1 after ResetClient: %v, trail of %d, want its fixture trail only", err, back.AuditTrailTotal)
	}
	for _, gone := range []string{"R-new"} {
		if _, err := s.GetReferral(context.Background(), "alpha", gone); err == nil {
			t.Errorf("ResetClient kept alpha's %s", gone)
		}
	}
	if _, err := s.GetQualified(context.Background(), "alpha", "Q-new", nil); err == nil {
		t.Error("ResetClient kept alpha's new qualified referral")
	}
	if _, err := s.GetReferral(context.Background(), "alpha", "R-1"); err != nil {
		t.Errorf("ResetClient did not bring back alpha's fixture: %v", err)
	}
	if _, err := s.GetQualified(context.Background(), "alpha", "Q-1", nil); err != nil {
		t.Errorf("ResetClient did not bring back alpha's qualified fixture: %v", err)
	}
	for _, id := range []string{"R-2", "R-beta-new"} {
		if _, err := s.GetReferral(context.Background(), "beta", id); err != nil {
			t.Errorf("ResetClient(alpha) touched beta's %s: %v", id, err)
		}
	}
	must(t, s.ResetClient(context.Background(), "alpha", nil))
	if got := listAll(t, kinds()[0], s, "alpha", 10); len(got) != 0 {
		t.Errorf("ResetClient(nil) left alpha %d referrals", len(got))
	}
	checkClients(t, s, []string{"beta"})
}
