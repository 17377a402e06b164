package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// redisSet checks and encodes every record of set, refusing two records
// with one key (ErrConflict): writeScript checks only against stored keys.
func redisSet(set *fixtures.Set) ([]redisRecord, error) {
	if set == nil {
		return nil, nil
	}
	out := make([]redisRecord, 0, len(set.Referrals)+len(set.QualifiedReferrals))
	seen := map[string]bool{}
	add := func(what string, i int, id string, rec redisRecord, err error) error {
		if err == nil {
			key := rec.kind + ":" + escape(rec.clientID) + ":" + escape(rec.id)
			if seen[key] {
				err = fmt.Errorf("%w: twice in the set", ErrConflict)
			}
			seen[key] = true
		}
		if err != nil {
			return fmt.Errorf("%s %d (%q): %w", what, i, id, err)
		}
		out = append(out, rec)
		return nil
	}
	for i, r := range set.Referrals {
		rec, err := redisReferralRecord(r)
		if err := add("referral", i, r.OutcomesID, rec, err); err != nil {
			return nil, err
		}
	}
	for i, q := range set.QualifiedReferrals {
		rec, err := redisQualifiedRecord(q)
		if err := add("qualified referral", i, q.ExternalSourceID, rec, err); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Seed loads set with Load, atomically: replicas on one Redis may start
// together, and the one that loses the race finds the records the winner
// loaded (ErrConflict on a store no longer empty), which is success.
func (s *RedisStore) Seed(ctx context.Context, set *fixtures.Set) error {
	err := s.Load(ctx, set)
	if errors.Is(err, ErrConflict) {
		if empty, emptyErr := s.Empty(ctx); emptyErr == nil && !empty {
			return nil
		}
	}
	return err
}

// byClient groups records by client, clients in sorted order.
func byClient(records []redisRecord) ([]string, map[string][]redisRecord) {
	groups := map[string][]redisRecord{}
	var clients []string
	for _, r := range records {
		if _, ok := groups[r.clientID]; !ok {
			clients = append(clients, r.clientID)
		}
		groups[r.clientID] = append(groups[r.clientID], r)
	}
	sort.Strings(clients)
	return clients, groups
}

// Load inserts the set's records, one script per client: each client's
// records are checked against what its slot holds first, so on any
// conflict or invalid record nothing is inserted. Only a create racing
// with the Load between that check and the writes can make a later client
// conflict after earlier ones were loaded (ErrConflict, naming the key):
// clients live in different slots, which no one script spans.
func (s *RedisStore) Load(ctx context.Context, set *fixtures.Set) error {
	if err := s.load(ctx, set); err != nil {
		return fmt.Errorf("load fixtures: %w", err)
	}
	return nil
}

func (s *RedisStore) load(ctx context.Context, set *fixtures.Set) error {
	records, err := redisSet(set)
	if err != nil {
		return err
	}
	clients, groups := byClient(records)
	for _, c := range clients {
		if err := s.write(ctx, c, "", false, checkTaken, Quota{}, groups[c]); err != nil {
			return err
		}
	}
	for _, c := range clients {
		if err := s.write(ctx, c, "", false, refuseTaken, Quota{}, groups[c]); err != nil {
			return err
		}
	}
	return nil
}

// ResetClient replaces the client's records with its records in set, in
// one script.
func (s *RedisStore) ResetClient(ctx context.Context, clientID string, set *fixtures.Set) error {
	records, err := redisSet(set.OfClient(clientID))
	if err == nil && clientID == "" {
		err = fmt.Errorf("%w: empty client id", ErrInvalid)
	}
	if err == nil {
		err = s.write(ctx, clientID, "", true, overwriteTaken, Quota{}, records)
	}
	if err != nil {
		return fmt.Errorf("reset client %q: %w", clientID, err)
	}
	return nil
}

// Reset replaces every record and runtime client with the set's records.
// The new content is written under a new generation, invisible until it
// is flipped (see flip), so a Reset that fails before its flip leaves the
// old records in place, and one that dies during its flip is completed by
// the next OpenRedis or Reset. The old generation is deleted after; should
// that be cut short, the next OpenRedis deletes the rest.
func (s *RedisStore) Reset(ctx context.Context, set *fixtures.Set) error {
	if err := s.reset(ctx, set); err != nil {
		return fmt.Errorf("reset store: %w", err)
	}
	return nil
}

func (s *RedisStore) reset(ctx context.Context, set *fixtures.Set) error {
	records, err := redisSet(set)
	if err != nil {
		return err
	}
	res, err := s.run(ctx, beginGenerationScript)
	if err != nil {
		return err
	}
	gen := fmt.Sprint(res)
	// Once the generation exists, cleaning it up after a failed build and
	// completing its flip do not stop with the caller's context: a flip
	// left half done puts clients on different generations until the next
	// Reset or open rolls it forward. Each call keeps the store's timeout.
	finish := context.WithoutCancel(ctx)
	if err := s.build(ctx, gen, records); err != nil {
		return errors.Join(err, s.dropGeneration(finish, gen))
	}
	return s.flip(finish, gen)
}

// build writes records under generation gen, being built: its clients set
// first, then each client's records.
func (s *RedisStore) build(ctx context.Context, gen string, records []redisRecord) error {
	clients, groups := byClient(records)
	if len(clients) == 0 {
		return nil
	}
	args := []any{gen}
	for _, c := range clients {
		args = append(args, c)
	}
	if _, err := s.run(ctx, newClientsScript, args...); err != nil {
		return err
	}
	for _, c := range clients {
		if err := s.write(ctx, c, gen, false, overwriteTaken, Quota{}, groups[c]); err != nil {
			return err
		}
	}
	return nil
}

// listedClients returns the clients set of the current generation: every
// client owning a record, and maybe some owning none.
func (s *RedisStore) listedClients(ctx context.Context) ([]string, error) {
	res, err := s.run(ctx, clientsScript)
	if err != nil {
		return nil, err
	}
	return replyStrings(res)
}

// eachClient runs script on the slot of each client, with args after the
// client's prefix, in one pipeline (one round trip per node), and returns
// the replies in order.
func (s *RedisStore) eachClient(ctx context.Context, clients []string, script *redis.Script, args ...any) ([]any, error) {
	if len(clients) == 0 {
		return nil, nil
	}
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	pipe := s.client.Pipeline()
	cmds := make([]*redis.Cmd, len(clients))
	for i, c := range clients {
		base := s.clientBase(c)
		cmds[i] = script.Eval(ctx, pipe, []string{base + "gen"}, append([]any{base}, args...)...)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("redis: %w", unreachable(err))
	}
	out := make([]any, len(clients))
	for i, cmd := range cmds {
		out[i] = cmd.Val()
	}
	return out, nil
}

// Clients returns the sorted ids of the clients owning a record: those of
// the clients set that own one now.
func (s *RedisStore) Clients(ctx context.Context) ([]string, error) {
	clients, err := s.clients(ctx)
	if err != nil {
		return nil, fmt.Errorf("list clients: %w", err)
	}
	return clients, nil
}

func (s *RedisStore) clients(ctx context.Context) ([]string, error) {
	listed, err := s.listedClients(ctx)
	if err != nil {
		return nil, err
	}
	counts, err := s.eachClient(ctx, listed, ownsScript)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, n := range counts {
		if n, ok := n.(int64); !ok {
			return nil, fmt.Errorf("redis: unexpected reply %T for client %q", counts[i], listed[i])
		} else if n > 0 {
			out = append(out, listed[i])
		}
	}
	sort.Strings(out)
	return out, nil
}

// Empty reports whether no client owns a record.
func (s *RedisStore) Empty(ctx context.Context) (bool, error) {
	clients, err := s.Clients(ctx)
	if err != nil {
		return false, fmt.Errorf("count records: %w", err)
	}
	if len(clients) > 0 {
		return false, nil
	}
	// A store holding runtime clients is not seeded again either.
	runtime, err := s.RuntimeClients(ctx)
	if err != nil {
		return false, fmt.Errorf("count runtime clients: %w", err)
	}
	return len(runtime) == 0, nil
}

// PutClient stores or replaces a runtime client.
func (s *RedisStore) PutClient(ctx context.Context, c referrals.Client) error {
	data, err := encodeClient(c)
	if err != nil {
		return err
	}
	if _, err := s.run(ctx, runtimeClientScript, "put", escape(c.ClientID), string(data)); err != nil {
		return fmt.Errorf("store client %q: %w", c.ClientID, err)
	}
	return nil
}

// DeleteClient removes a runtime client; a missing one is not an error.
func (s *RedisStore) DeleteClient(ctx context.Context, clientID string) error {
	if _, err := s.run(ctx, runtimeClientScript, "del", escape(clientID)); err != nil {
		return fmt.Errorf("delete client %q: %w", clientID, err)
	}
	return nil
}

// RuntimeClients returns every stored runtime client, by escaped id as the
// buntdb store orders them.
func (s *RedisStore) RuntimeClients(ctx context.Context) ([]referrals.Client, error) {
	res, err := s.run(ctx, runtimeClientScript, "all")
	var flat []string
	if err == nil {
		flat, err = replyStrings(res)
	}
	if err != nil {
		return nil, fmt.Errorf("list runtime clients: %w", err)
	}
	type field struct{ key, value string }
	fields := make([]field, 0, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		fields = append(fields, field{flat[i], flat[i+1]})
	}
	sort.Slice(fields, func(i, j int) bool { return fields[i].key < fields[j].key })
	var out []referrals.Client
	for _, f := range fields {
		var c referrals.Client
		if err := json.Unmarshal([]byte(f.value), &c); err != nil {
			return nil, fmt.Errorf("decode client %q: %w", f.key, err)
		}
		out = append(out, c)
	}
	return out, nil
}
