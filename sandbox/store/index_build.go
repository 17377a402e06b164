package store

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/tidwall/buntdb"
)

// buildIndex builds the listing index of the records db holds, as a store
// opens: one pass over each key space, one sort, and the sorted entries
// loaded into each tree in order.
//
// Inserting the records one at a time, as buntdb builds an index, was 80%
// of opening a data file of a million referrals (about 15 of 18 s): in key
// order the records come in random listing order, and every one of the
// comparisons down the tree read a value from an unpredictable place in
// the heap and waited for memory. Sorting first and loading the tree in
// order (each entry goes at its right edge) leaves the sort as the only
// work that compares, and sortEntries keeps it to memory it reads in order.
func buildIndex(db *buntdb.DB) (*listIndex, error) {
	idx := newListIndex()
	err := db.View(func(tx *buntdb.Tx) error {
		// Room for every key at once (records are most of them), reused
		// for each kind: loadSorted keeps no hold on it.
		n, err := tx.Len()
		if err != nil {
			return err
		}
		es := make([]indexEntry, 0, n)
		for _, prefix := range []string{referralPrefix, qualifiedPrefix} {
			es = es[:0]
			// The key spaces "r:" and "q:" end before "r;" and "q;".
			end := prefix[:len(prefix)-1] + ";"
			err := tx.AscendRange("", prefix, end, func(k, v string) bool {
				es = append(es, indexEntry{k, v})
				return true
			})
			if err != nil {
				return err
			}
			idx.loadSorted(idx.tree(prefix), es)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("build the listing index: %w", err)
	}
	return idx, nil
}

// loadSorted fills the empty tree tr of x with es: copied into one array
// of the slab in their order (see entrySlab), sorted once, loaded in order
// (under the order's loading form, see indexOrder) and compacted.
func (x *listIndex) loadSorted(tr *indexTree, es []indexEntry) {
	es = slices.Clone(es) // the array the tree points into (see entrySlab)
	for _, r := range sortEntries(es) {
		x.order.loading = &es[r.i]
		tr.Load(&es[r.i])
	}
	x.order.loading = nil
	*tr = *compacted(tr)
}

// compacted returns a copy of tr whose nodes hold no spare room. Load
// fills a leaf and splits it in two halves that share its array; the right
// half then grows into a new array, and the left half keeps the old one
// alive at half use, so a loaded tree takes twice its entries' size. A
// copy of a node has exactly its items' capacity, and changing one entry
// of each node of a copy of the tree copies every node.
func compacted(tr *indexTree) *indexTree {
	var touch []*indexEntry
	tr.Walk(func(items []*indexEntry) bool {
		touch = append(touch, items[0])
		return true
	})
	c := tr.Copy()
	for _, e := range touch {
		c.Set(e)
	}
	return c
}

// sortRank is an entry as sortEntries sorts it: 16 bytes of its sort line
// from the offset being compared, big-endian so that comparing the numbers
// compares the bytes, the entry's position and its line's length.
type sortRank struct {
	hi, lo uint64
	i, n   int32
}

// sortEntries returns the ranks of es in lessEntry's order. Comparing
// the entries themselves would read two values scattered over the heap in
// every one of the n log n comparisons; instead each round copies 16 bytes
// of each line into a small fixed-size rank (one read per entry), sorts
// the ranks, and goes on to the next 16 bytes only within runs whose bytes
// so far are equal. Runs that short lines end, or that are small, are
// sorted by line and key, which settles what zero padding cannot (a line
// ending against one going on with NUL bytes) and orders equal lines by
// key.
//
// A large index takes its first round on two cores: each reads and sorts
// half of the lines, and the halves are merged (see inHalves).
func sortEntries(es []indexEntry) []sortRank {
	ranks := make([]sortRank, len(es))
	// The length of the prefix every line shares, of each half: the
	// lines' common prefix is what the two halves' prefixes share.
	var prefixes [2]string
	split := inHalves(len(es), func(half, from, to int) {
		var first string
		common := 0
		for i := from; i < to; i++ {
			line, _ := splitValue(es[i].value)
			ranks[i].i, ranks[i].n = int32(i), int32(len(line))
			if i == from {
				first, common = line, len(line)
			}
			common = min(common, sharedPrefix(first[:common], line))
		}
		prefixes[half] = first[:common]
	})
	common := len(prefixes[0])
	if split {
		common = sharedPrefix(prefixes[0], prefixes[1])
	}
	// Bytes every line shares order nothing: start after them (a run of
	// a single client's records would spend its first round on its id).
	refine(es, ranks, common)
	return ranks
}

// parallelFrom is the number of entries from which inHalves splits its
// work in two.
const parallelFrom = 1 << 15

// inHalves calls fn on the range of indexes [0, n): on its two halves at
// once (half 0 and 1) from parallelFrom on and with more than one core,
// else once (half 0) on the whole. It reports whether it split.
func inHalves(n int, fn func(half, from, to int)) (split bool) {
	if n < parallelFrom || runtime.GOMAXPROCS(0) < 2 {
		fn(0, 0, n)
		return false
	}
	var wg sync.WaitGroup
	wg.Go(func() { fn(1, n/2, n) })
	fn(0, 0, n/2)
	wg.Wait()
	return true
}

// sharedPrefix is the length of the longest common prefix of a and b.
func sharedPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// smallRun is the length below which a run of equal ranks is sorted by
// comparing its entries rather than refined.
const smallRun = 8

func refine(es []indexEntry, ranks []sortRank, offset int) {
	var longer [2]bool // does any line go on past this round's 16 bytes?
	inHalves(len(ranks), func(half, from, to int) {
		for k := from; k < to; k++ {
			r := &ranks[k]
			r.hi, r.lo = lineBytes(es[r.i].value[:r.n], offset)
			longer[half] = longer[half] || int(r.n) > offset+16
		}
	})
	if !longer[0] && !longer[1] {
		sortByEntry(es, ranks)
		return
	}
	sortRanks(ranks)
	for start := 0; start < len(ranks); {
		end := start + 1
		for end < len(ranks) && ranks[end].hi == ranks[start].hi && ranks[end].lo == ranks[start].lo {
			end++
		}
		switch run := ranks[start:end]; {
		case len(run) == 1:
		case len(run) < smallRun:
			sortByEntry(es, run)
		default:
			refine(es, run, offset+16)
		}
		start = end
	}
}

// sortRanks sorts ranks by their 16 bytes; a large slice in two halves at
// once, then merged.
func sortRanks(ranks []sortRank) {
	byBytes := func(a, b sortRank) int {
		if c := cmp.Compare(a.hi, b.hi); c != 0 {
			return c
		}
		return cmp.Compare(a.lo, b.lo)
	}
	split := inHalves(len(ranks), func(_, from, to int) {
		slices.SortFunc(ranks[from:to], byBytes)
	})
	if !split {
		return
	}
	mid := len(ranks) / 2
	a, b := slices.Clone(ranks[:mid]), ranks[mid:]
	k := 0
	for len(a) > 0 && len(b) > 0 {
		if byBytes(b[0], a[0]) < 0 {
			ranks[k], b = b[0], b[1:]
		} else {
			ranks[k], a = a[0], a[1:]
		}
		k++
	}
	// What is left of b is already in place.
	copy(ranks[k:], a)
}

// sortByEntry sorts ranks by their entries' lines, then keys: lessEntry's
// order, with the lines' lengths already known.
func sortByEntry(es []indexEntry, ranks []sortRank) {
	slices.SortFunc(ranks, func(a, b sortRank) int {
		ea, eb := es[a.i], es[b.i]
		if c := strings.Compare(ea.value[:a.n], eb.value[:b.n]); c != 0 {
			return c
		}
		return strings.Compare(ea.key, eb.key)
	})
}

// lineBytes is line's 16 bytes from offset, zero-padded, as two big-endian
// numbers.
func lineBytes(line string, offset int) (hi, lo uint64) {
	var b [16]byte
	if offset < len(line) {
		copy(b[:], line[offset:])
	}
	return binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
}
