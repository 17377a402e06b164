package store

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/buntdb"
)

// oddValues are stored values as a data file may hold them, sorted or
// not by the sandbox: long lines sharing long prefixes, lines that end
// where others go on with NUL bytes, equal lines under different keys,
// values without a newline or JSON, and an empty one.
func oddValues(rng *rand.Rand, n int) []indexEntry {
	long := strings.Repeat("sandbox-partner-with-a-long-name:", 2)
	var es []indexEntry
	for i := range n {
		var line string
		switch rng.IntN(6) {
		case 0:
			line = long + fmt.Sprintf("2025-10-13T09:00:%02d.000000Z:R-%d", rng.IntN(3), rng.IntN(50))
		case 1:
			line = "a" + strings.Repeat("\x00", rng.IntN(20))
		case 2:
			line = strings.Repeat("ab", rng.IntN(12))
		case 3:
			line = long[:rng.IntN(len(long))]
		case 4:
			line = fmt.Sprintf("c:%d", rng.IntN(5)) // equal lines, different keys
		default:
			line = fmt.Sprintf("client-%d:2025-10-13T09:00:00.000000Z:%d", rng.IntN(3), i)
		}
		value := line
		if rng.IntN(4) > 0 {
			value += "\n{\"n\":" + fmt.Sprint(i) + "}"
		}
		es = append(es, indexEntry{key: fmt.Sprintf("r:%06d", i), value: value})
	}
	return es
}

// TestSortEntries: the rank sort orders entries exactly as lessEntry, the
// index's comparison, does.
func TestSortEntries(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 2))
	// From parallelFrom on, the first round runs in two halves.
	for _, n := range []int{0, 1, 2, 7, 100, 3000, parallelFrom + 1000} {
		es := oddValues(rng, n)
		var got []indexEntry
		for _, r := range sortEntries(es) {
			got = append(got, es[r.i])
		}
		want := inIndexOrder(es)
		if !slices.Equal(got, want) {
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("n=%d: entry %d is %q, want %q", n, i, got[i], want[i])
				}
			}
		}
	}
}

