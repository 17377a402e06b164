package store

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/tidwall/buntdb"
)

// maxVerified and maxVerifiedBytes bound the verified-records cache: a
// few pages of many clients. Its entries share the store's own strings,
// so what it can keep alive beyond the store is the values the store has
// since replaced or deleted: at most maxVerifiedBytes.
const (
	maxVerified      = 10_000
	maxVerifiedBytes = 8 << 20
)

// verifiedRecords remembers stored values whose JSON is already what the
// API writes for the record (json.Marshal of the decoded record), so a
// listing can write them through instead of decoding and encoding each
// one again: decoding was most of a page's cost. A value counts as
// verified only while it is byte for byte the one verified, so an updated
// or damaged record is decoded again.
type verifiedRecords struct {
	mu     sync.Mutex
	values map[string]string // key -> the stored value verified
	bytes  int               // of the keys and values held
}

func (c *verifiedRecords) has(key, value string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.values[key]
	return ok && v == value
}

func (c *verifiedRecords) add(key, value string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.values == nil || len(c.values) >= maxVerified || c.bytes+len(key)+len(value) > maxVerifiedBytes {
		// Start again rather than track age.
		c.values, c.bytes = make(map[string]string), 0
	}
	if old, ok := c.values[key]; ok {
		c.bytes -= len(key) + len(old)
	}
	c.values[key] = value
	c.bytes += len(key) + len(value)
}

// ListReferralsJSON is ListReferrals with each referral as the API encodes
// it (encoding/json, as json.Marshal writes it), for a listing to write
// through. A record that no longer decodes is skipped and logged, as
// ListReferrals does.
func (s *BuntStore) ListReferralsJSON(clientID string, page Page) ([]json.RawMessage, string, error) {
	var items []item
	var next string
	err := s.viewTx(func(tx *buntdb.Tx) error {
		var err error
		items, next, err = walkPage(tx, referralListing(), clientID, page)
		return err
	})
	if err != nil {
		return nil, "", fmt.Errorf("list referrals of client %q: %w", clientID, err)
	}
	out := make([]json.RawMessage, 0, len(items))
	for _, it := range items {
		_, stored := splitValue(it.value)
		if s.verified.has(it.key, it.value) {
			out = append(out, json.RawMessage(stored))
			continue
		}
		rec, err := decode[fixtures.Referral](it.key, it.value)
		if s.bad.skip(it.key, err) {
			continue
		}
		if err != nil {
			return nil, "", fmt.Errorf("list referrals of client %q: %w", clientID, err)
		}
		b, err := json.Marshal(rec)
		if err != nil {
			return nil, "", fmt.Errorf("list referrals of client %q: encode %q: %w", clientID, it.key, err)
		}
		if string(b) == stored {
			s.verified.add(it.key, it.value)
		}
		out = append(out, b)
	}
	return out, next, nil
}
