package scenarios

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
)

// ErrDuplicateID is returned (wrapped) by Add when the rule's id is taken.
var ErrDuplicateID = errors.New("rule id already exists")

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
	// NewID names new rules; nil means "rule-1", "rule-2", ... per engine.
	// It is called with the engine locked and must not call the engine.
	NewID func() string
	// MaxRules caps the active rules; 0 means DefaultMaxRules.
	MaxRules int
}

// Engine holds the active rules and decides, per request, which failure to
// inject. It is safe for concurrent use: one mutex guards the rules and
// their counters, which is what makes counting exact under concurrency;
// seeded decisions derive from each rule's match counter (see drawKey), so
// they replay. Shared returns the form that keeps all of it in Redis.
type Engine struct {
	lib   *Library
	clock clock.Clock
	newID func() string
	// maxRules caps len(entries); see checkRoom.
	maxRules int

	mu          sync.Mutex
	entries     []*entry // active rules, in insertion order
	activations []Activation
	idSeq       int        // for the default id generator
	adhoc       *rand.Rand // delays of per-request scenario decisions

	// shared, when set, keeps the rules in Redis instead (see Shared);
	// entries and activations above are then unused.
	shared *sharedRules
}

// New returns an Engine with no active rules.
func New(cfg Config) *Engine {
	e := &Engine{lib: cfg.Library, clock: cfg.Clock, newID: cfg.NewID, maxRules: cfg.MaxRules, adhoc: newRNG(0)}
	if e.maxRules <= 0 {
		e.maxRules = DefaultMaxRules
	}
	if e.lib == nil {
		e.lib = NewLibrary()
	}
	if e.clock == nil {
		e.clock = clock.Func(time.Now)
	}
	if e.newID == nil {
		e.newID = func() string {
			e.idSeq++
			return "rule-" + strconv.Itoa(e.idSeq)
		}
	}
	return e
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
}

// Add validates r, gives it an id when it has none and appends it to the
// active rules. Scenario is read-only and cleared. A taken id gives an error
// wrapping ErrDuplicateID; an invalid rule a *FieldError; a full rule list
// (see DefaultMaxRules) an error wrapping ErrTooManyRules.
func (e *Engine) Add(r Rule) (Rule, error) {
	r = cloneRule(r)
	r.Scenario = ""
	if err := r.Validate(); err != nil {
		return Rule{}, err
	}
	if e.shared != nil {
		return e.shared.add(e, r)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.checkRoom(1, false); err != nil {
		return Rule{}, err
	}
	if r.ID == "" {
		id, err := e.assignID()
		if err != nil {
			return Rule{}, err
		}
		r.ID = id
	} else if e.find(r.ID) >= 0 {
		return Rule{}, fmt.Errorf("id %q: %w", r.ID, ErrDuplicateID)
	}
	e.entries = append(e.entries, newEntry(r, "", e.clock.Now()))
	return cloneRule(r), nil
}

// Get returns the active rule id with its counters. Retired and removed
// rules are not found.
func (e *Engine) Get(id string) (RuleStatus, bool) {
	if e.shared != nil {
		return e.shared.get(id)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	i := e.find(id)
	if i < 0 {
		return RuleStatus{}, false
	}
	return e.entries[i].status(), true
}

// Remove deletes the active rule id and reports whether it existed.
func (e *Engine) Remove(id string) bool {
	if e.shared != nil {
		return e.shared.remove(e, id)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	i := e.find(id)
	if i < 0 {
		return false
	}
	e.entries = slices.Delete(e.entries, i, i+1)
	return true
}

// Clear removes every rule and every scenario activation.
func (e *Engine) Clear() {
	if e.shared != nil {
		e.shared.clear(e)
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.entries = nil
	e.activations = nil
}

// Rules lists the active rules in evaluation order. Rules whose times are
// used up have retired and are not listed.
func (e *Engine) Rules() []RuleStatus {
	if e.shared != nil {
		return e.shared.statuses()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]RuleStatus, len(e.entries))
	for i, en := range e.entries {
		out[i] = en.status()
	}
	return out
}

// Decide evaluates the active rules for req in insertion order and returns
// the Decision of the first rule that matches and fires, or false when none
// does (answer normally). Firing counts against the rule; a rule whose times
// are used up (not per client) retires: it leaves the active list at once.
// In shared mode ctx bounds the Redis calls and may carry the rules'
// version (WithRulesVersion).
func (e *Engine) Decide(ctx context.Context, req Request) (Decision, bool) {
	if e.shared != nil {
		return e.shared.decide(ctx, e, req)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, en := range e.entries {
		if !en.rule.Matches(req) || !en.fire(req.counterKey()) {
			continue
		}
		d := en.rule.decide(matchRNG(en.rule.Seed, int64(en.matches)))
		en.lastFired = e.clock.Now()
		if en.retired() {
			e.entries = slices.Delete(e.entries, i, i+1)
		}
		return d, true
	}
	return Decision{}, false
}

// assignID returns a fresh id not used by an active rule. e.mu must be held.
func (e *Engine) assignID() (string, error) {
	// A custom generator could repeat itself; a few tries absorb a rare
	// collision without looping for ever on a broken one.
	for range 100 {
		id := e.newID()
		if id != "" && e.find(id) < 0 {
			return id, nil
		}
	}
	return "", errors.New("rule id generator keeps returning empty or taken ids")
}

// find returns the index of active rule id, or -1. e.mu must be held.
func (e *Engine) find(id string) int {
	return slices.IndexFunc(e.entries, func(en *entry) bool { return en.rule.ID == id })
}

// cloneRule copies r so callers and the engine never share a *Delay.
func cloneRule(r Rule) Rule {
	if r.Delay != nil {
		d := *r.Delay
		r.Delay = &d
	}
	return r
}
