package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store/storetest"
)

// TestFileLockedWhileOpen: a data file open in one store cannot be opened
// by another (flock is per open file, so this holds within one process as
// across processes); the refusal names the file, the lock file and the
// holder's pid, and closing the first store frees the file.
func TestFileLockedWhileOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.db")
	first := mustOpen(t, path)
	second, err := store.Open(path)
	if err == nil {
		_ = second.Close()
		t.Fatal("a second store opened a data file that is already open")
	}
	msg := err.Error()
	if !errors.Is(err, store.ErrLocked) || !strings.Contains(msg, path+": in use by another process") ||
		!strings.Contains(msg, path+".lock") || !strings.Contains(msg, "process "+strconv.Itoa(os.Getpid())) {
		t.Errorf("second open: %v; want ErrLocked naming the file, its lock and this pid", err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again := mustOpen(t, path)
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestFileResetReplacesTheFile: Reset on a file leaves nothing of the old
// records after a reopen, writes after a Reset reach the new file (the store
// writes through a fresh handle, not the replaced file's), a set that does
// not load keeps the old records, and no reset file is left behind.
func TestFileResetReplacesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.db")
	s := mustOpen(t, path)
	noErr(t, s.CreateReferral(context.Background(), referral("alice", "OLD-1", "2025-10-13T09:00:01Z")))
	set := &fixtures.Set{
		Referrals:          []referrals.Referral{referral("bob", "NEW-1", "2025-10-13T09:00:02Z")},
		QualifiedReferrals: []referrals.QualifiedReferral{qualified("bob", "NEW-Q", "2025-10-13T09:00:03Z")},
	}
	noErr(t, s.Reset(context.Background(), set))
	noErr(t, s.CreateReferral(context.Background(), referral("carol", "AFTER-1", "2025-10-13T09:00:04Z")))
	bad := &fixtures.Set{Referrals: []referrals.Referral{
		referral("dave", "DUP", "2025-10-13T09:00:05Z"), referral("dave", "DUP", "2025-10-13T09:00:06Z"),
	}}
	if err := s.Reset(context.Background(), bad); !errors.Is(err, store.ErrConflict) {
		t.Errorf("Reset with a duplicate: %v, want ErrConflict", err)
	}
	noErr(t, s.Close())

	s = mustOpen(t, path)
	defer s.Close()
	clients, err := s.Clients(context.Background())
	noErr(t, err)
	if strings.Join(clients, ",") != "bob,carol" {
		t.Errorf("after reset, a write and a refused reset, reopened clients are %q, want bob,carol", clients)
	}
	if _, err := s.GetQualified(context.Background(), "bob", "NEW-Q", nil); err != nil {
		t.Errorf("the reset's qualified referral: %v", err)
	}
	if _, err := os.Stat(path + ".reset"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("reset file left behind: %v", err)
	}
}

// TestFileUnfinishedResetIgnored: a reset file a crash left before its
// rename is not the data: the store opens the old records, removes the
// file and logs it.
func TestFileUnfinishedResetIgnored(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.db")
	s := mustOpen(t, path)
	noErr(t, s.CreateReferral(context.Background(), referral("alice", "OLD-1", "2025-10-13T09:00:01Z")))
	noErr(t, s.Close())
	noErr(t, os.WriteFile(path+".reset", []byte("*1\r\n$7\r\nflushdb\r\n"), 0o600))

	var logs bytes.Buffer
	s = mustOpen(t, path, store.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	defer s.Close()
	if _, err := s.GetReferral(context.Background(), "alice", "OLD-1"); err != nil {
		t.Errorf("old record after an unfinished reset: %v", err)
	}
	if _, err := os.Stat(path + ".reset"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("unfinished reset file not removed: %v", err)
	}
	if !strings.Contains(logs.String(), "reset a crash interrupted") {
		t.Errorf("logs %q do not mention the interrupted reset", logs.String())
	}
}

// TestFileRecordThatNoLongerDecodes: one stored record whose JSON is
// damaged is left out of listings (of both kinds, with and without an audit
// view, across a page boundary, and of Clients) with its key logged once,
// while the records around it are answered; reading it directly is
// ErrCorrupt.
func TestFileRecordThatNoLongerDecodes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.db")
	s := mustOpen(t, path)
	for i, id := range []string{"R-1", "R-BAD", "R-3"} {
		at := "2025-10-13T09:00:0" + strconv.Itoa(i) + "Z"
		noErr(t, s.CreateReferral(context.Background(), referral("alice", id, at)))
		noErr(t, s.CreateQualified(context.Background(), qualified("alice", "Q"+id, at)))
	}
	noErr(t, s.CreateReferral(context.Background(), referral("zed", "Z-BAD", "2025-10-13T09:00:09Z")))
	noErr(t, s.Close())
	storetest.DamageRecords(t, path, "r:R-BAD:alice", "q:QR-BAD:alice", "r:Z-BAD:zed")

	var logs bytes.Buffer
	s = mustOpen(t, path, store.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	defer s.Close()
	listings := map[string]func(store.Page) ([]string, string, error){
		"referrals": func(p store.Page) ([]string, string, error) {
			rs, next, err := s.ListReferrals(context.Background(), "alice", p)
			var ids []string
			for _, r := range rs {
				ids = append(ids, r.OutcomesID)
			}
			return ids, next, err
		},
	}
	for name, v := range map[string]*referrals.AuditEntry{"qualified": nil, "qualified, audited": {At: "2025-10-13T10:00:00Z", Action: referrals.AuditViewed, Actor: "alice"}} {
		listings[name] = func(p store.Page) ([]string, string, error) {
			qs, next, err := s.ListQualified(context.Background(), "alice", p, v)
			var ids []string
			for _, q := range qs {
				ids = append(ids, strings.TrimPrefix(q.ExternalSourceID, "Q"))
			}
			return ids, next, err
		}
	}
	for name, list := range listings {
		var all []string
		for page, cursor := 0, ""; page < 5; page++ {
			ids, next, err := list(store.Page{Limit: 2, Cursor: cursor})
			if err != nil {
				t.Fatalf("%s, page %d: %v", name, page, err)
			}
			all = append(all, ids...)
			if cursor = next; cursor == "" {
				break
			}
		}
		if strings.Join(all, ",") != "R-3,R-1" {
			t.Errorf("%s listing with a damaged record: %q, want R-3,R-1", name, all)
		}
	}
	clients, err := s.Clients(context.Background())
	noErr(t, err)
	if strings.Join(clients, ",") != "alice" {
		t.Errorf("Clients() = %q; zed's only record is damaged", clients)
	}
	if _, err := s.GetReferral(context.Background(), "alice", "R-BAD"); !errors.Is(err, store.ErrCorrupt) {
		t.Errorf("GetReferral of the damaged record: %v, want ErrCorrupt", err)
	}
	if _, err := s.GetQualified(context.Background(), "alice", "QR-BAD", nil); !errors.Is(err, store.ErrCorrupt) {
		t.Errorf("GetQualified of the damaged record: %v, want ErrCorrupt", err)
	}
	for _, key := range []string{"r:R-BAD:alice", "q:QR-BAD:alice", "r:Z-BAD:zed"} {
		if n := strings.Count(logs.String(), "key="+key); n != 1 {
			t.Errorf("key %s logged %d times, want once:\n%s", key, n, logs.String())
		}
	}
}

// noErr fails the test at once on err.
func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestFileResetWhileInUse resets a file store while other goroutines create
// and list records: every call succeeds (calls wait for the swap rather than
// reaching a closed file), and a final Reset leaves exactly its set. Run
// with -race, it also checks that the swap is synchronised.
func TestFileResetWhileInUse(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), "data.db"))
	defer s.Close()
	set := &fixtures.Set{Referrals: []referrals.Referral{referral("alice", "FIXTURE", "2025-10-13T09:00:00Z")}}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for w := range 2 {
		wg.Go(func() {
			for i := range 50 {
				id := fmt.Sprintf("W%d-%d", w, i)
				if err := s.CreateReferral(context.Background(), referral("bob", id, "2025-10-13T09:00:01Z")); err != nil {
					errs <- err
					return
				}
				if _, _, err := s.ListReferrals(context.Background(), "bob", store.Page{Limit: 5}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range 5 {
			if err := s.Reset(context.Background(), set); err != nil {
				errs <- err
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("during resets: %v", err)
	}
	noErr(t, s.Reset(context.Background(), set))
	clients, err := s.Clients(context.Background())
	noErr(t, err)
	if strings.Join(clients, ",") != "alice" {
		t.Errorf("after the last reset, clients %q, want alice only", clients)
	}
}

// TestFileResetAfterCloseRefused: a closed store no longer holds the data
// file's lock, so its Reset must neither replace the file another store may
// have opened since nor open the file again.
func TestFileResetAfterCloseRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.db")
	first := mustOpen(t, path)
	noErr(t, first.Close())
	second := mustOpen(t, path)
	noErr(t, second.CreateReferral(context.Background(), referral("alice", "KEPT", "2025-10-13T09:00:01Z")))
	set := &fixtures.Set{Referrals: []referrals.Referral{referral("bob", "NEW", "2025-10-13T09:00:02Z")}}
	if err := first.Reset(context.Background(), set); err == nil {
		t.Fatal("Reset on a closed store succeeded")
	}
	if _, err := first.GetReferral(context.Background(), "alice", "KEPT"); err == nil {
		t.Error("the closed store opened the file again, without its lock")
	}
	noErr(t, second.Close())
	third := mustOpen(t, path)
	defer third.Close()
	clients, err := third.Clients(context.Background())
	noErr(t, err)
	if strings.Join(clients, ",") != "alice" {
		t.Errorf("after a closed store's Reset, the file holds the records of %q, want alice's only", clients)
	}
	if _, err := os.Stat(path + ".reset"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("reset file left behind: %v", err)
	}
}
