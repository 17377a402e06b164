package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tidwall/buntdb"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// TestPanicInWriteRollsBack: a write transaction whose function panics
// stores nothing, in memory or on file (after reopening too), and leaves
// the listing index as it was; the store takes writes again after it.
// buntdb's Update commits whatever the function wrote before it panicked,
// and the listing index kept apart from buntdb's records would then list
// other records than the store holds.
func TestPanicInWriteRollsBack(t *testing.T) {
	seed := &fixtures.Set{Referrals: []referrals.Referral{
		{TrialID: "T", OutcomesID: "R-1", ClientID: "alice", Status: referrals.StatusReceived, SubmittedAt: "2025-10-13T09:00:01.000000Z"},
		{TrialID: "T", OutcomesID: "R-2", ClientID: "alice", Status: referrals.StatusReceived, SubmittedAt: "2025-10-13T09:00:02.000000Z"},
	}}
	newer := referrals.Referral{TrialID: "T", OutcomesID: "R-3", ClientID: "alice", Status: referrals.StatusReceived, SubmittedAt: "2025-10-13T09:00:03.000000Z"}
	writes := map[string]func(tx *storeTx) error{
		"set and delete": func(tx *storeTx) error {
			key, value, err := encodeReferral(newer)
			if err != nil {
				return err
			}
			if _, _, err := tx.Set(key, value, nil); err != nil {
				return err
			}
			_, err = tx.Delete(recordKey(referralPrefix, "alice", "R-1"))
			return err
		},
		"delete all and set": func(tx *storeTx) error {
			if err := tx.DeleteAll(); err != nil {
				return err
			}
			key, value, err := encodeReferral(newer)
			if err != nil {
				return err
			}
			_, _, err = tx.Set(key, value, nil)
			return err
		},
	}
	for _, kind := range Backings {
		for name, write := range writes {
			t.Run(kind+"/"+name, func(t *testing.T) {
				s, path := openBacking(t, kind)
				defer func() { _ = s.Close() }()
				if err := s.Seed(context.Background(), seed); err != nil {
					t.Fatal(err)
				}
				want := listedIDs(t, s)
				func() {
					defer func() {
						if recover() == nil {
							t.Error("the panic did not reach the caller")
						}
					}()
					_ = s.updateTx(func(tx *storeTx) error {
						if err := write(tx); err != nil {
							t.Error(err)
						}
						panic("a bug in the write")
					})
				}()
				if got := listedIDs(t, s); got != want {
					t.Errorf("listed %s after the panic, want %s", got, want)
				}
				if got := storedIDs(t, s); got != want {
					t.Errorf("stored %s after the panic, want %s", got, want)
				}
				if kind == "file" {
					if err := s.Close(); err != nil {
						t.Fatal(err)
					}
					var err error
					if s, err = Open(path); err != nil {
						t.Fatal(err)
					}
					if got := storedIDs(t, s); got != want {
						t.Errorf("stored %s after reopening, want %s", got, want)
					}
				}
				// The write lock was released.
				if err := s.CreateReferral(context.Background(), newer); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// listedIDs is alice's referrals as the listing index orders them.
func listedIDs(t *testing.T, s *BuntStore) string {
	t.Helper()
	page, _, err := s.ListReferrals(context.Background(), "alice", Page{Limit: MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	var ids string
	for _, r := range page {
		ids += r.OutcomesID + " "
	}
	return ids
}

// storedIDs is alice's referrals as buntdb holds them, newest first.
func storedIDs(t *testing.T, s *BuntStore) string {
	t.Helper()
	var ids string
	for _, id := range []string{"R-3", "R-2", "R-1"} {
		switch _, err := s.GetReferral(context.Background(), "alice", id); {
		case err == nil:
			ids += id + " "
		case !errors.Is(err, ErrNotFound):
			t.Fatal(err)
		}
	}
	return ids
}

// TestIndexFollowsRandomWrites: after every write transaction, committed
// or failed part-way, the listing index holds exactly the entries a
// fresh build from the records gives: random sets, overwrites, deletes,
// DeleteAll and walks on a few keys of every key space, with sort lines
// shared by several keys and values without a newline.
func TestIndexFollowsRandomWrites(t *testing.T) {
	for _, kind := range Backings {
		seeds := uint64(100)
		if kind == "file" {
			seeds = 20 // an fsync per transaction
		}
		for seed := range seeds {
			s, _ := openBacking(t, kind)
			rng := rand.New(rand.NewPCG(seed, 1))
			key := func() string {
				return fmt.Sprintf("%sk%d", []string{referralPrefix, qualifiedPrefix, auditPrefix, clientPrefix}[rng.IntN(4)], rng.IntN(6))
			}
			value := func() string {
				if rng.IntN(4) == 0 {
					return fmt.Sprintf("line%d", rng.IntN(3)) // damaged: no newline
				}
				return fmt.Sprintf("line%d\n{%d}", rng.IntN(3), rng.IntN(3))
			}
			for n := range 30 {
				fail := rng.IntN(3) == 0
				err := s.updateTx(func(tx *storeTx) error {
					for range rng.IntN(8) {
						var err error
						switch rng.IntN(10) {
						case 0:
							err = tx.DeleteAll()
						case 1, 2:
							if _, err = tx.Delete(key()); errors.Is(err, buntdb.ErrNotFound) {
								err = nil
							}
						case 3:
							tx.descendIndex(referralPrefix, "\xff", func(string, string) bool { return true })
						default:
							_, _, err = tx.Set(key(), value(), nil)
						}
						if err != nil {
							return err
						}
					}
					if fail {
						return errors.New("a failing write")
					}
					return nil
				})
				if err != nil && !fail {
					t.Fatal(err)
				}
				built, err := buildIndex(s.db)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := indexEntries(s.idx), indexEntries(built); !slices.Equal(got, want) {
					t.Fatalf("%s, seed %d, transaction %d: the index holds\n%q\nthe records\n%q", kind, seed, n, got, want)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// indexEntries lists the index's entries of both kinds, in order.
func indexEntries(x *listIndex) []indexEntry {
	var out []indexEntry
	for _, prefix := range []string{referralPrefix, qualifiedPrefix} {
		out = append(out, entriesOf(x.tree(prefix))...)
	}
	return out
}
