package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
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
func (s *RedisStore) Seed(set *fixtures.Set) error {
	err := s.Load(set)
	if errors.Is(err, ErrConflict) {
		if empty, emptyErr := s.Empty(); emptyErr == nil && !empty {
			return nil
		}
	}
	return err
}

// Load inserts the set's records in one script: on any conflict or invalid
// record nothing is inserted.
func (s *RedisStore) Load(set *fixtures.Set) error {
	records, err := redisSet(set)
	if err == nil && len(records) > 0 {
		err = s.write("", "", refuseTaken, records)
	}
	if err != nil {
		return fmt.Errorf("load fixtures: %w", err)
	}
	return nil
}

// ResetClient replaces the client's records with its records in set, in
// one script.
func (s *RedisStore) ResetClient(clientID string, set *fixtures.Set) error {
	records, err := redisSet(set.OfClient(clientID))
	if err == nil && clientID == "" {
		err = fmt.Errorf("%w: empty client id", ErrInvalid)
	}
	if err == nil {
		err = s.write("", clientID, overwriteTaken, records)
	}
	if err != nil {
		return fmt.Errorf("reset client %q: %w", clientID, err)
	}
	return nil
}

// Reset replaces every record and runtime client with the set's records.
// The new content is written under a new generation, invisible until one
// script makes it current, so a Reset that fails or dies half-way leaves
// the old records in place. The old generation is deleted after; should
// that be cut short, the next OpenRedis deletes the rest.
func (s *RedisStore) Reset(set *fixtures.Set) error {
	if err := s.reset(set); err != nil {
		return fmt.Errorf("reset store: %w", err)
	}
	return nil
}

func (s *RedisStore) reset(set *fixtures.Set) error {
	records, err := redisSet(set)
	if err != nil {
		return err
	}
	res, err := s.run(beginGenerationScript)
	if err != nil {
		return err
	}
	gen := fmt.Sprint(res)
	if err := s.write(gen, "", overwriteTaken, records); err != nil {
		return errors.Join(err, s.dropGeneration(gen))
	}
	old, err := s.run(flipGenerationScript, gen)
	if err != nil {
		return errors.Join(err, s.dropGeneration(gen))
	}
	// The reset has happened; a failure to delete the old generation
	// leaves garbage that the next open removes, not a wrong answer.
	_ = s.deleteGeneration(fmt.Sprint(old))
	return nil
}

// Clients returns the sorted ids of the clients owning a record.
func (s *RedisStore) Clients() ([]string, error) {
	res, err := s.run(clientsScript)
	var clients []string
	if err == nil {
		clients, err = replyStrings(res)
	}
	if err != nil {
		return nil, fmt.Errorf("list clients: %w", err)
	}
	sort.Strings(clients)
	return clients, nil
}

// Empty reports whether no client owns a record.
func (s *RedisStore) Empty() (bool, error) {
	clients, err := s.Clients()
	if err != nil {
		return false, fmt.Errorf("count records: %w", err)
	}
	if len(clients) > 0 {
		return false, nil
	}
	// A store holding runtime clients is not seeded again either.
	runtime, err := s.RuntimeClients()
	if err != nil {
		return false, fmt.Errorf("count runtime clients: %w", err)
	}
	return len(runtime) == 0, nil
}

// PutClient stores or replaces a runtime client.
func (s *RedisStore) PutClient(c fixtures.Client) error {
	data, err := encodeClient(c)
	if err != nil {
		return err
	}
	if _, err := s.run(runtimeClientScript, "put", escape(c.ClientID), string(data)); err != nil {
		return fmt.Errorf("store client %q: %w", c.ClientID, err)
	}
	return nil
}

// DeleteClient removes a runtime client; a missing one is not an error.
func (s *RedisStore) DeleteClient(clientID string) error {
	if _, err := s.run(runtimeClientScript, "del", escape(clientID)); err != nil {
		return fmt.Errorf("delete client %q: %w", clientID, err)
	}
	return nil
}

// RuntimeClients returns every stored runtime client, by escaped id as the
// buntdb store orders them.
func (s *RedisStore) RuntimeClients() ([]fixtures.Client, error) {
	res, err := s.run(runtimeClientScript, "all")
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
	var out []fixtures.Client
	for _, f := range fields {
		var c fixtures.Client
		if err := json.Unmarshal([]byte(f.value), &c); err != nil {
			return nil, fmt.Errorf("decode client %q: %w", f.key, err)
		}
		out = append(out, c)
	}
	return out, nil
}
