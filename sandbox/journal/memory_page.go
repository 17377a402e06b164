package journal

import (
	"context"
	"slices"
	"sort"
)

// After returns the first limit entries matching f (f.Limit is ignored)
// whose id is above f.AfterID, oldest first, within MaxPageBytes, and
// whether more matching entries follow them. Passing the last returned id as the next AfterID
// walks the journal without repeating or skipping an entry that is still
// kept.
func (j *Journal) After(_ context.Context, f Filter, limit int) ([]Entry, bool, error) {
	limit = pageLimit(limit)
	j.mu.Lock()
	defer j.mu.Unlock()
	// Ids grow from the oldest entry to the newest: seek, don't scan.
	q := j.slots[j.head:]
	start := sort.Search(len(q), func(i int) bool { return q[i].e.ID > f.AfterID })
	var out []Entry
	var bytes int64
	for _, sl := range q[start:] {
		e := sl.e
		if sl.gone || !f.matches(e) {
			continue
		}
		if !fitsPage(len(out), bytes, sl.size, limit, MaxPageBytes) {
			return out, true, nil
		}
		out = append(out, e)
		bytes += sl.size
	}
	return out, false, nil
}

// Latest returns the newest limit entries matching f (f.Limit is ignored),
// oldest first, within MaxPageBytes.
func (j *Journal) Latest(_ context.Context, f Filter, limit int) ([]Entry, error) {
	limit = pageLimit(limit)
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []Entry
	var bytes int64
	q := j.slots[j.head:]
	for i := len(q) - 1; i >= 0; i-- {
		sl := q[i]
		if sl.gone || !f.matches(sl.e) {
			continue
		}
		if !fitsPage(len(out), bytes, sl.size, limit, MaxPageBytes) {
			break
		}
		out = append(out, sl.e)
		bytes += sl.size
	}
	slices.Reverse(out)
	return out, nil
}
