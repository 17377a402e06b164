package idp_test

import (
	"context"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/idp/clientstest"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
)

func TestMemoryClients(t *testing.T) {
	clientstest.Run(t, func(*testing.T) idp.ClientStore { return idp.NewMemoryClients() })
}

func TestRedisClients(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.NewClient(t)
	n := 0
	clientstest.Run(t, func(*testing.T) idp.ClientStore {
		n++
		return idp.NewRedisClients(rdb, "test"+string(rune('a'+n))+":")
	})
}

// TestRedisClientsChangeAndAnnounceAtOnce: every change bumps the version
// replicas read, in the same step; with writes refused (maxmemory), a
// change fails whole, the version with it, and a delete too.
func TestRedisClientsChangeAndAnnounceAtOnce(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.NewClient(t)
	ctx := context.Background()
	st := idp.NewRedisClients(rdb, "p:")
	version := func() int64 {
		v, _ := rdb.Get(ctx, idp.RedisClientsVersionKey("p:")).Int64()
		return v
	}
	if err := st.PutClient(ctx, clientstest.Client("ci-a")); err != nil || version() != 1 {
		t.Fatalf("put: %v, version %d", err, version())
	}
	if err := st.DeleteClient(ctx, "ci-a"); err != nil || version() != 2 {
		t.Fatalf("delete: %v, version %d", err, version())
	}
	if err := st.PutClient(ctx, clientstest.Client("ci-b")); err != nil {
		t.Fatal(err)
	}
	redistest.RefuseWrites(t, rdb)
	if err := st.DeleteClient(ctx, "ci-b"); err == nil {
		t.Error("a delete with writes refused answered no error")
	}
	if err := st.PutClient(ctx, clientstest.Client("ci-c")); err == nil {
		t.Error("a put with writes refused answered no error")
	}
	list, err := st.RuntimeClients(ctx)
	if err != nil || len(list) != 1 || list[0].ClientID != "ci-b" || version() != 3 {
		t.Errorf("after refused changes: %v %v, version %d; want ci-b alone at version 3", list, err, version())
	}
}
