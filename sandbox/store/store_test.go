package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/buntdb"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store/storetest"
)

func TestConformanceMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := store.Open(store.MemoryPath)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestConformanceFile(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := store.Open(filepath.Join(t.TempDir(), "data.db"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func referral(client, id, at string) referrals.Referral {
	return referrals.Referral{TrialID: "TRIAL-001", OutcomesID: id, ClientID: client,
		Status: referrals.StatusReceived, SubmittedAt: at}
}

func qualified(client, id, at string) referrals.QualifiedReferral {
	return referrals.QualifiedReferral{ExternalSourceID: id, ClientID: client, Status: referrals.StatusReceived,
		SubmittedAt: at, AuditTrail: []referrals.AuditEntry{{At: at, Action: referrals.AuditSubmitted, Actor: client}}}
}

func mustOpen(t *testing.T, path string, opts ...store.Option) *store.BuntStore {
	t.Helper()
	s, err := store.Open(path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestFileReopen: what was written, including updates and audit views, is
// there after the file is closed and opened again, and the indexes rebuilt
// from it list in the same order.
func TestFileReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.db")
	s := mustOpen(t, path)
	for _, r := range []referrals.Referral{
		referral("alice", "R-1", "2025-10-13T09:00:01.000000Z"),
		referral("alice", "R-2", "2025-10-13T09:00:03.000000Z"),
		referral("alice:x", "R-1", "2025-10-13T09:00:02.000000Z"),
	} {
		if err := s.CreateReferral(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateQualified(context.Background(), qualified("bob", "Q:1", "2025-10-13T09:00:04.000000Z")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateReferral(context.Background(), "alice", "R-1", func(r *referrals.Referral) error { r.Status = referrals.StatusEnrolled; return nil }); err != nil {
		t.Fatal(err)
	}
	viewed := referrals.AuditEntry{At: "2025-10-13T10:00:00.000000Z", Action: referrals.AuditViewed, Actor: "bob", RequestID: "req-1"}
	if _, err := s.GetQualified(context.Background(), "bob", "Q:1", &viewed); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = mustOpen(t, path)
	defer func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}()
	list, next, err := s.ListReferrals(context.Background(), "alice", store.Page{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || next != "" || list[0].OutcomesID != "R-2" || list[1].OutcomesID != "R-1" {
		t.Fatalf("after reopening, alice lists %+v (cursor %q)", list, next)
	}
	if list[1].Status != referrals.StatusEnrolled {
		t.Errorf("update lost: status %q", list[1].Status)
	}
	q, err := s.GetQualified(context.Background(), "bob", "Q:1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(q.AuditTrail) != 2 || q.AuditTrail[1] != viewed {
		t.Errorf("audit view lost: %+v", q.AuditTrail)
	}
	clients, err := s.Clients(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"alice", "alice:x", "bob"}; len(clients) != 3 || clients[0] != want[0] || clients[1] != want[1] || clients[2] != want[2] {
		t.Errorf("Clients() = %q, want %q", clients, want)
	}
}

// TestFileTornTail: a write cut short by a crash leaves an incomplete last
// command in the file. Opening drops it, keeps every complete record (since
// a record is one key, no half-written record can appear) and logs the cut,
// which a clean open does not.
func TestFileTornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.db")
	var logs bytes.Buffer
	s := mustOpen(t, path, store.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err := s.CreateReferral(context.Background(), referral("alice", "R-1", "2025-10-13T09:00:01.000000Z")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, path, store.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if logs.Len() != 0 {
		t.Fatalf("opening a whole file logged %q", logs.String())
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The start of a SET whose value never arrived.
	torn := "*3\r\n$3\r\nset\r\n$9\r\nr:alice:R\r\n$40\r\n{\"outcomesId\""
	if _, err := f.WriteString(torn); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	s = mustOpen(t, path, store.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	defer func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}()
	if got := logs.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, "last write was incomplete") ||
		!strings.Contains(got, "file="+path) || !strings.Contains(got, fmt.Sprintf("bytes_dropped=%d", len(torn))) {
		t.Errorf("the cut tail was not logged with the file and the bytes dropped: %q", got)
	}
	list, _, err := s.ListReferrals(context.Background(), "alice", store.Page{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].OutcomesID != "R-1" {
		t.Errorf("after a torn write, alice lists %+v, want only R-1", list)
	}
	if err := s.CreateReferral(context.Background(), referral("alice", "R-2", "2025-10-13T09:00:02.000000Z")); err != nil {
		t.Errorf("writing after the torn tail was dropped: %v", err)
	}
}

func TestOpenRejects(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte("this is not a buntdb file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		opts []store.Option
		want error
	}{
		{"empty path", "", nil, store.ErrInvalid},
		{"unknown sync policy", filepath.Join(dir, "a.db"), []store.Option{store.WithSyncPolicy(buntdb.SyncPolicy(7))}, store.ErrInvalid},
		{"negative shrink size", filepath.Join(dir, "b.db"), []store.Option{store.WithAutoShrink(100, -1)}, store.ErrInvalid},
		{"not a store file", garbage, nil, buntdb.ErrInvalid},
	}
	for _, tc := range tests {
		s, err := store.Open(tc.path, tc.opts...)
		if err == nil {
			_ = s.Close()
		}
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestOpenWithOptions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.db")
	s := mustOpen(t, path, store.WithSyncPolicy(buntdb.EverySecond), store.WithoutAutoShrink())
	if err := s.CreateReferral(context.Background(), referral("alice", "R-1", "2025-10-13T09:00:01Z")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, path, store.WithAutoShrink(50, 1<<20))
	defer s.Close()
	if _, err := s.GetReferral(context.Background(), "alice", "R-1"); err != nil {
		t.Error(err)
	}
}

// TestLoadDefaultFixtures: the fixtures embedded in the binary load into an
// empty store.
func TestLoadDefaultFixtures(t *testing.T) {
	set, err := fixtures.Default()
	if err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, store.MemoryPath)
	defer s.Close()
	if err := s.Load(context.Background(), set); err != nil {
		t.Fatal(err)
	}
	empty, err := s.Empty(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := len(set.Referrals)+len(set.QualifiedReferrals) == 0; empty != want {
		t.Errorf("Empty() = %t after loading %d referrals and %d qualified referrals", empty, len(set.Referrals), len(set.QualifiedReferrals))
	}
}
