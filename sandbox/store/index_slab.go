package store

// entrySlab holds the entries the listing index's trees point to, in
// large arrays: a tree loaded whole (loadSorted) points into one array of
// its own, in key order, and writes take slots of slabChunk entries at a
// time.
//
// Why the trees do not hold the entries themselves: in listing order the
// entries' strings lie all over the heap, and every garbage collection
// visits each string a tree entry points to, a cache miss each. With a
// million referrals that made a full collection take 0.35 s instead of
// 0.1 s (the one the sandbox makes once open, and every one after it).
// The trees now point into a few large arrays, which the collector finds
// at once, and the arrays point to the strings in about the order buntdb
// allocated them.
//
// The slab is changed only where the index is, under the store's write
// lock. A slot freed by a delete is cleared (its strings can go) and
// reused by a later write; readers never keep a pointer past their walk.
type entrySlab struct {
	free []*indexEntry // slots given back, reused first
	next []indexEntry  // the unused rest of the newest chunk
}

// slabChunk is how many slots a write's chunk holds (32 KiB).
const slabChunk = 1024

// put stores e in a free slot and returns it.
func (s *entrySlab) put(e indexEntry) *indexEntry {
	var p *indexEntry
	if n := len(s.free); n > 0 {
		p, s.free = s.free[n-1], s.free[:n-1]
	} else {
		if len(s.next) == 0 {
			s.next = make([]indexEntry, slabChunk)
		}
		p, s.next = &s.next[0], s.next[1:]
	}
	*p = e
	return p
}

// release clears the slot p, which no tree holds any more, for reuse.
func (s *entrySlab) release(p *indexEntry) {
	*p = indexEntry{}
	s.free = append(s.free, p)
}
