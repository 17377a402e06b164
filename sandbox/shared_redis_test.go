package sandbox_test

import (
	"net/http"
	"reflect"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// useRedisStore makes the sandbox keep its records in the Redis at addr under
// prefix, as --redis does.
func useRedisStore(t *testing.T, addr, prefix string) sandboxOption {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	st, err := store.OpenRedis(c, store.WithRedisPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	return useStore(st)
}

// TestAPI_SharedRedisStore is the shared mode's promise for records: two
// sandboxes on one Redis serve the same records, so a referral submitted
// through A is read and listed through B, a view through B is in the
// audit trail A shows, and the fixtures are seeded once. A third sandbox
// under another key prefix shares nothing with them.
func TestAPI_SharedRedisStore(t *testing.T) {
	srv := redistest.Start(t)
	a := newSandbox(t, useRedisStore(t, srv.Addr, "team:"))
	b := newSandbox(t, useRedisStore(t, srv.Addr, "team:"))
	other := newSandbox(t, useRedisStore(t, srv.Addr, "other-team:"))
	tokenA, tokenB := a.token(partner), b.token(partner)

	ref, created := a.createReferral(tokenA, referralBody("NCT05550001"))
	var got referrals.Referral
	r := b.do(request{path: created.Header.Get("Location"), token: tokenB})
	r.decode(t, &got)
	if r.Status != http.StatusOK || !reflect.DeepEqual(got, ref) {
		t.Fatalf("B reads A's referral: %d %+v, want 200 %+v", r.Status, got, ref)
	}
	listed, _ := b.collect(referralsList, tokenB, "500")
	if !slices.Contains(listed, ref.OutcomesID) || len(listed) != fixtureReferrals+1 {
		t.Errorf("B lists %d referrals %v, want the %d fixtures (seeded once) and A's %s", len(listed), listed, fixtureReferrals, ref.OutcomesID)
	}

	a.createQualified(tokenA, "shared-1")
	if r := b.do(request{path: "/api/v1/referrals/qualified/shared-1", token: tokenB}); r.Status != http.StatusOK {
		t.Fatalf("B reads A's qualified referral: %d %s", r.Status, r.Body)
	}
	var q referrals.QualifiedReferral
	a.do(request{path: "/api/v1/referrals/qualified/shared-1", token: tokenA}).decode(t, &q)
	if q.AuditTrailTotal != 3 { // submitted, viewed through B, viewed through A
		t.Errorf("A shows an audit trail of %d entries %+v, want 3 with B's view", q.AuditTrailTotal, q.AuditTrail)
	}

	if r := other.do(request{path: created.Header.Get("Location"), token: other.token(partner)}); r.Status != http.StatusNotFound {
		t.Errorf("a sandbox under another prefix reads the referral: %d %s", r.Status, r.Body)
	}
}
