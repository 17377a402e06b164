package scenarios

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
)

// MemoryEngine is the Engine of one process. One mutex guards the rules and
// their counters, which is what makes counting exact under concurrency; it
// is held only for the counting itself, never while a request is matched
// (see ruleIndex). Seeded decisions derive from each rule's match counter
// (see drawKey), so they replay.
type MemoryEngine struct {
	*perRequest
	lib   *Library
	clock clock.Clock
	newID func() string
	// maxRules caps len(entries); see checkRoom.
	maxRules int

	mu          sync.Mutex
	entries     []*entry // active rules, in insertion order
	activations []Activation
	idSeq       int // for the default id generator
	// changes counts changes of entries (under mu); an index built from
	// an older count is out of date.
	changes atomic.Uint64

	// index matches requests to entries without mu. The first request
	// after a change rebuilds it (holding indexMu, not mu, so requests
	// already past the index go on counting), and a change itself costs
	// the index nothing: an admin call adding many rules, or the shared
	// engine's scratch copies, never build one per change.
	indexMu sync.Mutex
	index   atomic.Pointer[builtIndex]
}

// builtIndex is an index and the count of changes it was built at.
type builtIndex struct {
	changes uint64
	*ruleIndex
}

var _ Engine = (*MemoryEngine)(nil)

// New returns a MemoryEngine with no active rules.
func New(cfg Config) *MemoryEngine {
	cfg = cfg.withDefaults()
	e := &MemoryEngine{perRequest: newPerRequest(cfg.Library), lib: cfg.Library, clock: cfg.Clock, newID: cfg.NewID, maxRules: cfg.MaxRules}
	if e.newID == nil {
		e.newID = func() string {
			e.idSeq++
			return "rule-" + strconv.Itoa(e.idSeq)
		}
	}
	e.index.Store(&builtIndex{ruleIndex: newRuleIndex(nil)})
	return e
}

// Add implements Engine.Add.
func (e *MemoryEngine) Add(_ context.Context, r Rule) (RuleStatus, error) {
	r = cloneRule(r)
	r.Scenario = ""
	if err := r.Validate(); err != nil {
		return RuleStatus{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.checkRoom(1, false); err != nil {
		return RuleStatus{}, err
	}
	if r.ID == "" {
		id, err := e.assignID()
		if err != nil {
			return RuleStatus{}, err
		}
		r.ID = id
	} else if e.find(r.ID) >= 0 {
		return RuleStatus{}, fmt.Errorf("id %q: %w", r.ID, ErrDuplicateID)
	}
	en := newEntry(r, "", e.clock.Now())
	e.entries = append(e.entries, en)
	e.changed()
	return en.status(), nil
}

// Get implements Engine.Get.
func (e *MemoryEngine) Get(_ context.Context, id string) (RuleStatus, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	i := e.find(id)
	if i < 0 {
		return RuleStatus{}, fmt.Errorf("rule %q: %w", id, ErrNotFound)
	}
	return e.entries[i].status(), nil
}

// Remove implements Engine.Remove.
func (e *MemoryEngine) Remove(_ context.Context, id string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	i := e.find(id)
	if i < 0 {
		return fmt.Errorf("rule %q: %w", id, ErrNotFound)
	}
	e.deleteEntries(func(en *entry) bool { return en == e.entries[i] })
	return nil
}

// Clear implements Engine.Clear.
func (e *MemoryEngine) Clear(context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.deleteEntries(func(*entry) bool { return true })
	e.activations = nil
	return nil
}

// Rules implements Engine.Rules.
func (e *MemoryEngine) Rules(context.Context) ([]RuleStatus, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]RuleStatus, len(e.entries))
	for i, en := range e.entries {
		out[i] = en.status()
	}
	return out, nil
}

// Decide implements Engine.Decide: the request is matched against the index
// without the lock; the lock is held only to count the few candidates.
func (e *MemoryEngine) Decide(_ context.Context, req Request) (Decision, bool, error) {
	candidates := e.currentIndex().candidates(req)
	if len(candidates) == 0 {
		return Decision{}, false, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, en := range candidates {
		if en.gone || !en.fire(req.counterKey()) {
			continue
		}
		d := en.rule.decide(matchRNG(en.rule.Seed, int64(en.matches)))
		en.lastFired = e.clock.Now()
		if en.retired() {
			e.deleteEntries(func(x *entry) bool { return x == en })
		}
		return d, true, nil
	}
	return Decision{}, false, nil
}

// deleteEntries drops the entries del selects and marks them gone for the
// requests already holding them as candidates. e.mu must be held.
func (e *MemoryEngine) deleteEntries(del func(*entry) bool) {
	e.entries = slices.DeleteFunc(e.entries, func(en *entry) bool {
		if del(en) {
			en.gone = true
			return true
		}
		return false
	})
	e.changed()
}

// changed marks the index out of date. e.mu must be held.
func (e *MemoryEngine) changed() { e.changes.Add(1) }

// currentIndex returns an index of the entries as of the last change
// before the call, rebuilding it if needed. Building costs the rules'
// patterns, which admin calls bound, never the request; it holds indexMu,
// and mu only to copy the list.
func (e *MemoryEngine) currentIndex() *builtIndex {
	if ix := e.index.Load(); ix.changes == e.changes.Load() {
		return ix
	}
	e.indexMu.Lock()
	defer e.indexMu.Unlock()
	if ix := e.index.Load(); ix.changes == e.changes.Load() {
		return ix // built by the request that held indexMu before this one
	}
	e.mu.Lock()
	entries, changes := slices.Clone(e.entries), e.changes.Load()
	e.mu.Unlock()
	ix := &builtIndex{changes: changes, ruleIndex: newRuleIndex(entries)}
	e.index.Store(ix)
	return ix
}

// assignID returns a fresh id not used by an active rule. e.mu must be held.
func (e *MemoryEngine) assignID() (string, error) {
	// A custom generator could repeat itself; a few tries absorb a rare
	// collision without looping for ever on a broken one.
	for range 100 {
		id := e.newID()
		if id != "" && e.find(id) < 0 {
			return id, nil
		}
	}
	return "", errIDGenerator
}

// errIDGenerator: NewID keeps returning empty or taken ids.
var errIDGenerator = errors.New("rule id generator keeps returning empty or taken ids")

// find returns the index of active rule id, or -1. e.mu must be held.
func (e *MemoryEngine) find(id string) int {
	return slices.IndexFunc(e.entries, func(en *entry) bool { return en.rule.ID == id })
}
