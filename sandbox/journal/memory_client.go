package journal

import "context"

// ClearClient drops one client's entries and keeps everyone else's, in
// order and with their ids: a CI job clearing its own journal must not
// clear another job's evidence. It visits that client's entries only.
func (j *Journal) ClearClient(_ context.Context, clientID string) error {
	if clientID == "" {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, id := range j.byClient[clientID] {
		i := j.find(id)
		if i < 0 || j.slots[i].gone {
			continue // cannot happen: the index follows the queue
		}
		j.bytes -= j.slots[i].size
		j.slots[i] = slot{e: Entry{ID: id}, gone: true} // keeps its id for find
		j.live--
		j.dead++
	}
	delete(j.byClient, clientID)
	j.skipGone()
	j.compact()
	return nil
}
