package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// CreateReferral stores a new trial-based referral.
func (s *BuntStore) CreateReferral(_ context.Context, r referrals.Referral) error {
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
func (s *BuntStore) GetReferral(_ context.Context, clientID, outcomesID string) (referrals.Referral, error) {
	var rec referrals.Referral
	err := s.viewTx(func(tx *storeTx) error {
		var err error
		rec, _, err = lookup[referrals.Referral](tx, recordKey(referralPrefix, clientID, outcomesID))
		return err
	})
	if err != nil {
		return referrals.Referral{}, fmt.Errorf("get referral %q of client %q: %w", outcomesID, clientID, err)
	}
	return rec, nil
}

// ListReferrals returns one page of the client's referrals, newest first.
func (s *BuntStore) ListReferrals(_ context.Context, clientID string, page Page) ([]referrals.Referral, string, error) {
	out := []referrals.Referral{} // not nil: an empty page
	next, err := s.listRecords("referrals", referralListing(), clientID, page, func(it item) error {
		rec, err := decode[referrals.Referral](it.key, it.value)
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
func (s *BuntStore) FindReferral(_ context.Context, outcomesID string) (referrals.Referral, error) {
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
		return referrals.Referral{}, fmt.Errorf("find referral %q: %w", outcomesID, err)
	}
	return decode[referrals.Referral](key, value)
}

// UpdateReferral changes the client's referral with fn, atomically.
func (s *BuntStore) UpdateReferral(_ context.Context, clientID, outcomesID string, fn func(*referrals.Referral) error) (referrals.Referral, error) {
	var rec referrals.Referral
	var fnErr error
	err := s.updateTx(func(tx *storeTx) error {
		var err error
		rec, err = update(tx, recordKey(referralPrefix, clientID, outcomesID), encodeReferral,
			func(r *referrals.Referral) error { fnErr = fn(r); return fnErr })
		return err
	})
	switch {
	case fnErr != nil:
		return referrals.Referral{}, fnErr
	case err != nil:
		return referrals.Referral{}, fmt.Errorf("update referral %q of client %q: %w", outcomesID, clientID, err)
	}
	return rec, nil
}
