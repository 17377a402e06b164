package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tidwall/buntdb"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// clientPrefix starts the key of every runtime client. Its value is the
// client's JSON (secrets only as digests), without a sort line: clients are
// not listed through an index.
const clientPrefix = "c:"

// PutClient stores or replaces a runtime client.
func (s *BuntStore) PutClient(_ context.Context, c referrals.Client) error {
	data, err := encodeClient(c)
	if err != nil {
		return err
	}
	err = s.updateTx(func(tx *storeTx) error {
		_, _, err := tx.Set(clientPrefix+escape(c.ClientID), string(data), nil)
		return err
	})
	if err != nil {
		return fmt.Errorf("store client %q: %w", c.ClientID, err)
	}
	return nil
}

// DeleteClient removes a runtime client; a missing one is not an error.
func (s *BuntStore) DeleteClient(_ context.Context, clientID string) error {
	err := s.updateTx(func(tx *storeTx) error {
		_, err := tx.Delete(clientPrefix + escape(clientID))
		return err
	})
	if err != nil && err != buntdb.ErrNotFound {
		return fmt.Errorf("delete client %q: %w", clientID, err)
	}
	return nil
}

// RuntimeClients returns every stored runtime client, by key order.
func (s *BuntStore) RuntimeClients(_ context.Context) ([]referrals.Client, error) {
	var out []referrals.Client
	err := s.viewTx(func(tx *storeTx) error {
		var decodeErr error
		err := tx.AscendKeys(clientPrefix+"*", func(k, v string) bool {
			var c referrals.Client
			if decodeErr = json.Unmarshal([]byte(v), &c); decodeErr != nil {
				decodeErr = fmt.Errorf("decode client %q: %w", k, decodeErr)
				return false
			}
			out = append(out, c)
			return true
		})
		if err != nil {
			return err
		}
		return decodeErr
	})
	if err != nil {
		return nil, fmt.Errorf("list runtime clients: %w", err)
	}
	return out, nil
}

// ResetClient replaces the client's records of both kinds with its records
// in set (none when set is nil), in one transaction; other clients' records
// are untouched.
func (s *BuntStore) ResetClient(ctx context.Context, clientID string, set *fixtures.Set) error {
	e, err := EncodeSet(set.OfClient(clientID))
	if err != nil {
		return fmt.Errorf("reset client %q: %w", clientID, err)
	}
	return s.ResetClientEncoded(ctx, clientID, e)
}

// ResetClientEncoded is ResetClient with records already encoded.
func (s *BuntStore) ResetClientEncoded(_ context.Context, clientID string, e *EncodedSet) error {
	e = e.ofClient(clientID)
	err := s.loadTx(func(tx *storeTx) error {
		for _, kind := range []string{referralPrefix, qualifiedPrefix} {
			var keys []string
			tx.ascendIndex(kind, clientSortPrefix(clientID), clientSortEnd(clientID), func(k, _ string) bool {
				keys = append(keys, k)
				return true
			})
			for _, k := range keys {
				if _, err := tx.Delete(k); err != nil {
					return fmt.Errorf("delete %q: %w", k, err)
				}
				if kind == qualifiedPrefix {
					if err := deleteAuditOf(tx, k); err != nil {
						return err
					}
				}
			}
		}
		return loadEncoded(tx, e)
	})
	if err != nil {
		return fmt.Errorf("reset client %q: %w", clientID, err)
	}
	return nil
}

// deleteAuditOf deletes the audit entries of the qualified record at key,
// which are kept apart from it.
func deleteAuditOf(tx *storeTx, key string) error {
	rest := strings.TrimPrefix(key, qualifiedPrefix) // <escaped id>:<escaped client>
	escapedID, escapedClient, ok := strings.Cut(rest, ":")
	if !ok {
		return fmt.Errorf("%w: qualified key %q", ErrInvalid, key)
	}
	return deleteTrail(tx, auditPrefix+escapedID+":"+escapedClient+":")
}

// encodeClient checks a runtime client and returns the JSON the stores
// keep (secrets only as digests, as referrals.Client holds them).
func encodeClient(c referrals.Client) ([]byte, error) {
	if c.ClientID == "" {
		return nil, fmt.Errorf("store client: %w: clientId is empty", ErrInvalid)
	}
	data, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encode client %q: %w", c.ClientID, err)
	}
	return data, nil
}
