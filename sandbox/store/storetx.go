package store

import (
	"github.com/tidwall/btree"
	"github.com/tidwall/buntdb"
)

// storeTx is a buntdb transaction that keeps the store's listing index in
// step: Set, Delete and DeleteAll change the index as they change the
// records, and note how to undo it, which updateTx does when the
// transaction does not commit (an error of its function, or of writing the
// file), so that the index never holds a record buntdb rolled back. Every
// other method is buntdb's.
type storeTx struct {
	*buntdb.Tx
	idx  *listIndex // nil while building a reset file, which has no index
	undo []undoStep
}

// undoStep reverses one change of the index: an entry added or removed, or
// (restore set) both trees replaced by DeleteAll.
type undoStep struct {
	tree    *btree.BTreeG[indexEntry]
	entry   indexEntry
	added   bool
	restore *listIndex
}

// Set stores value at key, as buntdb's Set, and indexes the record.
func (t *storeTx) Set(key, value string, opts *buntdb.SetOptions) (previous string, replaced bool, err error) {
	previous, replaced, err = t.Tx.Set(key, value, opts)
	if err != nil || t.idx == nil {
		return previous, replaced, err
	}
	if tr := t.idx.tree(key); tr != nil {
		if replaced {
			t.remove(tr, indexEntry{key, previous})
		}
		tr.Set(indexEntry{key, value})
		t.undo = append(t.undo, undoStep{tree: tr, entry: indexEntry{key, value}, added: true})
	}
	return previous, replaced, nil
}

// Delete deletes the record at key, as buntdb's Delete, and its index
// entry.
func (t *storeTx) Delete(key string) (string, error) {
	value, err := t.Tx.Delete(key)
	if err != nil || t.idx == nil {
		return value, err
	}
	if tr := t.idx.tree(key); tr != nil {
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
	return nil
}

func (t *storeTx) remove(tr *btree.BTreeG[indexEntry], e indexEntry) {
	if _, ok := tr.Delete(e); ok {
		t.undo = append(t.undo, undoStep{tree: tr, entry: e})
	}
}

// rollback undoes the transaction's changes of the index, newest first.
func (t *storeTx) rollback() {
	for i := len(t.undo) - 1; i >= 0; i-- {
		switch u := t.undo[i]; {
		case u.restore != nil:
			*t.idx = *u.restore
		case u.added:
			u.tree.Delete(u.entry)
		default:
			u.tree.Set(u.entry)
		}
	}
	t.undo = nil
}

// Listing index walks, in the transaction's view of the store.

// descendIndex walks the records of keyPrefix's kind newest first from
// the sort line from (see descend).
func (t *storeTx) descendIndex(keyPrefix, from string, fn func(key, value string) bool) {
	descend(t.idx.tree(keyPrefix), from, fn)
}

// ascendIndex walks the records of keyPrefix's kind oldest first between
// the sort lines from and to (see ascendRange).
func (t *storeTx) ascendIndex(keyPrefix, from, to string, fn func(key, value string) bool) {
	ascendRange(t.idx.tree(keyPrefix), from, to, fn)
}
