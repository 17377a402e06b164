package scenarios

import (
	"context"
	"fmt"
	"slices"
)

// Activate implements Engine.Activate.
func (e *MemoryEngine) Activate(ctx context.Context, name, clientID string) ([]Rule, error) {
	sc, err := scenarioNamed(ctx, e.lib, name)
	if err != nil {
		return nil, err
	}
	return e.activate(sc, clientID)
}

// activate is Activate of sc, looked up already: the RedisEngine looks a
// scenario up before its transaction, never on another connection while it
// holds one for the transaction's WATCH (see RedisEngine.newID).
func (e *MemoryEngine) activate(sc Scenario, clientID string) ([]Rule, error) {
	name := sc.Name
	e.mu.Lock()
	defer e.mu.Unlock()
	e.retireEnded()
	// Room is counted without the activation this one replaces, and checked
	// before it is removed, so a refused activation changes nothing.
	replaced := e.countActivation(name, clientID)
	if err := e.checkRoom(len(sc.Rules)-replaced, !e.hasActivation(name, clientID)); err != nil {
		return nil, fmt.Errorf("activate scenario %q: %w", name, err)
	}
	before, beforeActs := slices.Clone(e.entries), slices.Clone(e.activations)
	e.removeActivation(name, clientID)
	now := e.clock.Now()
	added := make([]Rule, 0, len(sc.Rules))
	for _, r := range sc.Rules {
		id, err := e.assignID()
		if err != nil {
			// Undo the partial activation so it is all or nothing.
			e.entries, e.activations = before, beforeActs
			for _, en := range e.entries {
				en.gone = false
			}
			e.changed()
			return nil, fmt.Errorf("activate scenario %q: %w", name, err)
		}
		r.ID = id
		r.Scenario = name
		if clientID != "" {
			r.ClientID = clientID
		}
		e.entries = append(e.entries, e.newEntry(r, clientID, now))
		added = append(added, cloneRule(r))
	}
	e.activations = append(e.activations, Activation{Name: name, ClientID: clientID, ActivatedAt: now})
	e.changed()
	return added, nil
}

// Deactivate implements Engine.Deactivate.
func (e *MemoryEngine) Deactivate(_ context.Context, name, clientID string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if clientID != "" {
		if !e.removeActivation(name, clientID) {
			return fmt.Errorf("scenario %q for client %q: %w", name, clientID, ErrNotFound)
		}
		return nil
	}
	before := len(e.activations)
	e.activations = slices.DeleteFunc(e.activations, func(a Activation) bool { return a.Name == name })
	e.deleteEntries(func(en *entry) bool { return en.rule.Scenario == name })
	if len(e.activations) == before {
		return fmt.Errorf("scenario %q: %w", name, ErrNotFound)
	}
	return nil
}

// Active implements Engine.Active.
func (e *MemoryEngine) Active(context.Context) ([]Activation, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return markEnded(e.activations, liveIn(e.entries, e.clientNow)), nil
}

// countActivation counts the active rules of activation (name, clientID).
// e.mu must be held.
func (e *MemoryEngine) countActivation(name, clientID string) int {
	n := 0
	for _, en := range e.entries {
		if en.rule.Scenario == name && en.binding == clientID {
			n++
		}
	}
	return n
}

// hasActivation reports whether (name, clientID) is listed. e.mu must be
// held.
func (e *MemoryEngine) hasActivation(name, clientID string) bool {
	return slices.ContainsFunc(e.activations, func(a Activation) bool { return a.Name == name && a.ClientID == clientID })
}

// removeActivation drops the activation (name, clientID) and its rules and
// reports whether it existed. e.mu must be held.
func (e *MemoryEngine) removeActivation(name, clientID string) bool {
	before := len(e.activations)
	e.activations = slices.DeleteFunc(e.activations, func(a Activation) bool {
		return a.Name == name && a.ClientID == clientID
	})
	e.deleteEntries(func(en *entry) bool { return en.rule.Scenario == name && en.binding == clientID })
	return len(e.activations) < before
}
