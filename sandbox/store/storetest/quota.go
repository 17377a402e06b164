package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// RunQuota runs the quota cases of the conformance suite. open is called
// once per subtest and must return a new, empty store that enforces q (for
// example store.WithQuota); RunQuota closes it when the subtest ends.
func RunQuota(t *testing.T, open func(t *testing.T, q store.Quota) store.Store) {
	t.Helper()
	tests := []struct {
		name  string
		quota store.Quota
		run   func(t *testing.T, s store.Store, q store.Quota)
	}{
		{"Records", store.Quota{Records: 3}, testQuotaRecords},
		{"Bytes", store.Quota{Bytes: 4096}, testQuotaBytes},
		{"LoadNotRefused", store.Quota{Records: 2}, testQuotaLoad},
		{"Concurrent", store.Quota{Records: 10}, testQuotaConcurrent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t, tc.quota)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tc.run(t, s, tc.quota)
		})
	}
}

// testQuotaRecords: a client holds at most Records records of both kinds
// together; the next create of either kind is ErrQuota and stores
// nothing, the records stored are intact and still change, another client
// has its own quota, and a client reset frees it.
func testQuotaRecords(t *testing.T, s store.Store, q store.Quota) {
	must(t, s.CreateReferral(context.Background(), referral("alice", "R-1", at(1))))
	must(t, s.CreateQualified(context.Background(), qualified("alice", "Q-1", at(2))))
	must(t, s.CreateQualified(context.Background(), qualified("alice", "Q-2", at(3))))
	wantErr(t, "referral beyond the quota", s.CreateReferral(context.Background(), referral("alice", "R-2", at(4))), store.ErrQuota)
	wantErr(t, "qualified referral beyond the quota", s.CreateQualified(context.Background(), qualified("alice", "Q-3", at(5))), store.ErrQuota)
	_, err := s.GetReferral(context.Background(), "alice", "R-2")
	wantErr(t, "the refused referral", err, store.ErrNotFound)
	_, err = s.GetQualified(context.Background(), "alice", "Q-3", nil)
	wantErr(t, "the refused qualified referral", err, store.ErrNotFound)

	// What is stored stays readable and changeable: no update adds a record.
	for _, k := range kinds() {
		if n := len(listAll(t, k, s, "alice", 10)); k.name == "referral" && n != 1 || k.name == "qualified" && n != 2 {
			t.Errorf("alice holds %d %s records after the refusals", n, k.name)
		}
	}
	_, err = s.UpdateReferral(context.Background(), "alice", "R-1", func(r *referrals.Referral) error { r.Status = referrals.StatusReviewing; return nil })
	must(t, err)
	got, err := s.GetQualified(context.Background(), "alice", "Q-1", view("after-quota"))
	must(t, err)
	if got.AuditTrailTotal != 2 {
		t.Errorf("Q-1 has %d audit entries after a view, want 2", got.AuditTrailTotal)
	}

	// Another client's quota is its own.
	for i := range q.Records {
		must(t, s.CreateReferral(context.Background(), referral("bob", fmt.Sprint("B-", i), at(10+i))))
	}

	// A client reset frees alice's quota.
	must(t, s.ResetClient(context.Background(), "alice", nil))
	for i := range q.Records {
		must(t, s.CreateQualified(context.Background(), qualified("alice", fmt.Sprint("N-", i), at(20+i))))
	}
	wantErr(t, "beyond the quota after the reset", s.CreateQualified(context.Background(), qualified("alice", "N-more", at(30))), store.ErrQuota)
}

