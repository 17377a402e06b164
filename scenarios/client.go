package scenarios

import "slices"

// ClearClient removes everything that concerns one client and nothing
// else: the rules bound to it (a scenario activated for it, or a rule with
// its clientId), its activations, and its tallies in per-client rules that
// others share. A CI job resetting its own client leaves every other job's
// failures as they were.
func (e *Engine) ClearClient(clientID string) {
	if clientID == "" {
		return
	}
	if e.shared != nil {
		e.shared.clearClient(e, clientID)
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.entries = slices.DeleteFunc(e.entries, func(en *entry) bool {
		return en.binding == clientID || en.rule.ClientID == clientID
	})
	for _, en := range e.entries {
		delete(en.clients, clientID)
	}
	e.activations = slices.DeleteFunc(e.activations, func(a Activation) bool { return a.ClientID == clientID })
}
