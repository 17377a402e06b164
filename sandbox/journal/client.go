package journal

// ClearClient drops one client's entries and keeps everyone else's, in
// order and with their ids: a CI job clearing its own journal must not
// clear another job's evidence.
func (j *Journal) ClearClient(clientID string) {
	if clientID == "" {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	var kept []Entry
	j.each(func(e Entry) {
		if e.ClientID != clientID {
			kept = append(kept, e)
		}
	})
	clear(j.entries)
	j.next = copy(j.entries, kept) % len(j.entries)
	j.full = len(kept) == len(j.entries)
}
