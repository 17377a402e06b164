package scenarios

import (
	"context"
	"slices"
)

// ClearClient implements Engine.ClearClient. A CI job resetting its own
// client leaves every other job's failures as they were.
func (e *MemoryEngine) ClearClient(_ context.Context, clientID string) error {
	if clientID == "" {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.deleteEntries(func(en *entry) bool { return en.binding == clientID || en.rule.ClientID == clientID })
	for _, en := range e.entries {
		delete(en.clients, clientID)
	}
	e.activations = slices.DeleteFunc(e.activations, func(a Activation) bool { return a.ClientID == clientID })
	return nil
}
