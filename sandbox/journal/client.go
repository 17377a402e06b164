package journal

import "context"

// ClearClient drops one client's entries and keeps everyone else's, in
// order and with their ids: a CI job clearing its own journal must not
// clear another job's evidence.
func (j *Journal) ClearClient(_ context.Context, clientID string) error {
	if clientID == "" {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	kept := 0
	for i := range j.n {
		src := (j.head + i) % len(j.entries)
		if j.entries[src].ClientID == clientID {
			j.bytes -= j.sizes[src]
			continue
		}
		// Compact towards the head; dst never passes src.
		dst := (j.head + kept) % len(j.entries)
		j.entries[dst], j.sizes[dst] = j.entries[src], j.sizes[src]
		kept++
	}
	for i := kept; i < j.n; i++ {
		j.entries[(j.head+i)%len(j.entries)] = Entry{}
	}
	j.n = kept
	return nil
}
