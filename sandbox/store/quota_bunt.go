package store

import (
	"strings"

	"github.com/tidwall/buntdb"
)

// The embedded store keeps each client's usage in memory: counted from the
// data at open (and after a whole Reset), and changed by every write
// transaction as it commits. storeTx gathers the changes of its writes
// (account), and updateTx refuses the transaction before its commit when
// it would take a client beyond the quota.

// WithQuota bounds what each client may store (see Quota). Default: no
// bound. Loading fixtures (Load, Seed, Reset, ResetClient) is never
// refused, but counts.
func WithQuota(q Quota) Option {
	return func(c *config) { c.quota = q }
}

// keyOwner returns the escaped client id of a record or audit key, and
// whether the key is a record (not an audit entry). Other keys (runtime
// clients) belong to no client's quota.
func keyOwner(key string) (client string, record, ok bool) {
	var rest string
	switch {
	case strings.HasPrefix(key, referralPrefix):
		rest, record = key[len(referralPrefix):], true
	case strings.HasPrefix(key, qualifiedPrefix):
		rest, record = key[len(qualifiedPrefix):], true
	case strings.HasPrefix(key, auditPrefix):
		rest = key[len(auditPrefix):]
	default:
		return "", false, false
	}
	// <escaped id>:<escaped client>[:<seq>]; escaped parts hold no ':'.
	_, rest, found := strings.Cut(rest, ":")
	if !found {
		return "", false, false
	}
	if !record {
		rest, _, _ = strings.Cut(rest, ":")
	}
	return rest, record, true
}

// account notes, in the transaction, that key now holds value (added:
// "" and false for a deletion) where it held previous (replaced: "" and
// false when it held nothing).
func (t *storeTx) account(key, previous string, replaced bool, value string, added bool) {
	client, record, ok := keyOwner(key)
	if !ok {
		return
	}
	var d usage
	if added {
		d.bytes += int64(len(key) + len(value))
		if record && !replaced {
			d.records++
		}
	}
	if replaced {
		d.bytes -= int64(len(key) + len(previous))
		if record && !added {
			d.records--
		}
	}
	if t.usage == nil {
		t.usage = map[string]usage{}
	}
	u := t.usage[client]
	u.records += d.records
	u.bytes += d.bytes
	t.usage[client] = u
}

// checkQuota refuses the transaction's changes when one takes a client
// beyond q, given what each client held before (held).
func (t *storeTx) checkQuota(q Quota, held map[string]usage) error {
	if q == (Quota{}) || t.deletedAll {
		return nil
	}
	for client, d := range t.usage {
		if err := q.exceeds(held[client], d); err != nil {
			return err
		}
	}
	return nil
}

// applyUsage adds the transaction's changes to held.
func (t *storeTx) applyUsage(held map[string]usage) {
	for client, d := range t.usage {
		u := held[client]
		u.records += d.records
		u.bytes += d.bytes
		if u == (usage{}) {
			delete(held, client)
			continue
		}
		held[client] = u
	}
}

// countUsage counts what every client holds in db.
func countUsage(db *buntdb.DB) (map[string]usage, error) {
	held := map[string]usage{}
	err := db.View(func(tx *buntdb.Tx) error {
		return tx.Ascend("", func(k, v string) bool {
			if client, record, ok := keyOwner(k); ok {
				u := held[client]
				u.bytes += int64(len(k) + len(v))
				if record {
					u.records++
				}
				held[client] = u
			}
			return true
		})
	})
	return held, err
}
