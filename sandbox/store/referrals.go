package store

import (
	"fmt"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
)

// CreateReferral stores a new trial-based referral.
func (s *BuntStore) CreateReferral(r fixtures.Referral) error {
	key, value, err := encodeReferral(r)
	if err == nil {
		err = s.updateTx(func(tx *storeTx) error { return insert(tx, key, value) })
	}
	if err != nil {
		return fmt.Errorf("create referral %q of client %q: %w", r.OutcomesID, r.ClientID, err)
	}
	return nil
}

// GetReferral returns the client's referral with that outcomesId.
func (s *BuntStore) GetReferral(clientID, outcomesID string) (fixtures.Referral, error) {
	var rec fixtures.Referral
	err := s.viewTx(func(tx *storeTx) error {
		var err error
		rec, _, err = lookup[fixtures.Referral](tx, recordKey(referralPrefix, clientID, outcomesID))
		return err
	})
	if err != nil {
		return fixtures.Referral{}, fmt.Errorf("get referral %q of client %q: %w", outcomesID, clientID, err)
	}
	return rec, nil
}

// ListReferrals returns one page of the client's referrals, newest first.
func (s *BuntStore) ListReferrals(clientID string, page Page) ([]fixtures.Referral, string, error) {
	out := []fixtures.Referral{} // not nil: an empty page
	next, err := s.listRecords("referrals", referralListing(), clientID, page, func(it item) error {
		rec, err := decode[fixtures.Referral](it.key, it.value)
		if err == nil {
			out = append(out, rec)
		}
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return out, next, nil
}

// FindReferral returns the referral with that outcomesId, whoever owns it:
// the first key under the id's prefix, which belongs to the smallest escaped
// client id.
func (s *BuntStore) FindReferral(outcomesID string) (fixtures.Referral, error) {
	prefix := idKeyPrefix(referralPrefix, outcomesID)
	var key, value string
	err := s.viewTx(func(tx *storeTx) error {
		return tx.AscendGreaterOrEqual("", prefix, func(k, v string) bool {
			if strings.HasPrefix(k, prefix) {
				key, value = k, v
			}
			return false
		})
	})
	if err == nil && key == "" {
		err = ErrNotFound
	}
	if err != nil {
		return fixtures.Referral{}, fmt.Errorf("find referral %q: %w", outcomesID, err)
	}
	return decode[fixtures.Referral](key, value)
}

// UpdateReferral changes the client's referral with fn, atomically.
func (s *BuntStore) UpdateReferral(clientID, outcomesID string, fn func(*fixtures.Referral) error) (fixtures.Referral, error) {
	var rec fixtures.Referral
	var fnErr error
	err := s.updateTx(func(tx *storeTx) error {
		var err error
		rec, err = update(tx, recordKey(referralPrefix, clientID, outcomesID), encodeReferral,
			func(r *fixtures.Referral) error { fnErr = fn(r); return fnErr })
		return err
	})
	switch {
	case fnErr != nil:
		return fixtures.Referral{}, fnErr
	case err != nil:
		return fixtures.Referral{}, fmt.Errorf("update referral %q of client %q: %w", outcomesID, clientID, err)
	}
	return rec, nil
}
