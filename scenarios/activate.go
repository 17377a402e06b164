package scenarios

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ErrUnknownScenario is returned (wrapped) for a scenario name the library
// does not hold.
var ErrUnknownScenario = errors.New("unknown scenario")

// Activation is one named scenario in the active set.
type Activation struct {
	Name string `json:"name"`
	// ClientID is the client the activation is bound to; empty when its
	// rules keep their own clientId (usually: every client).
	ClientID    string    `json:"clientId,omitempty"`
	ActivatedAt time.Time `json:"activatedAt"`
}

// Activate adds the rules of scenario name to the active set, after the
// rules already there, tagged with the scenario name and with fresh ids. A
// non-empty clientID binds the activation: it replaces every rule's clientId,
// so parallel CI jobs using different clients never see each other's
// failures. An activation is keyed by (name, clientID): activating the same
// pair again replaces its rules (with fresh counters) instead of duplicating
// them, while the same scenario bound to another client stays untouched.
func (e *Engine) Activate(name, clientID string) ([]Rule, error) {
	sc, err := e.scenario(name)
	if err != nil {
		return nil, err
	}
	if e.shared != nil {
		return e.shared.activate(e, name, clientID)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	// Room is counted without the activation this one replaces, and checked
	// before it is removed, so a refused activation changes nothing.
	replaced := e.countActivation(name, clientID)
	if err := e.checkRoom(len(sc.Rules)-replaced, !e.hasActivation(name, clientID)); err != nil {
		return nil, fmt.Errorf("activate scenario %q: %w", name, err)
	}
	e.removeActivation(name, clientID)
	now := e.clock.Now()
	added := make([]Rule, 0, len(sc.Rules))
	for _, r := range sc.Rules {
		id, err := e.assignID()
		if err != nil {
			// Undo the partial activation so it is all or nothing.
			e.removeActivation(name, clientID)
			return nil, fmt.Errorf("activate scenario %q: %w", name, err)
		}
		r.ID = id
		r.Scenario = name
		if clientID != "" {
			r.ClientID = clientID
		}
		e.entries = append(e.entries, newEntry(r, clientID, now))
		added = append(added, cloneRule(r))
	}
	e.activations = append(e.activations, Activation{Name: name, ClientID: clientID, ActivatedAt: now})
	return added, nil
}

// Deactivate removes scenario name from the active set: only the activation
// bound to clientID, or every activation of name when clientID is empty.
// Rules added directly or by other scenarios stay. It reports whether
// anything was active.
func (e *Engine) Deactivate(name, clientID string) bool {
	if e.shared != nil {
		return e.shared.deactivate(e, name, clientID)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if clientID != "" {
		return e.removeActivation(name, clientID)
	}
	before := len(e.activations)
	e.activations = slices.DeleteFunc(e.activations, func(a Activation) bool { return a.Name == name })
	e.entries = slices.DeleteFunc(e.entries, func(en *entry) bool { return en.rule.Scenario == name })
	return len(e.activations) < before
}

// Active lists the scenario activations in activation order. An activation
// stays listed until deactivated, even when all its rules have retired.
func (e *Engine) Active() []Activation {
	if e.shared != nil {
		return e.shared.active()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.activations)
}

// DecideScenario is the per-request form (X-Sandbox-Scenario: NAME): it
// returns the Decision of the first rule of scenario name that matches req,
// or false when none matches. The rule is applied as if it fired: its times,
// after and probability are ignored and no counter anywhere changes; its
// status, error, fault and delay are honoured. Delays are drawn from one
// engine-wide PRNG seeded 0, so a fixed sequence of such requests replays.
// The RuleID names the rule's position, e.g. "flaky.rules[0]".
func (e *Engine) DecideScenario(name string, req Request) (Decision, bool, error) {
	sc, err := e.scenario(name)
	if err != nil {
		return Decision{}, false, err
	}
	for i, r := range sc.Rules {
		if !r.Matches(req) {
			continue
		}
		r.ID = fmt.Sprintf("%s.rules[%d]", name, i)
		r.Scenario = name
		e.mu.Lock()
		d := r.decide(e.adhoc)
		e.mu.Unlock()
		return d, true, nil
	}
	return Decision{}, false, nil
}

// scenario looks name up in the library.
func (e *Engine) scenario(name string) (Scenario, error) {
	sc, ok := e.lib.Get(name)
	if !ok {
		return Scenario{}, fmt.Errorf("%w %q; known: %s", ErrUnknownScenario, name, strings.Join(e.lib.Names(), ", "))
	}
	return sc, nil
}

// countActivation counts the active rules of activation (name, clientID).
// e.mu must be held.
func (e *Engine) countActivation(name, clientID string) int {
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
func (e *Engine) hasActivation(name, clientID string) bool {
	return slices.ContainsFunc(e.activations, func(a Activation) bool { return a.Name == name && a.ClientID == clientID })
}

// removeActivation drops the activation (name, clientID) and its rules and
// reports whether it existed. e.mu must be held.
func (e *Engine) removeActivation(name, clientID string) bool {
	before := len(e.activations)
	e.activations = slices.DeleteFunc(e.activations, func(a Activation) bool {
		return a.Name == name && a.ClientID == clientID
	})
	e.entries = slices.DeleteFunc(e.entries, func(en *entry) bool {
		return en.rule.Scenario == name && en.binding == clientID
	})
	return len(e.activations) < before
}
