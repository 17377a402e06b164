package scenarios

import (
	"errors"
	"fmt"
)

// DefaultMaxRules is how many rules may be active at once unless
// Config.MaxRules says otherwise. Every change of the rules rebuilds the
// match index (see ruleIndex), and an admin call in shared mode reads and
// rewrites the whole list, so an unbounded list would let one caller slow
// every other down; real test suites use a handful.
const DefaultMaxRules = 1000

// MaxActivations bounds the scenario activations listed at once (an
// activation stays listed after its rules retire, so rules alone do not
// bound them).
const MaxActivations = 1000

// ErrTooManyRules is returned (wrapped) by Add and Activate when the rules
// or activations would exceed their cap; nothing is added.
var ErrTooManyRules = errors.New("too many active rules")

// checkRoom refuses adding n rules (and, with activation, one more
// activation) beyond the caps. e.mu must be held.
func (e *MemoryEngine) checkRoom(n int, activation bool) error {
	if len(e.entries)+n > e.maxRules {
		return fmt.Errorf("%w: %d are active and at most %d may be; remove some (DELETE /__sandbox/scenarios/{id}) or clear them all",
			ErrTooManyRules, len(e.entries), e.maxRules)
	}
	if activation && len(e.activations) >= MaxActivations {
		return fmt.Errorf("%w: %d scenario activations are listed and at most %d may be; deactivate some",
			ErrTooManyRules, len(e.activations), MaxActivations)
	}
	return nil
}