// TestBuildIndexMatchesInsertion: the index built in bulk when a store
// opens holds what inserting every record one at a time (as writes do)
// gives, in the same order, and its trees have room for later writes.
func TestBuildIndexMatchesInsertion(t *testing.T) {
	db, err := buntdb.Open(MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rng := rand.New(rand.NewPCG(27, 3))
	want := newListIndex()
	err = db.Update(func(tx *buntdb.Tx) error {
		st := &storeTx{Tx: tx, idx: want}
		for i, e := range oddValues(rng, 5000) {
			if i%2 == 1 {
				e.key = qualifiedPrefix + e.key[len(referralPrefix):]
			}
			if _, _, err := st.Set(e.key, e.value, nil); err != nil {
				return err
			}
		}
		_, _, err := st.Set("c:client", "{}", nil) // not a record: not indexed
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := buildIndex(db)
	if err != nil {
		t.Fatal(err)
	}
	for _, tree := range []struct {
		name      string
		got, want *indexTree
	}{{"referrals", got.referrals, want.referrals}, {"qualified", got.qualified, want.qualified}} {
		if g, w := entriesOf(tree.got), entriesOf(tree.want); !slices.Equal(g, w) {
			t.Errorf("%s: built %d entries, inserted %d, or in another order", tree.name, len(g), len(w))
		}
		e := indexEntry{key: "r:new", value: "client-1:2025-10-13T09:00:00.000000Z:new\n{}"}
		got.set(tree.got, e)
		want.set(tree.want, e)
		if g, w := entriesOf(tree.got), entriesOf(tree.want); !slices.Equal(g, w) {
			t.Errorf("%s: after one more entry the trees differ", tree.name)
		}
	}
}

// inIndexOrder is a copy of es sorted by lessEntry, the index's order.
func inIndexOrder(es []indexEntry) []indexEntry {
	es = slices.Clone(es)
	slices.SortFunc(es, func(a, b indexEntry) int {
		switch {
		case lessEntry(a, b):
			return -1
		case lessEntry(b, a):
			return 1
		}
		return 0
	})
	return es
}

// entriesOf lists the entries of tr, in order.
func entriesOf(tr *indexTree) []indexEntry {
	var out []indexEntry
	tr.Scan(func(e *indexEntry) bool {
		out = append(out, *e)
		return true
	})
	return out
}

// benchRecord is the JSON of a generated referral, as stored.
const benchRecord = `{"trialId":"TRIAL-ONCO-002","status":"enrolled","patient":{"firstName":"Lindsay","lastName":"Berry","dateOfBirth":"1990-03-26","gender":"female","email":"lindsay.berry21@example.net","phone":"+13155550125","postalCode":"33585"},"notes":"Other than the way, we deceive a smaller eye."}`

// BenchmarkBuildIndex times building the listing index of a store of
// 100,000 referrals, as opening a data file does after buntdb loads it.
func BenchmarkBuildIndex(b *testing.B) {
	db := referralsDB(b, 100_000, true)
	b.ResetTimer()
	for b.Loop() {
		if _, err := buildIndex(db); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCollectWithIndex times a full garbage collection of a store of
// 300,000 referrals and their listing index, as the sandbox makes once it
// has opened a data file (and the collector makes again and again while
// it serves): with the records stored in key order, as a file seeded or
// shrunk by buntdb holds them, and in another order, as writes leave them.
func BenchmarkCollectWithIndex(b *testing.B) {
	for _, shuffled := range []bool{false, true} {
		b.Run(fmt.Sprintf("shuffled=%t", shuffled), func(b *testing.B) {
			db := referralsDB(b, 300_000, shuffled)
			idx, err := buildIndex(db)
			if err != nil {
				b.Fatal(err)
			}
			runtime.GC()
			b.ResetTimer()
			for b.Loop() {
				runtime.GC()
			}
			runtime.KeepAlive(idx)
		})
	}
}

// referralsDB is an in-memory buntdb holding n referrals of one client,
// submitted at random times, of about the size of the generated fixtures'
// (300 bytes), stored in key order or, shuffled, in an order unrelated to
// their keys.
func referralsDB(b *testing.B, n int, shuffled bool) *buntdb.DB {
	db, err := buntdb.Open(MemoryPath)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	rng := rand.New(rand.NewPCG(27, 4))
	err = db.Update(func(tx *buntdb.Tx) error {
		for i := range n {
			at := fmt.Sprintf("2025-%02d-%02dT%02d:%02d:%02d.%06dZ", 1+rng.IntN(12), 1+rng.IntN(28), rng.IntN(24), rng.IntN(60), rng.IntN(60), rng.IntN(1e6))
			first := uint32(i)
			if shuffled {
				first = rng.Uint32()
			}
			id := fmt.Sprintf("%08x-0000-4000-8000-%012x", first, i)
			if _, _, err := tx.Set(recordKey(referralPrefix, "sandbox-partner", id), sortLine("sandbox-partner", at, id)+"\n"+benchRecord, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return db
}

// TestIndexAfterDeleteAll: after DeleteAll a transaction gathers what it
// stores and indexes it in bulk; overwriting, deleting or walking in the
// same transaction, and its end, all see every record in place.
func TestIndexAfterDeleteAll(t *testing.T) {
	db, err := buntdb.Open(MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	idx := newListIndex()
	line := func(id string) string { return sortLine("alice", "2025-10-13T09:00:00.000000Z", id) + "\n{}" }
	walk := func(st *storeTx) []string {
		var keys []string
		st.descendIndex(referralPrefix, clientSortEnd("alice"), func(k, _ string) bool {
			keys = append(keys, k)
			return true
		})
		return keys
	}
	err = db.Update(func(tx *buntdb.Tx) error {
		st := &storeTx{Tx: tx, idx: idx}
		for _, id := range []string{"old-1", "old-2"} {
			if _, _, err := st.Set(recordKey(referralPrefix, "alice", id), line(id), nil); err != nil {
				return err
			}
		}
		if err := st.DeleteAll(); err != nil {
			return err
		}
		for _, id := range []string{"b", "a", "c", "d"} {
			if _, _, err := st.Set(recordKey(referralPrefix, "alice", id), line(id), nil); err != nil {
				return err
			}
		}
		if got, want := walk(st), []string{"r:d:alice", "r:c:alice", "r:b:alice", "r:a:alice"}; !slices.Equal(got, want) {
			t.Errorf("walked %q after DeleteAll, want %q", got, want)
		}
		if _, err := st.Delete("r:c:alice"); err != nil {
			return err
		}
		if err := st.DeleteAll(); err != nil {
			return err
		}
		for _, id := range []string{"x", "y"} {
			if _, _, err := st.Set(recordKey(referralPrefix, "alice", id), line(id), nil); err != nil {
				return err
			}
		}
		// Overwriting a gathered record replaces it, and reports the value
		// replaced (insert's conflict), which buntdb no longer does after
		// DeleteAll.
		prev, replaced, err := st.Set("r:x:alice", sortLine("alice", "2025-10-13T09:00:01.000000Z", "x")+"\n{}", nil)
		if !replaced || prev != line("x") {
			t.Errorf("overwriting after DeleteAll reported %q, %v; want %q, true", prev, replaced, line("x"))
		}
		// A new key replaces nothing.
		if prev, replaced, err := st.Set("r:z:alice", line("z"), nil); err != nil || replaced || prev != "" {
			t.Errorf("a new key after DeleteAll reported %q, %v, %v; want \"\", false, nil", prev, replaced, err)
		}
		st.flush()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(func(tx *buntdb.Tx) error {
		if got, want := walk(&storeTx{Tx: tx, idx: idx}), []string{"r:x:alice", "r:z:alice", "r:y:alice"}; !slices.Equal(got, want) {
			t.Errorf("walked %q at the end, want %q", got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestIndexReusesFreedSlots: a record deleted gives its index slot back
// cleared (its strings can be collected), and the next record written
// takes that slot; a write that fails puts back what it removed. Every
// walk sees exactly the records stored.
func TestIndexReusesFreedSlots(t *testing.T) {
	s, err := Open(MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	es := oddValues(rand.New(rand.NewPCG(27, 5)), 50)
	write := func(fn func(tx *storeTx) error) error {
		t.Helper()
		return s.updateTx(fn)
	}
	err = write(func(tx *storeTx) error {
		for _, e := range es {
			if _, _, err := tx.Set(e.key, e.value, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string, stored []indexEntry) {
		t.Helper()
		if got, want := entriesOf(s.idx.referrals), inIndexOrder(stored); !slices.Equal(got, want) {
			t.Fatalf("%s: the index holds %d entries, or others; want %d", when, len(got), len(want))
		}
	}
	check("stored", es)

	gone := es[7]
	var freed *indexEntry
	s.idx.referrals.Scan(func(e *indexEntry) bool {
		if *e == gone {
			freed = e
		}
		return freed == nil
	})
	if err := write(func(tx *storeTx) error { _, err := tx.Delete(gone.key); return err }); err != nil {
		t.Fatal(err)
	}
	if *freed != (indexEntry{}) {
		t.Errorf("the deleted record's slot still holds %q", *freed)
	}
	added := indexEntry{key: "r:added", value: "client-1:2025-10-13T09:00:00.000000Z:added\n{}"}
	if err := write(func(tx *storeTx) error { _, _, err := tx.Set(added.key, added.value, nil); return err }); err != nil {
		t.Fatal(err)
	}
	if *freed != added {
		t.Errorf("the next record went elsewhere; the freed slot holds %q", *freed)
	}
	stored := append(append(slices.Clone(es[:7]), es[8:]...), added)
	check("after a delete and a write", stored)

	// A write that replaces a record and deletes another, then fails.
	failed := errors.New("failed")
	err = write(func(tx *storeTx) error {
		if _, _, err := tx.Set(added.key, "client-1:2026-01-01T00:00:00.000000Z:added\n{}", nil); err != nil {
			return err
		}
		if _, err := tx.Delete(es[3].key); err != nil {
			return err
		}
		return failed
	})
	if !errors.Is(err, failed) {
		t.Fatalf("the failing write returned %v", err)
	}
	check("after a failed write", stored)
}
