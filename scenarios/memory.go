package scenarios

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

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
	// clientNow is the clock of timelines bound to a client; guarded by
	// mu (set by UseClientClock).
	clientNow clientClock
	newID     func() string
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
	e := &MemoryEngine{perRequest: newPerRequest(cfg.Library), lib: cfg.Library, clock: cfg.Clock, clientNow: cfg.ClientClock, newID: cfg.NewID, maxRules: cfg.MaxRules}
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
	e.retireEnded()
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
	en := e.newEntry(r, "", e.clock.Now())
	e.entries = append(e.entries, en)
	e.changed()
	return en.statusAt(e.clientNow), nil
}

// Get implements Engine.Get.
func (e *MemoryEngine) Get(_ context.Context, id string) (RuleStatus, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.retireEnded()
	i := e.find(id)
	if i < 0 {
		return RuleStatus{}, fmt.Errorf("rule %q: %w", id, ErrNotFound)
	}
	return e.entries[i].statusAt(e.clientNow), nil
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
	e.retireEnded()
	out := make([]RuleStatus, len(e.entries))
	for i, en := range e.entries {
		out[i] = en.statusAt(e.clientNow)
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
		if en.gone {
			continue
		}
		r := en.rule
		if len(r.Timeline) > 0 {
			phase, _, live := en.timelineNow(e.clientNow)
			if !live {
				e.deleteEntries(func(x *entry) bool { return x == en })
				continue
			}
			if !phase.hasEffect() || !phase.matchesBesidesPath(req) {
				continue // a lull, or an effect this endpoint cannot have
			}
			r = phase
		}
		if !en.fire(r, req.counterKey()) {
			continue
		}
		d := r.decide(matchRNG(r.Seed, int64(en.matches)))
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

// UseClientClock implements Engine.UseClientClock.
func (e *MemoryEngine) UseClientClock(now func(clientID string) time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.clientNow = now
}

// newEntry makes the active form of a validated rule r, starting its
// timeline, if it has one, on its clock now. e.mu must be held.
func (e *MemoryEngine) newEntry(r Rule, binding string, now time.Time) *entry {
	en := newEntry(r, binding, now)
	if len(r.Timeline) > 0 {
		en.startedAt = e.clientNow(r.ClientID)
	}
	return en
}

// retireEnded drops the timelines whose last phase is over. e.mu must be
// held.
func (e *MemoryEngine) retireEnded() {
	if slices.ContainsFunc(e.entries, func(en *entry) bool { return en.ended(e.clientNow) }) {
		e.deleteEntries(func(en *entry) bool { return en.ended(e.clientNow) })
	}
}
