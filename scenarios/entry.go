package scenarios

import "time"

// entry is an active rule with its counting state, guarded by
// MemoryEngine.mu. rule, binding and addedAt never change once the entry is
// made, so the match index reads them without the lock.
type entry struct {
	rule    Rule
	binding string // client id of the scenario activation, "" if unbound
	addedAt time.Time
	// startedAt is when a timeline started, on its own clock.
	startedAt time.Time
	// gone marks an entry removed or retired after a request picked it as
	// a candidate; that request skips it.
	gone bool

	lastFired time.Time
	matches   int
	hits      int
	counts    counter // times/after when not per client
	// clients holds times/after per client id. Its keys are registered
	// clients, "" (no client) and UnregisteredClients, so it stays as small
	// as the client list whatever ids callers make up.
	clients map[string]*counter
}

// counter is one times/after tally: for the rule, or for one client.
type counter struct {
	matches int
	hits    int
}

// newEntry makes the active form of a validated rule r.
func newEntry(r Rule, binding string, now time.Time) *entry {
	return &entry{rule: r, binding: binding, addedAt: now}
}

// fire counts a request the rule matched, with r's counting (the rule's
// own, or its current phase's), and reports whether the rule fires
// on it: after its "after" count, within its "times", and when its
// probability draw hits. The draw is derived from (seed, match counter), see probabilityDraw, exactly as the Redis script derives it.
func (en *entry) fire(r Rule, clientID string) bool {
	c := &en.counts
	if r.PerClient {
		if en.clients == nil {
			en.clients = make(map[string]*counter)
		}
		c = en.clients[clientID]
		if c == nil {
			c = &counter{}
			en.clients[clientID] = c
		}
	}
	en.matches++
	c.matches++
	if c.matches <= r.After {
		return false
	}
	if r.Times > 0 && c.hits >= r.Times {
		return false
	}
	if p := r.Probability; p > 0 && p < 1 && probabilityDraw(r.Seed, int64(en.matches)) >= p {
		return false
	}
	c.hits++
	en.hits++
	return true
}

// retired reports whether the rule has used up its times. Per-client rules
// never retire: a client not seen yet still has its full count.
func (en *entry) retired() bool {
	return !en.rule.PerClient && en.rule.Times > 0 && en.counts.hits >= en.rule.Times
}

// status reports the rule and its counters.
func (en *entry) status() RuleStatus {
	s := RuleStatus{
		Rule:    cloneRule(en.rule),
		Matches: en.matches,
		Hits:    en.hits,
		AddedAt: en.addedAt,
	}
	if en.rule.Times > 0 && !en.rule.PerClient {
		left := en.rule.Times - en.counts.hits
		s.Remaining = &left
	}
	if en.rule.PerClient {
		s.ClientHits = make(map[string]int, len(en.clients))
		for id, c := range en.clients {
			s.ClientHits[id] = c.hits
		}
	}
	if !en.lastFired.IsZero() {
		t := en.lastFired
		s.LastFiredAt = &t
	}
	return s
}
