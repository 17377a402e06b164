package store_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// listIDs pages through the client's referrals and qualified referrals, a
// few at a time, and returns their ids in listing order.
func listIDs(t *testing.T, s store.Store, clientID string) (refs, qualified []string) {
	t.Helper()
	refs = pageIDs(t, "referrals of "+clientID, func(p store.Page) ([]referrals.Referral, string, error) {
		return s.ListReferrals(context.Background(), clientID, p)
	}, func(r referrals.Referral) string { return r.OutcomesID })
	qualified = pageIDs(t, "qualified referrals of "+clientID, func(p store.Page) ([]referrals.QualifiedReferral, string, error) {
		return s.ListQualified(context.Background(), clientID, p, nil)
	}, func(q referrals.QualifiedReferral) string { return q.ExternalSourceID })
	return refs, qualified
}

// pageIDs pages through list three records at a time, following its
// cursors, and returns the id of each record in order.
func pageIDs[T any](t *testing.T, what string, list func(store.Page) ([]T, string, error), id func(T) string) []string {
	t.Helper()
	var ids []string
	for cursor := ""; ; {
		page, next, err := list(store.Page{Limit: 3, Cursor: cursor})
		if err != nil {
			t.Fatalf("list %s: %v", what, err)
		}
		for _, r := range page {
			ids = append(ids, id(r))
		}
		if cursor = next; cursor == "" {
			return ids
		}
	}
}

// listing is every listed id of the clients, as one comparable string.
func listing(t *testing.T, s store.Store, clients ...string) string {
	t.Helper()
	var out string
	for _, c := range clients {
		r, q := listIDs(t, s, c)
		out += fmt.Sprintf("%s: referrals %q qualified %q\n", c, r, q)
	}
	return out
}

// TestListingAfterFailedWrites: a write that fails part-way, after it has
// stored or deleted records in its transaction, changes no listing, and
// the listings go on in step with the writes after it. The listing index
// is the store's own, so it is undone apart from buntdb's rollback.
func TestListingAfterFailedWrites(t *testing.T) {
	for _, kind := range store.Backings {
		t.Run(kind, func(t *testing.T) {
			path := store.BackingPath(t, kind)
			s := mustOpen(t, path)
			defer s.Close()
			set := &fixtures.Set{
				Referrals: []referrals.Referral{
					referral("alice", "R-1", "2025-10-13T09:00:01.000000Z"),
					referral("alice", "R-2", "2025-10-13T09:00:02.000000Z"),
					referral("bob", "R-1", "2025-10-13T09:00:03.000000Z"),
				},
				QualifiedReferrals: []referrals.QualifiedReferral{qualified("alice", "Q-1", "2025-10-13T09:00:04.000000Z")},
			}
			if err := s.Seed(context.Background(), set); err != nil {
				t.Fatal(err)
			}
			before := listing(t, s, "alice", "bob")

			// Each stores or deletes records, then meets a conflict.
			conflicting := &fixtures.Set{Referrals: []referrals.Referral{
				referral("alice", "R-8", "2025-10-13T09:00:08.000000Z"),
				referral("alice", "R-9", "2025-10-13T09:00:09.000000Z"),
				referral("alice", "R-9", "2025-10-13T09:00:09.000000Z"),
			}, QualifiedReferrals: []referrals.QualifiedReferral{qualified("alice", "Q-9", "2025-10-13T09:00:09.000000Z")}}
			if err := s.Load(context.Background(), conflicting); !errors.Is(err, store.ErrConflict) {
				t.Fatalf("Load of a set with a duplicate = %v, want ErrConflict", err)
			}
			if got := listing(t, s, "alice", "bob"); got != before {
				t.Fatalf("after a failed Load the listings are\n%swant\n%s", got, before)
			}
			if err := s.ResetClient(context.Background(), "alice", conflicting); !errors.Is(err, store.ErrConflict) {
				t.Fatalf("ResetClient to a set with a duplicate = %v, want ErrConflict", err)
			}
			if got := listing(t, s, "alice", "bob"); got != before {
				t.Fatalf("after a failed ResetClient the listings are\n%swant\n%s", got, before)
			}
			if err := s.Reset(context.Background(), conflicting); !errors.Is(err, store.ErrConflict) {
				t.Fatalf("Reset to a set with a duplicate = %v, want ErrConflict", err)
			}
			if got := listing(t, s, "alice", "bob"); got != before {
				t.Fatalf("after a failed Reset the listings are\n%swant\n%s", got, before)
			}

			// Later writes land in place, and deleting what the failed
			// writes touched leaves nothing of theirs behind.
			if err := s.CreateReferral(context.Background(), referral("alice", "R-0", "2025-10-13T09:00:00.000000Z")); err != nil {
				t.Fatal(err)
			}
			if err := s.ResetClient(context.Background(), "alice", &fixtures.Set{Referrals: []referrals.Referral{referral("alice", "R-3", "2025-10-13T09:00:05.000000Z")}}); err != nil {
				t.Fatal(err)
			}
			want := "alice: referrals [\"R-3\"] qualified []\nbob: referrals [\"R-1\"] qualified []\n"
			if got := listing(t, s, "alice", "bob"); got != want {
				t.Fatalf("listings are\n%swant\n%s", got, want)
			}
			if err := s.Reset(context.Background(), set); err != nil {
				t.Fatal(err)
			}
			if got := listing(t, s, "alice", "bob"); got != before {
				t.Fatalf("after Reset the listings are\n%swant\n%s", got, before)
			}
		})
	}
}

