package scenarios

import (
	"errors"
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
	// Ended is set by Engine.Active, never stored: none of the
	// activation's rules can fire again (each timeline is past its last
	// phase, each counted rule has used its times). A partner reading the
	// listing must not take an incident that is over for one in progress.
	Ended bool `json:"ended,omitempty"`
}

// markEnded returns acts with Ended set on those of which live holds no
// rule; live reports whether a rule of (name, binding) can still fire.
func markEnded(acts []Activation, live func(name, binding string) bool) []Activation {
	out := make([]Activation, len(acts))
	for i, a := range acts {
		a.Ended = !live(a.Name, a.ClientID)
		out[i] = a
	}
	return out
}

// liveIn reports, for markEnded, whether entries hold a rule of (name,
// binding) that has not ended on now.
func liveIn(entries []*entry, now clientClock) func(name, binding string) bool {
	return func(name, binding string) bool {
		for _, en := range entries {
			if en.rule.Scenario == name && en.binding == binding && !en.ended(now) && !en.retired() {
				return true
			}
		}
		return false
	}
}
