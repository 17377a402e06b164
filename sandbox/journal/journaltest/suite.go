// Package journaltest is the conformance suite every journal.Log must
// pass: the in-memory journal and the Redis one keep the same bounds,
// truncation, paging, ids and per-client clearing. Each implementation's
// tests call Run with a function that opens an empty journal.
//
// It is part of the module's tests; it is not a stable API.
package journaltest

import (
	"context"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// Opener returns an empty journal with the given bounds.
type Opener func(t *testing.T, maxEntries int, maxBytes int64) journal.Log

// Run runs the suite against the journals open makes. checkEvery thins the
// per-Add checks of the long tests (reading a whole journal back from Redis
// after every Add is slow); 1 checks after every Add.
func Run(t *testing.T, open Opener, checkEvery int) {
	t.Helper()
	tests := []struct {
		name string
		run  func(t *testing.T, im impl)
	}{
		{"BudgetHoldsAfterEveryAdd", testBudgetHoldsAfterEveryAdd},
		{"CountBoundStillHolds", testCountBoundStillHolds},
		{"PagingWalksEveryEntryOnce", testPagingWalksEveryEntryOnce},
		{"ClearClientKeepsOthersInOrder", testClearClientKeepsOthersInOrder},
		{"ConcurrentAddsKeepTheNewest", testConcurrentAddsKeepTheNewest},
		{"KeepsTheNewestThatFit", testKeepsTheNewestThatFit},
		{"ClearClientAmidAdds", testClearClientAmidAdds},
		{"HostileUpstreamStaysWithinEntryBound", testHostileUpstreamStaysWithinEntryBound},
		{"PagesAreBoundedInBytes", testPagesAreBoundedInBytes},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, impl{checkEvery: max(checkEvery, 1), newLog: func(n int, b int64) *log {
				return &log{t: t, l: open(t, n, b)}
			}})
		})
	}
}

// impl is the implementation under test.
type impl struct {
	newLog     func(maxEntries int, maxBytes int64) *log
	checkEvery int
}

// log calls a journal.Log, failing the test on any error, so the tests read
// as the behaviour they check. Safe for concurrent use: it reports with
// t.Errorf.
type log struct {
	t *testing.T
	l journal.Log
}

func (j *log) check(what string, err error) {
	if err != nil {
		j.t.Errorf("%s: %v", what, err)
	}
}

func (j *log) Add(e journal.Entry) { j.check("Add", j.l.Add(context.Background(), e)) }

func (j *log) Find(f journal.Filter) []journal.Entry {
	out, err := j.l.Find(context.Background(), f)
	j.check("Find", err)
	return out
}

func (j *log) After(f journal.Filter, limit int) ([]journal.Entry, bool) {
	out, more, err := j.l.After(context.Background(), f, limit)
	j.check("After", err)
	return out, more
}

func (j *log) Latest(f journal.Filter, limit int) []journal.Entry {
	out, err := j.l.Latest(context.Background(), f, limit)
	j.check("Latest", err)
	return out
}

func (j *log) Clear() { j.check("Clear", j.l.Clear(context.Background())) }

func (j *log) ClearClient(id string) {
	j.check("ClearClient", j.l.ClearClient(context.Background(), id))
}

func (j *log) Usage() (int, int64) {
	n, b, err := j.l.Usage(context.Background())
	j.check("Usage", err)
	return n, b
}