// TestListingRebuiltOnOpen: the listing order a file store kept in step
// through creates, updates, per-client resets and a full reset is the
// order built from the file when it is opened again, and both are the
// newest-first order of the records.
func TestListingRebuiltOnOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.db")
	s := mustOpen(t, path)
	rng := rand.New(rand.NewPCG(27, 1))
	clients := []string{"alice", "alice:x", "bob", "carol"}
	at := func() string {
		// Few distinct times, so that many records share one and order by id.
		return time.Date(2025, 10, 13, 9, 0, rng.IntN(40), 0, time.UTC).Format(referrals.TimestampLayout)
	}
	var set fixtures.Set
	for i := range 120 {
		c := clients[rng.IntN(len(clients))]
		set.Referrals = append(set.Referrals, referral(c, fmt.Sprintf("R-%03d", i), at()))
		if i%3 == 0 {
			set.QualifiedReferrals = append(set.QualifiedReferrals, qualified(c, fmt.Sprintf("Q-%03d", i), at()))
		}
	}
	if err := s.Seed(context.Background(), &set); err != nil {
		t.Fatal(err)
	}
	for i := range 80 {
		c := clients[rng.IntN(len(clients))]
		if err := s.CreateReferral(context.Background(), referral(c, fmt.Sprintf("N-%03d", i), at())); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range set.Referrals[:40] {
		if _, err := s.UpdateReferral(context.Background(), r.ClientID, r.OutcomesID, func(r *referrals.Referral) error {
			r.Status = referrals.StatusEnrolled
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.ResetClient(context.Background(), "bob", &set); err != nil {
		t.Fatal(err)
	}
	live := listing(t, s, clients...)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, path)
	defer s.Close()
	if got := listing(t, s, clients...); got != live {
		t.Fatalf("opened again, the listings are\n%swhile open they were\n%s", got, live)
	}

	// Both are newest first, by submittedAt then id.
	for _, c := range clients {
		var want []referrals.Referral
		for _, r := range append(slices.Clone(set.Referrals), allCreated(t, s, c)...) {
			if r.ClientID == c && !slices.ContainsFunc(want, func(w referrals.Referral) bool { return w.OutcomesID == r.OutcomesID }) {
				want = append(want, r)
			}
		}
		slices.SortFunc(want, func(a, b referrals.Referral) int {
			if a.SubmittedAt != b.SubmittedAt {
				return -cmpString(a.SubmittedAt, b.SubmittedAt)
			}
			return -cmpString(a.OutcomesID, b.OutcomesID)
		})
		var wantIDs []string
		for _, r := range want {
			wantIDs = append(wantIDs, r.OutcomesID)
		}
		if got, _ := listIDs(t, s, c); !slices.Equal(got, wantIDs) {
			t.Errorf("%s lists %q, want %q", c, got, wantIDs)
		}
	}
}

// allCreated is every referral the client has that is not in a fixture
// set, as GetReferral reads them.
func allCreated(t *testing.T, s store.Store, clientID string) []referrals.Referral {
	t.Helper()
	var out []referrals.Referral
	for i := range 80 {
		r, err := s.GetReferral(context.Background(), clientID, fmt.Sprintf("N-%03d", i))
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			t.Fatal(err)
		default:
			out = append(out, r)
		}
	}
	return out
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestListingWhileWriting: pages read while other goroutines create
// records, reset a client and fail writes part-way are each in order and
// hold only whole, committed records; run with -race, it also checks that
// the listing index is never read while a write changes it.
func TestListingWhileWriting(t *testing.T) {
	for _, kind := range store.Backings {
		t.Run(kind, func(t *testing.T) {
			path := store.BackingPath(t, kind)
			s := mustOpen(t, path)
			defer s.Close()
			const writers, perWriter = 3, 40
			var wg sync.WaitGroup
			done := make(chan struct{})
			errs := make(chan error, 16)
			for w := range writers {
				wg.Go(func() {
					for i := range perWriter {
						at := time.Date(2025, 10, 13, 9, w, i, 0, time.UTC).Format(referrals.TimestampLayout)
						if err := s.CreateReferral(context.Background(), referral("alice", fmt.Sprintf("W%d-%03d", w, i), at)); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Go(func() {
				bad := &fixtures.Set{Referrals: []referrals.Referral{
					referral("alice", "X-1", "2025-10-13T10:00:00.000000Z"),
					referral("alice", "X-1", "2025-10-13T10:00:00.000000Z"),
				}}
				good := &fixtures.Set{Referrals: []referrals.Referral{referral("bob", "B-1", "2025-10-13T10:00:00.000000Z")}}
				for range 10 {
					if err := s.Load(context.Background(), bad); !errors.Is(err, store.ErrConflict) {
						errs <- fmt.Errorf("Load of a duplicate: %v", err)
						return
					}
					if err := s.ResetClient(context.Background(), "bob", good); err != nil {
						errs <- err
						return
					}
				}
			})
			readers := sync.WaitGroup{}
			for range 2 {
				readers.Go(func() {
					for {
						select {
						case <-done:
							return
						default:
						}
						page, _, err := s.ListReferrals(context.Background(), "alice", store.Page{Limit: 20})
						if err != nil {
							errs <- err
							return
						}
						for i, r := range page {
							if r.OutcomesID == "X-1" {
								errs <- errors.New("a page holds a record of a write that failed")
								return
							}
							if i > 0 && (page[i-1].SubmittedAt < r.SubmittedAt ||
								page[i-1].SubmittedAt == r.SubmittedAt && page[i-1].OutcomesID <= r.OutcomesID) {
								errs <- fmt.Errorf("page out of order: %s (%s) before %s (%s)",
									page[i-1].OutcomesID, page[i-1].SubmittedAt, r.OutcomesID, r.SubmittedAt)
								return
							}
						}
					}
				})
			}
			wg.Wait()
			close(done)
			readers.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			got, _ := listIDs(t, s, "alice")
			if len(got) != writers*perWriter {
				t.Errorf("alice lists %d referrals, want %d", len(got), writers*perWriter)
			}
		})
	}
}
