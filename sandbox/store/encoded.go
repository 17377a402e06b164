package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
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

// AppendReferralsJSON appends one page of the client's referrals to b, as
// the API encodes each (encoding/json, as json.Marshal writes it) and
// separated by commas: the inside of the page's JSON array, for a listing
// to write without decoding and encoding every record again. A stored
// value already verified to be that encoding is copied as it is; any other
// is decoded and encoded. A record that no longer decodes is left out and
// logged, as ListReferrals does.
func (s *BuntStore) AppendReferralsJSON(_ context.Context, b []byte, clientID string, page Page) ([]byte, string, error) {
	first := true
	next, err := s.listRecords("referrals", referralListing(), clientID, page, func(it item) error {
		var err error
		mark := len(b)
		if !first {
			b = append(b, ',')
		}
		if b, err = s.appendReferralJSON(b, it); err != nil {
			b = b[:mark]
			return err
		}
		first = false
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return b, next, nil
}

// appendReferralJSON appends the API's encoding of the referral stored as
// it to b.
func (s *BuntStore) appendReferralJSON(b []byte, it item) ([]byte, error) {
	if s.verified.has(it.key, it.value) {
		if b, ok := appendRecordJSON(b, it.value); ok {
			return b, nil
		}
	}
	rec, err := decode[referrals.Referral](it.key, it.value)
	if err != nil {
		return b, err
	}
	enc, err := json.Marshal(rec)
	if err != nil {
		return b, fmt.Errorf("encode %q: %w", it.key, err)
	}
	if stored, ok := recordJSON(it.value); ok && string(enc) == stored {
		s.verified.add(it.key, it.value)
	}
	return append(b, enc...), nil
}
