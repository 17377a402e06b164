package ratelimit

import (
	"context"
	"sync"
	"time"
)

// maxRememberedCalls bounds the call ids a Memory store remembers; a
// retried Take comes within moments of the first.
const maxRememberedCalls = 1024

// Memory is the Store of a sandbox that runs alone: states in a map, at
// most one per client. It is safe for concurrent use.
type Memory struct {
	mu     sync.Mutex
	states map[string]State
	calls  map[string]Decision
	order  []string // call ids, oldest first
}

// NewMemory returns an empty Memory store.
func NewMemory() *Memory {
	return &Memory{states: map[string]State{}, calls: map[string]Decision{}}
}

// Get returns key's state.
func (m *Memory) Get(_ context.Context, key string) (State, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st, ok := m.states[key]
	return st, ok, nil
}

// Take judges key's bucket and spends a token when it holds one, under
// m's lock (see Store).
func (m *Memory) Take(_ context.Context, key, call string, l Limit, now time.Time) (Decision, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if done, ok := m.calls[call]; ok {
		return done, nil
	}
	cur, found := m.states[key]
	next, d, changed := take(cur, found, l, now)
	if !changed {
		return d, nil
	}
	m.states[key] = next
	if d.Allowed {
		m.calls[call] = d
		m.order = append(m.order, call)
		if len(m.order) > maxRememberedCalls {
			delete(m.calls, m.order[0])
			m.order = m.order[1:]
		}
	}
	return d, nil
}

// Forget drops key's bucket.
func (m *Memory) Forget(_ context.Context, key string) error {
	m.mu.Lock()
	delete(m.states, key)
	m.mu.Unlock()
	return nil
}

// Reset drops every bucket.
func (m *Memory) Reset(context.Context) error {
	m.mu.Lock()
	clear(m.states)
	m.mu.Unlock()
	return nil
}

// Len is how many buckets m holds: tests check that forged identities add
// none.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.states)
}
