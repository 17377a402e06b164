// Package clientstest is the conformance suite of idp.ClientStore: the
// memory, record-store and Redis stores keep runtime clients alike. It is
// not a stable API.
package clientstest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// Run runs the suite; open returns an empty store for one subtest.
func Run(t *testing.T, open func(t *testing.T) idp.ClientStore) {
	t.Run("PutListDelete", func(t *testing.T) { testPutListDelete(t, open(t)) })
	t.Run("EveryFieldKept", func(t *testing.T) { testEveryFieldKept(t, open(t)) })
}

// Client is a runtime client as the registry stores one.
func Client(id string) referrals.Client {
	created := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	return referrals.Client{
		ClientID: id, Roles: []string{"Referrals.Read"}, Resources: []string{"api://referrals-sandbox"},
		Runtime: true, CreatedAt: created, ExpiresAt: created.Add(time.Hour), Instance: "0123456789abcdef",
		Secrets: []referrals.Secret{{ID: "s1", Hint: "abc", SHA256: "00ff", CreatedAt: created}},
	}
}

func ids(t *testing.T, st idp.ClientStore) []string {
	t.Helper()
	list, err := st.RuntimeClients(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(list))
	for _, c := range list {
		out = append(out, c.ClientID)
	}
	slices.Sort(out)
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func testPutListDelete(t *testing.T, st idp.ClientStore) {
	ctx := context.Background()
	if got := ids(t, st); len(got) != 0 {
		t.Fatalf("a new store holds %v", got)
	}
	must(t, st.PutClient(ctx, Client("ci-a")))
	must(t, st.PutClient(ctx, Client("ci:b"))) // a colon is not a separator
	if got := ids(t, st); !slices.Equal(got, []string{"ci-a", "ci:b"}) {
		t.Fatalf("stored %v", got)
	}
	a := Client("ci-a")
	a.Secrets = append(a.Secrets, referrals.Secret{ID: "s2", SHA256: "11ee"})
	must(t, st.PutClient(ctx, a)) // replaces
	list, err := st.RuntimeClients(ctx)
	must(t, err)
	for _, c := range list {
		if c.ClientID == "ci-a" && len(c.Secrets) != 2 {
			t.Errorf("replaced client has %d secrets, want 2", len(c.Secrets))
		}
	}
	must(t, st.DeleteClient(ctx, "ci-a"))
	must(t, st.DeleteClient(ctx, "ci-a")) // twice is fine
	if got := ids(t, st); !slices.Equal(got, []string{"ci:b"}) {
		t.Errorf("after delete: %v", got)
	}
	if err := st.PutClient(ctx, referrals.Client{}); err == nil {
		t.Error("a client without an id was stored")
	}
}

// testEveryFieldKept: what the registry judges tokens by (instance,
// expiry, secrets' digests) comes back exactly.
func testEveryFieldKept(t *testing.T, st idp.ClientStore) {
	want := Client("ci-full")
	limit, burst := 2.5, 7
	want.RateLimit, want.RateBurst, want.Description, want.TokenLifetimeSeconds = &limit, &burst, "a job", 600
	must(t, st.PutClient(context.Background(), want))
	list, err := st.RuntimeClients(context.Background())
	must(t, err)
	if len(list) != 1 {
		t.Fatalf("%d clients", len(list))
	}
	got := list[0]
	if got.Instance != want.Instance || !got.ExpiresAt.Equal(want.ExpiresAt) || !got.CreatedAt.Equal(want.CreatedAt) ||
		got.Secrets[0].SHA256 != "00ff" || *got.RateLimit != limit || *got.RateBurst != burst ||
		got.Description != want.Description || got.TokenLifetimeSeconds != 600 || !got.Runtime ||
		!slices.Equal(got.Roles, want.Roles) || !slices.Equal(got.Resources, want.Resources) {
		t.Errorf("stored %+v\nread back %+v", want, got)
	}
}
