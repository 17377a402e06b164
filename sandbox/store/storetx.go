package store

import (
	"github.com/tidwall/buntdb"
)

// storeTx is a buntdb transaction that keeps the store's listing index in
// step: Set, Delete and DeleteAll change the index as they change the
// records, and note how to undo it, which updateTx does when the
// transaction does not commit (an error of its function, or of writing the
// file), so that the index never holds a record buntdb rolled back. Every
// other method is buntdb's.
//
// After DeleteAll (an in-memory Reset) the records stored are gathered and
// indexed in bulk, as a file is when it opens (listIndex.loadSorted), the first
// time the index is needed: any other change of it, a walk, or the end of
// the transaction (updateTx calls flush).
type storeTx struct {
	*buntdb.Tx
	idx     *listIndex // nil while building a reset file, which has no index
	undo    []undoStep
	bulk    bool         // since DeleteAll, Set only gathers entries
	pending []indexEntry // gathered, not yet in the index
	// deletedAll: DeleteAll was called in this transaction.
	deletedAll bool
	// probe is where a walk of the index puts its pivot: the trees take
	// a pointer to look up, and a variable of the walk's own would be
	// allocated on every walk.
	probe indexEntry
	// usage is how the transaction changes each client's usage (see
	// quota_bunt.go), by escaped client id; not kept after DeleteAll,
	// whose transaction has the usage counted afresh.
	usage map[string]usage
}

// undoStep reverses one change of the index: an entry added or removed, or
// (restore set) both trees replaced by DeleteAll.
type undoStep struct {
	tree    *indexTree
	entry   indexEntry
	added   bool
	restore *listIndex
}

// Set stores value at key, as buntdb's Set, and indexes the record.
func (t *storeTx) Set(key, value string, opts *buntdb.SetOptions) (previous string, replaced bool, err error) {
	var tr *indexTree
	if t.idx != nil {
		tr = t.idx.tree(key)
	}
	// After DeleteAll, buntdb's Set no longer reports the value it
	// replaces (it keeps none to roll back to). Whether it replaced one
	// shows in the count of keys, which costs nothing, where reading the
	// key first allocated a search item beside every record's item (see
	// loadEncoded); the value replaced is then the index's.
	before := 0
	if tr != nil && t.deletedAll {
		if before, err = t.Tx.Len(); err != nil {
			return "", false, err
		}
	}
	p, r, err := t.Tx.Set(key, value, opts)
	if err != nil {
		return p, r, err
	}
	if !t.deletedAll {
		previous, replaced = p, r
		t.account(key, p, r, value, true)
	}
	if tr == nil {
		return previous, replaced, nil
	}
	if t.deletedAll {
		after, err := t.Tx.Len()
		if err != nil {
			return "", false, err
		}
		if after == before {
			previous, replaced = t.indexedValue(tr, key), true
		}
	}
	if t.bulk && !replaced {
		t.pending = append(t.pending, indexEntry{key, value})
		return previous, false, nil
	}
	t.flush()
	if replaced {
		t.remove(tr, indexEntry{key, previous})
	}
	t.idx.set(tr, indexEntry{key, value})
	t.undo = append(t.undo, undoStep{tree: tr, entry: indexEntry{key, value}, added: true})
	return previous, replaced, nil
}

// Delete deletes the record at key, as buntdb's Delete, and its index
// entry.
func (t *storeTx) Delete(key string) (string, error) {
	value, err := t.Tx.Delete(key)
	if err == nil && !t.deletedAll {
		t.account(key, value, true, "", false)
	}
	if err != nil || t.idx == nil {
		return value, err
	}
	if tr := t.idx.tree(key); tr != nil {
		t.flush()
		t.remove(tr, indexEntry{key, value})
	}
	return value, nil
}

// DeleteAll deletes every record, as buntdb's DeleteAll, and starts the
// index afresh.
func (t *storeTx) DeleteAll() error {
	if err := t.Tx.DeleteAll(); err != nil || t.idx == nil {
		return err
	}
	old := *t.idx
	t.undo = append(t.undo, undoStep{restore: &old})
	*t.idx = *newListIndex()
	t.bulk, t.pending, t.deletedAll = true, nil, true
	return nil
}

// flush indexes the entries gathered since DeleteAll, into the trees
// DeleteAll emptied. It needs no undo step of its own: undoing DeleteAll
// restores the trees as they were before it.
func (t *storeTx) flush() {
	if !t.bulk {
		return
	}
	// Referrals to the front, qualified referrals after, in place.
	es, n := t.pending, 0
	for i, e := range es {
		if t.idx.tree(e.key) == t.idx.referrals {
			es[n], es[i] = es[i], es[n]
			n++
		}
	}
	t.idx.loadSorted(t.idx.referrals, es[:n])
	t.idx.loadSorted(t.idx.qualified, es[n:])
	t.bulk, t.pending = false, nil
}

// indexedValue is the value the index holds for key in tr, gathered
// entries included (flushed first); "" if it holds none. It walks the
// whole tree, as it is called only when a Set after DeleteAll replaces a
// record, which loading a set does only on a conflict.
func (t *storeTx) indexedValue(tr *indexTree, key string) (value string) {
	t.flush()
	tr.Scan(func(e *indexEntry) bool {
		if e.key == key {
			value = e.value
			return false
		}
		return true
	})
	return value
}

func (t *storeTx) remove(tr *indexTree, e indexEntry) {
	if t.idx.delete(tr, e) {
		t.undo = append(t.undo, undoStep{tree: tr, entry: e})
	}
}

// rollback undoes the transaction's changes of the index, newest first.
func (t *storeTx) rollback() {
	t.bulk, t.pending = false, nil
	for i := len(t.undo) - 1; i >= 0; i-- {
		switch u := t.undo[i]; {
		case u.restore != nil:
			*t.idx = *u.restore
		case u.added:
			t.idx.delete(u.tree, u.entry)
		default:
			t.idx.set(u.tree, u.entry)
		}
	}
	t.undo = nil
}

// Listing index walks, in the transaction's view of the store.

// descendIndex walks the records of keyPrefix's kind newest first from
// the sort line from (see descend).
func (t *storeTx) descendIndex(keyPrefix, from string, fn func(key, value string) bool) {
	t.flush()
	descend(t.idx.tree(keyPrefix), &t.probe, from, fn)
}

// ascendIndex walks the records of keyPrefix's kind oldest first between
// the sort lines from and to (see ascendRange).
func (t *storeTx) ascendIndex(keyPrefix, from, to string, fn func(key, value string) bool) {
	t.flush()
	ascendRange(t.idx.tree(keyPrefix), &t.probe, from, to, fn)
}
