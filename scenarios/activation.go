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
}
