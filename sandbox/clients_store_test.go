package sandbox_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/idp/clientstest"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/backend"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// TestRecordStoreClients runs the client store conformance suite on the
// record store a sandbox that runs alone keeps its runtime clients in.
func TestRecordStoreClients(t *testing.T) {
	clientstest.Run(t, func(t *testing.T) idp.ClientStore {
		st, err := store.Open(store.MemoryPath)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return backend.RecordStoreClients(st)
	})
}

// TestRuntimeClientsCarriedOverFromTheRecordStore: runtime clients an
// earlier release kept in the Redis record store are moved to the shared
// client store at start, with their secrets, and a client deleted then
// does not come back at the next start.
func TestRuntimeClientsCarriedOverFromTheRecordStore(t *testing.T) {
	srv := redistest.Start(t)
	legacy, err := store.OpenRedis(srv.NewClient(t), store.WithRedisPrefix("referrals-sandbox:"))
	if err != nil {
		t.Fatal(err)
	}
	kept := clientstest.Client("ci-kept")
	kept.Instance, kept.ExpiresAt = "", time.Time{} // as an earlier release stored it, without a ttl
	if err := legacy.PutClient(context.Background(), kept); err != nil {
		t.Fatal(err)
	}
	a := newSandbox(t, useRedis(srv.NewClient(t)), useRedisStore(t, srv.Addr, "referrals-sandbox:"))
	if r := a.admin(http.MethodGet, "/__sandbox/clients/ci-kept", nil); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"hint":"abc"`) {
		t.Fatalf("a client kept by an earlier release: %d %s", r.Status, r.Body)
	}
	if r := a.admin(http.MethodDelete, "/__sandbox/clients/ci-kept", nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	b := newSandbox(t, useRedis(srv.NewClient(t)), useRedisStore(t, srv.Addr, "referrals-sandbox:"))
	if r := b.admin(http.MethodGet, "/__sandbox/clients/ci-kept", nil); r.Status != http.StatusNotFound {
		t.Errorf("the deleted client after another start: %d %s", r.Status, r.Body)
	}
}
