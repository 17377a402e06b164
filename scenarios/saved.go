package scenarios

import (
	"context"
	"errors"
)

// SavedStore holds the scenarios saved at run time (POST
// /__sandbox/library), apart from the ones that come from the binary and
// its flags (see Library). It has two implementations that behave alike
// (the suite in scenarios/savedtest pins it): MemorySaved, for a sandbox
// that runs alone, and RedisSaved, which replicas share, so a scenario
// saved through one replica is known to every other at once.
//
// A failure of the backend is an error wrapping ErrUnavailable, which the
// caller answers 503: never "not saved", "not found" or an empty list.
type SavedStore interface {
	// Save stores sc, which the caller has validated. A name already
	// saved gives an error wrapping ErrScenarioExists; MaxSavedScenarios
	// saved already, one wrapping ErrLibraryFull. Both are checked
	// atomically with the store, so the bounds are exact however many
	// replicas save at once; nil means the backend has taken it.
	Save(ctx context.Context, sc Scenario) error
	// Get returns the scenario saved as name, or false when there is none.
	Get(ctx context.Context, name string) (Scenario, bool, error)
	// List returns every saved scenario, sorted by name, never nil.
	List(ctx context.Context) ([]Scenario, error)
	// Delete removes the scenario saved as name, freeing the name and its
	// room under MaxSavedScenarios; no saved scenario of that name gives
	// an error wrapping ErrNotFound. In shared mode saved scenarios
	// outlive restarts, so without it a team sandbox only fills up.
	Delete(ctx context.Context, name string) error
}

// savedSource is the Source of a saved scenario, for error messages.
const savedSource = "saved through the admin API"

// Errors of Save (wrapped).
var (
	// ErrScenarioExists: the name is taken.
	ErrScenarioExists = errors.New("a scenario with that name exists")
	// ErrLibraryFull: MaxSavedScenarios are saved already.
	ErrLibraryFull = errors.New("too many saved scenarios")
)
