package scenarios

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/internal/rediscall"
)

// redisSavedPart follows the sandbox's --redis-prefix in the key of the
// saved scenarios.
const redisSavedPart = "library:saved"

// RedisSaved is the SavedStore that replicas share: one hash, name to
// scenario, under the sandbox's prefix (so on a Redis Cluster it sits in
// the prefix's slot, like every other key). A save is one script that
// checks the name and the count and stores, so the bounds hold across
// replicas; reads go to Redis every time, so a scenario saved through one
// replica is there for the very next request through any other.
type RedisSaved struct {
	rdb redis.UniversalClient
	key string
}

var _ SavedStore = (*RedisSaved)(nil)

// NewRedisSaved returns the saved scenarios kept in rdb under prefix (the
// sandbox's --redis-prefix, hash-tagged on a cluster).
func NewRedisSaved(rdb redis.UniversalClient, prefix string) *RedisSaved {
	return &RedisSaved{rdb: rdb, key: prefix + redisSavedPart}
}

// storedScenario is a saved scenario as the hash keeps it. SaveID is drawn
// afresh by each Save, so the script can tell go-redis retrying a save
// whose reply was lost (the same value: done already) from another save of
// the same name (a taken name).
type storedScenario struct {
	SaveID   string   `json:"saveId"`
	Scenario Scenario `json:"scenario"`
}

// saveScript stores a scenario unless its name is taken or the hash is
// full. KEYS: the hash. ARGV: name, stored value, the cap. It answers
// "ok", "exists" or "full"; finding its own value (a retry of a save that
// ran) answers "ok".
var saveScript = redis.NewScript(`
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old then
  if old == ARGV[2] then return 'ok' end
  return 'exists'
end
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then return 'full' end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 'ok'
`)

// Save implements SavedStore.Save.
func (r *RedisSaved) Save(ctx context.Context, sc Scenario) error {
	raw, err := json.Marshal(storedScenario{SaveID: rand.Text(), Scenario: sc})
	if err != nil {
		return fmt.Errorf("encode scenario %q: %w", sc.Name, err)
	}
	answer, err := saveScript.Run(ctx, r.rdb, []string{r.key}, sc.Name, raw, MaxSavedScenarios).Text()
	switch {
	case err != nil:
		return fmt.Errorf("%w: save scenario %q: %w", ErrUnavailable, sc.Name, rediscall.MarkUnconfirmed(err))
	case answer == "exists":
		return fmt.Errorf("%w: %s", ErrScenarioExists, sc.Name)
	case answer == "full":
		return fmt.Errorf("%w: at most %d", ErrLibraryFull, MaxSavedScenarios)
	case answer != "ok":
		return fmt.Errorf("%w: save scenario %q: the script answered %q", ErrUnavailable, sc.Name, answer)
	}
	return nil
}

// Get implements SavedStore.Get.
func (r *RedisSaved) Get(ctx context.Context, name string) (Scenario, bool, error) {
	raw, err := r.rdb.HGet(ctx, r.key, name).Result()
	if errors.Is(err, redis.Nil) {
		return Scenario{}, false, nil
	}
	if err != nil {
		return Scenario{}, false, fmt.Errorf("%w: read saved scenario %q: %w", ErrUnavailable, name, err)
	}
	sc, err := decodeSaved(name, raw)
	return sc, err == nil, err
}

// List implements SavedStore.List.
func (r *RedisSaved) List(ctx context.Context) ([]Scenario, error) {
	all, err := r.rdb.HGetAll(ctx, r.key).Result()
	if err != nil {
		return nil, fmt.Errorf("%w: read saved scenarios: %w", ErrUnavailable, err)
	}
	out := make([]Scenario, 0, len(all))
	for name, raw := range all {
		sc, err := decodeSaved(name, raw)
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	slices.SortFunc(out, func(a, b Scenario) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Delete implements SavedStore.Delete. A go-redis retry of a delete whose
// reply was lost finds nothing and answers not-found; either way the name
// is no longer saved, which is what the caller asked for.
func (r *RedisSaved) Delete(ctx context.Context, name string) error {
	n, err := r.rdb.HDel(ctx, r.key, name).Result()
	if err != nil {
		return fmt.Errorf("%w: delete saved scenario %q: %w", ErrUnavailable, name, rediscall.MarkUnconfirmed(err))
	}
	if n == 0 {
		return fmt.Errorf("saved scenario %q: %w", name, ErrNotFound)
	}
	return nil
}

// decodeSaved reads one stored value. One that does not decode fails the
// read, as the shared rules' do: it is never skipped as if not saved.
func decodeSaved(name, raw string) (Scenario, error) {
	var st storedScenario
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		return Scenario{}, fmt.Errorf("%w: saved scenario %q is stored malformed: %w", ErrUnavailable, name, err)
	}
	if st.Scenario.Name != name {
		return Scenario{}, fmt.Errorf("%w: saved scenario %q is stored under the name %q", ErrUnavailable, st.Scenario.Name, name)
	}
	st.Scenario.Source = savedSource
	return st.Scenario, nil
}
