package scenarios

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
)

// Engine holds the active rules and scenario activations and decides, per
// request, which failure to inject. It has two implementations that behave
// alike (the conformance suite in scenarios/rulestest pins it): the
// MemoryEngine of one process and the RedisEngine that replicas share.
//
// Every method that reads or changes the rules returns an error when the
// backend failed; the error then wraps ErrUnavailable, and the caller must
// answer 503, never "nothing", "not found" or "done". A change that returns
// nil has been taken by the backend.
type Engine interface {
	// Add validates r, gives it an id when it has none and appends it to
	// the active rules, returning it with its (zero) counters. Scenario is
	// read-only and cleared. A taken id gives an error wrapping
	// ErrDuplicateID; an invalid rule a *FieldError; a full rule list (see
	// DefaultMaxRules) an error wrapping ErrTooManyRules.
	Add(ctx context.Context, r Rule) (RuleStatus, error)
	// Get returns the active rule id with its counters, or an error
	// wrapping ErrNotFound: retired and removed rules are not found.
	Get(ctx context.Context, id string) (RuleStatus, error)
	// Remove deletes the active rule id, or returns an error wrapping
	// ErrNotFound.
	Remove(ctx context.Context, id string) error
	// Rules lists the active rules in evaluation order, never nil. Rules
	// whose times are used up have retired and are not listed.
	Rules(ctx context.Context) ([]RuleStatus, error)
	// Clear removes every rule and every scenario activation.
	Clear(ctx context.Context) error
	// ClearClient removes everything that concerns one client and nothing
	// else: the rules bound to it (a scenario activated for it, or a rule
	// with its clientId), its activations, and its tallies in per-client
	// rules that others share.
	ClearClient(ctx context.Context, clientID string) error

	// Activate adds the rules of scenario name to the active set, after the
	// rules already there, tagged with the scenario name and with fresh
	// ids. A non-empty clientID binds the activation: it replaces every
	// rule's clientId, so parallel CI jobs using different clients never
	// see each other's failures. An activation is keyed by (name,
	// clientID): activating the same pair again replaces its rules (with
	// fresh counters). An unknown name gives ErrUnknownScenario; a full
	// list ErrTooManyRules, and nothing changes; a library whose saved
	// scenarios cannot be read, an error wrapping ErrUnavailable.
	Activate(ctx context.Context, name, clientID string) ([]Rule, error)
	// Deactivate removes scenario name from the active set: only the
	// activation bound to clientID, or every activation of name when
	// clientID is empty. Rules added directly or by other scenarios stay.
	// Nothing active gives an error wrapping ErrNotFound.
	Deactivate(ctx context.Context, name, clientID string) error
	// Active lists the scenario activations in activation order, never
	// nil. An activation stays listed until deactivated; once none of its
	// rules can fire again (all retired, timelines past their last phase)
	// it is marked Ended.
	Active(ctx context.Context) ([]Activation, error)

	// Decide evaluates the active rules for req in insertion order and
	// returns the Decision of the first rule that matches and fires, or
	// false when none does (answer normally). Firing counts against the
	// rule, exactly once per call whatever the backend's client retries; a
	// rule whose times are used up (not per client) retires at once. The
	// work it does for req is bounded by the rules' patterns, not by the
	// request (see ruleIndex), and none of it runs under a lock.
	Decide(ctx context.Context, req Request) (Decision, bool, error)
	// DecideScenario is the per-request form (X-Sandbox-Scenario: NAME):
	// the Decision of the first rule of scenario name that matches req, or
	// false when none matches. The rule is applied as if it fired: its
	// times, after and probability are ignored and no counter anywhere
	// changes. Delays are drawn from one engine-wide PRNG seeded 0, so a
	// fixed sequence of such requests replays. The RuleID names the rule's
	// position, e.g. "flaky.rules[0]". An unknown name gives
	// ErrUnknownScenario; a library whose saved scenarios cannot be read,
	// an error wrapping ErrUnavailable.
	DecideScenario(ctx context.Context, name string, req Request) (Decision, bool, error)

	// UseClientClock makes timelines bound to a client run on that
	// client's own clock (clock.PerClient.Now), as the sandbox's client
	// clocks are made after the engine. Call it before serving.
	UseClientClock(now func(clientID string) time.Time)
}

// Errors the engines return (wrapped).
var (
	// ErrDuplicateID: Add was given an id that an active rule has.
	ErrDuplicateID = errors.New("rule id already exists")
	// ErrNotFound: no active rule with that id, or no such activation.
	ErrNotFound = errors.New("not found")
	// ErrUnavailable wraps every failure of the engine's backend (Redis):
	// the caller should answer 503 with Retry-After and let the client
	// retry. Nothing may be concluded about the rules from it.
	ErrUnavailable = errors.New("shared scenario state (Redis) unavailable")
)