// testQuotaBytes: records and audit entries count in bytes. Creates are
// refused once the next would pass the quota; so are views and updates
// that append to a trail, each without writing anything; a client reset
// frees the room.
func testQuotaBytes(t *testing.T, s store.Store, q store.Quota) {
	js, err := json.Marshal(qualified("alice", "Q-000", at(0)))
	must(t, err)
	// Each record costs at least its JSON, so at most this many fit.
	most := int(q.Bytes) / len(js)
	created := 0
	for i := 0; ; i++ {
		err := s.CreateQualified(context.Background(), qualified("alice", fmt.Sprintf("Q-%03d", i), at(i)))
		if err != nil {
			wantErr(t, "create beyond the byte quota", err, store.ErrQuota)
			break
		}
		created++
		if created > most {
			t.Fatalf("%d records of %d bytes stored under a quota of %d bytes", created, len(js), q.Bytes)
		}
	}
	if created == 0 {
		t.Fatalf("no record of %d bytes fit a quota of %d bytes", len(js), q.Bytes)
	}
	_, err = s.GetQualified(context.Background(), "alice", fmt.Sprintf("Q-%03d", created), nil)
	wantErr(t, "the refused record", err, store.ErrNotFound)

	// Views append entries until they no longer fit; the refused view is
	// not in the trail.
	refused := false
	for i := 0; i < int(q.Bytes) && !refused; i++ {
		_, err := s.GetQualified(context.Background(), "alice", "Q-000", view(fmt.Sprint("v", i)))
		if err != nil {
			wantErr(t, "view beyond the byte quota", err, store.ErrQuota)
			refused = true
		}
	}
	if !refused {
		t.Fatalf("views were never refused under a quota of %d bytes", q.Bytes)
	}
	before, err := s.GetQualified(context.Background(), "alice", "Q-000", nil)
	must(t, err)
	_, _, err = s.ListQualified(context.Background(), "alice", store.Page{}, view("list"))
	wantErr(t, "listing with views beyond the byte quota", err, store.ErrQuota)
	_, err = s.UpdateQualified(context.Background(), "alice", "Q-000", func(r *referrals.QualifiedReferral) error {
		r.AuditTrail = append(r.AuditTrail, referrals.AuditEntry{At: at(99), Action: referrals.AuditStatusChanged, Actor: "qa",
			FromStatus: r.Status, ToStatus: referrals.StatusReviewing})
		r.Status = referrals.StatusReviewing
		return nil
	})
	wantErr(t, "update beyond the byte quota", err, store.ErrQuota)
	after, err := s.GetQualified(context.Background(), "alice", "Q-000", nil)
	must(t, err)
	if after.AuditTrailTotal != before.AuditTrailTotal || after.Status != before.Status {
		t.Errorf("refused writes changed the record: %d entries, status %q; before %d, %q",
			after.AuditTrailTotal, after.Status, before.AuditTrailTotal, before.Status)
	}
	for i := range created {
		if _, err := s.GetQualified(context.Background(), "alice", fmt.Sprintf("Q-%03d", i), nil); err != nil {
			t.Errorf("stored record %d after the refusals: %v", i, err)
		}
	}

	// Reading without a view records nothing and is never refused; a
	// client reset frees the room.
	_, _, err = s.ListQualified(context.Background(), "alice", store.Page{}, nil)
	must(t, err)
	must(t, s.ResetClient(context.Background(), "alice", nil))
	must(t, s.CreateQualified(context.Background(), qualified("alice", "Q-new", at(0))))
	_, err = s.GetQualified(context.Background(), "alice", "Q-new", view("fresh"))
	must(t, err)
}

// testQuotaLoad: loading fixtures is never refused, but what it loads
// counts: a client loaded beyond its quota can create nothing more.
func testQuotaLoad(t *testing.T, s store.Store, q store.Quota) {
	set := &fixtures.Set{}
	for i := range q.Records + 2 {
		set.Referrals = append(set.Referrals, referral("alice", fmt.Sprint("R-", i), at(i)))
	}
	must(t, s.Load(context.Background(), set))
	wantErr(t, "create after a load beyond the quota", s.CreateReferral(context.Background(), referral("alice", "R-new", at(50))), store.ErrQuota)
	must(t, s.ResetClient(context.Background(), "alice", set))
	wantErr(t, "create after a client reset to fixtures beyond the quota", s.CreateReferral(context.Background(), referral("alice", "R-new", at(50))), store.ErrQuota)
	must(t, s.Reset(context.Background(), nil))
	must(t, s.CreateReferral(context.Background(), referral("alice", "R-new", at(50))))
}

// testQuotaConcurrent: the quota holds under concurrent creates of one
// client: exactly Records succeed, the rest are ErrQuota.
func testQuotaConcurrent(t *testing.T, s store.Store, q store.Quota) {
	const writers = 30
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			if i%2 == 0 {
				errs[i] = s.CreateReferral(context.Background(), referral("alice", fmt.Sprint("R-", i), at(i)))
			} else {
				errs[i] = s.CreateQualified(context.Background(), qualified("alice", fmt.Sprint("Q-", i), at(i)))
			}
		})
	}
	wg.Wait()
	ok := 0
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
		default:
			wantErr(t, fmt.Sprint("create ", i), err, store.ErrQuota)
		}
	}
	stored := 0
	for _, k := range kinds() {
		stored += len(listAll(t, k, s, "alice", 100))
	}
	if ok != q.Records || stored != q.Records {
		t.Errorf("%d creates succeeded and %d records are stored, want %d (the quota)", ok, stored, q.Records)
	}
}
