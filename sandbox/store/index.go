package store

import (
	"strings"

	"github.com/tidwall/btree"
)

// A stored value is a sort line, a newline, then the record's JSON (for a
// referral, the compact form of compact.go):
//
//	<client>:<submittedAt>:<id>\n{"trialId":...}
//
// with client and id escaped. The listing index orders records by their
// sort lines, and comparing sort lines is a plain string comparison, where
// reading three JSON fields in every comparison made opening or loading
// 100,000 records take seconds. The line needs no other parsing than the
// newline: escaped parts contain no ':' or newline, and submittedAt is
// canonical and of fixed width. All of a client's lines share the prefix
// "<client>:", and within it they order by submittedAt, then id.
func sortLine(clientID, submittedAt, id string) string {
	return clientSortPrefix(clientID) + submittedAt + ":" + escape(id)
}

// clientSortPrefix starts every sort line of the client; clientSortEnd sorts
// after all of them (';' follows ':') and before any other client's.
func clientSortPrefix(clientID string) string { return escape(clientID) + ":" }
func clientSortEnd(clientID string) string    { return escape(clientID) + ";" }

// splitValue separates a stored value into its sort line and JSON. A value
// without a newline is all sort line.
func splitValue(value string) (line, record string) {
	line, record, _ = strings.Cut(value, "\n")
	return line, record
}

// listIndex holds the newest-first order of each kind of record: every
// referral ("r:" key) and every qualified referral ("q:" key) in the store,
// ordered by sort line, then key. It is the store's own, not a buntdb
// index, so that opening a data file can build it in bulk (see
// buildIndex); buntdb builds an index only by inserting every record one
// at a time. storeTx keeps it in step with every write, and undoes its
// changes when the write fails. It lives in memory only: the data file
// holds the records and nothing of the index.
type listIndex struct {
	referrals, qualified *indexTree
	// order is both trees' comparator, which loadSorted sets to its
	// loading form while it fills one.
	order *indexOrder
	// entries holds what the trees point to.
	entries *entrySlab
	// probe is delete's search entry: a tree takes a pointer to look up,
	// and one to a variable of delete's own would be allocated each time.
	// Only a write deletes, under the store's write lock.
	probe indexEntry
}

// indexTree is one kind's tree: pointers to entries of the index's slab,
// in lessEntry's order.
type indexTree = btree.BTreeG[*indexEntry]

// indexEntry is one record in the index: its key and stored value, the
// very strings buntdb holds, so the index copies no record.
type indexEntry struct{ key, value string }

// pivotKey sorts after every record's key ("r:..." or "q:..."): a pivot,
// which has a sort line but no key, sorts after every record of its line,
// as buntdb's index pivots did.
const pivotKey = "\xff"

func pivot(line string) indexEntry { return indexEntry{key: pivotKey, value: line} }

// lessEntry is the index's order: sort line, then key, the order buntdb's
// index had (its comparator compared sort lines and fell back to keys).
func lessEntry(a, b indexEntry) bool {
	la, _ := splitValue(a.value)
	lb, _ := splitValue(b.value)
	if la != lb {
		return la < lb
	}
	return a.key < b.key
}

// indexOrder is the index trees' comparator: lessEntry, except while
// loadSorted fills a tree in order. Then loading is the entry being
// loaded, which sorts after every entry in the tree, and the tree only
// ever compares that entry with those: it is the greater exactly when it
// is the second argument. Comparing it for real read its sort line from a
// place in the heap random to the order of loading, a cache miss per
// entry that was 0.46 s of opening a million referrals.
type indexOrder struct{ loading *indexEntry }

func (o *indexOrder) less(a, b *indexEntry) bool {
	if o.loading != nil {
		return b == o.loading
	}
	return lessEntry(*a, *b)
}

func newIndexTree(o *indexOrder) *indexTree {
	// The store's own lock (BuntStore.txMu) guards the index.
	return btree.NewBTreeGOptions(o.less, btree.Options{NoLocks: true})
}

func newListIndex() *listIndex {
	o := &indexOrder{}
	return &listIndex{referrals: newIndexTree(o), qualified: newIndexTree(o), order: o, entries: &entrySlab{}}
}

// tree returns the tree of the records whose keys have keyPrefix
// (referralPrefix or qualifiedPrefix), and nil for any other key.
func (x *listIndex) tree(key string) *indexTree {
	switch {
	case strings.HasPrefix(key, referralPrefix):
		return x.referrals
	case strings.HasPrefix(key, qualifiedPrefix):
		return x.qualified
	}
	return nil
}

// set adds e to tr, in a slot of its own.
func (x *listIndex) set(tr *indexTree, e indexEntry) {
	if old, ok := tr.Set(x.entries.put(e)); ok {
		x.entries.release(old) // an equal entry: the tree held it before
	}
}

// delete removes the entry equal to e from tr, if it holds one, and
// reports whether it did.
func (x *listIndex) delete(tr *indexTree, e indexEntry) bool {
	x.probe = e
	old, ok := tr.Delete(&x.probe)
	x.probe = indexEntry{}
	if ok {
		x.entries.release(old)
	}
	return ok
}

// descend calls fn on the records of the tree whose sort lines are at most
// from (a pivot sorts after the records of its line), newest first, until
// fn returns false. The walk's pivot goes in probe, the caller's own (the
// tree reads it only while it seeks, before it first calls fn).
func descend(tr *indexTree, probe *indexEntry, from string, fn func(key, value string) bool) {
	*probe = pivot(from)
	tr.Descend(probe, func(e *indexEntry) bool { return fn(e.key, e.value) })
}

// ascendRange calls fn on the records of the tree whose sort lines are
// greater than from and less than to, oldest first, until fn returns
// false. An empty to has no upper bound. The walk's starting pivot goes
// in probe, the caller's own.
func ascendRange(tr *indexTree, probe *indexEntry, from, to string, fn func(key, value string) bool) {
	*probe = pivot(from)
	end := pivot(to)
	tr.Ascend(probe, func(e *indexEntry) bool {
		if to != "" && !lessEntry(*e, end) {
			return false
		}
		return fn(e.key, e.value)
	})
}