// pcgStream is the fixed second PCG parameter, so a rule's seed alone
// decides its random sequence.
const pcgStream = 0x5eed5ca1ab1e

// newRNG returns the deterministic PRNG for seed. Unseeded rules use seed 0:
// every run of the same rules against the same requests decides the same.
func newRNG(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, pcgStream))
}

// Config configures an Engine. Every field is optional.
type Config struct {
	// Library holds the named scenarios; nil means none.
	Library *Library
	// Clock stamps rule status times; nil means real time.
	Clock clock.Clock
	// NewID names new rules; nil means "rule-1", "rule-2", ... per engine
	// (from one shared sequence for the RedisEngine). It is called with the
	// engine locked and must not call the engine.
	NewID func() string
	// MaxRules caps the active rules; 0 means DefaultMaxRules.
	MaxRules int
	// ClientClock is a client's own clock (see clock.PerClient), which a
	// timeline bound to that client runs on; nil means Clock for everyone.
	ClientClock func(clientID string) time.Time
}

// withDefaults fills the unset fields.
func (c Config) withDefaults() Config {
	if c.MaxRules <= 0 {
		c.MaxRules = DefaultMaxRules
	}
	if c.Library == nil {
		c.Library = NewLibrary()
	}
	if c.Clock == nil {
		c.Clock = clock.Func(time.Now)
	}
	if c.ClientClock == nil {
		global := c.Clock
		c.ClientClock = func(string) time.Time { return global.Now() }
	}
	return c
}

// RuleStatus is an active rule with its counters.
type RuleStatus struct {
	Rule
	// Matches counts requests the rule matched, fired or not.
	Matches int `json:"matches"`
	// Hits counts requests the rule fired on.
	Hits int `json:"hits"`
	// Remaining is how many more times the rule fires before it retires;
	// nil when unlimited or counted per client.
	Remaining *int `json:"remaining,omitempty"`
	// ClientHits counts hits per client id for perClient rules.
	ClientHits  map[string]int `json:"clientHits,omitempty"`
	AddedAt     time.Time      `json:"addedAt"`
	LastFiredAt *time.Time     `json:"lastFiredAt,omitempty"`
	// TimelineNow is where a timeline rule is: its current phase and the
	// time left in it.
	TimelineNow *TimelineNow `json:"timelineNow,omitempty"`
}

// perRequest is what both engines share for the per-request form of a
// scenario, which reads the library only and touches no rule state.
type perRequest struct {
	lib *Library

	mu    sync.Mutex
	adhoc *rand.Rand // delays of per-request scenario decisions
}

func newPerRequest(lib *Library) *perRequest {
	return &perRequest{lib: lib, adhoc: newRNG(0)}
}

// DecideScenario implements Engine.DecideScenario.
func (p *perRequest) DecideScenario(ctx context.Context, name string, req Request) (Decision, bool, error) {
	sc, err := scenarioNamed(ctx, p.lib, name)
	if err != nil {
		return Decision{}, false, err
	}
	for i, r := range sc.Rules {
		if len(r.Timeline) > 0 {
			phase, ok := r.firstEffect()
			if !ok {
				continue
			}
			r = r.atPhase(phase)
		}
		if !r.Matches(req) {
			continue
		}
		r.ID = fmt.Sprintf("%s.rules[%d]", name, i)
		r.Scenario = name
		p.mu.Lock()
		d := r.decide(p.adhoc)
		p.mu.Unlock()
		return d, true, nil
	}
	return Decision{}, false, nil
}

// scenarioNamed looks name up in lib: an unknown name gives
// ErrUnknownScenario, listing the known ones; a library that cannot be
// read, an error wrapping ErrUnavailable.
func scenarioNamed(ctx context.Context, lib *Library, name string) (Scenario, error) {
	sc, ok, err := lib.Get(ctx, name)
	if err != nil {
		return Scenario{}, err
	}
	if !ok {
		names, err := lib.Names(ctx)
		if err != nil {
			return Scenario{}, err
		}
		return Scenario{}, fmt.Errorf("%w %q; known: %s", ErrUnknownScenario, name, strings.Join(names, ", "))
	}
	return sc, nil
}

// cloneRule copies r so callers and the engine never share a *Delay.
func cloneRule(r Rule) Rule {
	if r.Delay != nil {
		d := *r.Delay
		r.Delay = &d
	}
	if r.Timeline != nil {
		r.Timeline = slices.Clone(r.Timeline)
		for i, p := range r.Timeline {
			if p.Delay != nil {
				d := *p.Delay
				r.Timeline[i].Delay = &d
			}
		}
	}
	return r
}
