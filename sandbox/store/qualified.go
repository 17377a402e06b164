package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// CreateQualified stores a new qualified referral; its audit trail goes to
// audit keys (see audit.go).
func (s *BuntStore) CreateQualified(_ context.Context, q referrals.QualifiedReferral) error {
	err := s.updateTx(func(tx *storeTx) error { return insertQualified(tx, q, nil) })
	if err != nil {
		return fmt.Errorf("create qualified referral %q of client %q: %w", q.ExternalSourceID, q.ClientID, err)
	}
	return nil
}

// CreateQualifiedJSON is CreateQualified that also appends to b the new
// record's JSON as GetQualified would return it, byte for byte what
// json.Marshal writes for it: the JSON stored for the record with its
// audit trail spliced in, so a POST encodes the record once. On an error
// it returns b as it was.
func (s *BuntStore) CreateQualifiedJSON(_ context.Context, b []byte, q referrals.QualifiedReferral) ([]byte, error) {
	n := len(b)
	err := s.updateTx(func(tx *storeTx) error { return insertQualified(tx, q, &b) })
	if err != nil {
		return b[:n], fmt.Errorf("create qualified referral %q of client %q: %w", q.ExternalSourceID, q.ClientID, err)
	}
	return b, nil
}

// GetQualified returns the client's qualified referral, recording view in
// its audit trail when view is not nil. Recording appends one audit key;
// the record itself is not rewritten.
func (s *BuntStore) GetQualified(_ context.Context, clientID, externalSourceID string, view *referrals.AuditEntry) (referrals.QualifiedReferral, error) {
	key := recordKey(qualifiedPrefix, clientID, externalSourceID)
	var rec referrals.QualifiedReferral
	read := func(tx *storeTx) error {
		var err error
		if rec, _, err = lookup[referrals.QualifiedReferral](tx, key); err != nil {
			return err
		}
		if view != nil {
			if err := recordView(tx, key, &rec, *view); err != nil {
				return err
			}
		}
		return fillTrail(tx, &rec)
	}
	var err error
	if view == nil {
		err = s.viewTx(read)
	} else {
		err = s.updateTx(read)
	}
	if err != nil {
		return referrals.QualifiedReferral{}, fmt.Errorf("get qualified referral %q of client %q: %w", externalSourceID, clientID, err)
	}
	return rec, nil
}

// ListQualified returns one page of the client's qualified referrals, newest
// first, recording view on each returned record when view is not nil.
func (s *BuntStore) ListQualified(_ context.Context, clientID string, page Page, view *referrals.AuditEntry) ([]referrals.QualifiedReferral, string, error) {
	var out []referrals.QualifiedReferral
	var next string
	read := func(tx *storeTx) error {
		var items []item
		var err error
		if items, next, err = walkPage(tx, qualifiedListing(), clientID, page); err != nil {
			return err
		}
		out = make([]referrals.QualifiedReferral, 0, len(items))
		for _, it := range items {
			rec, err := decode[referrals.QualifiedReferral](it.key, it.value)
			if s.bad.skip(it.key, err) {
				continue
			}
			if err != nil {
				return err
			}
			// buntdb refuses writes during a walk, so views are recorded
			// after it, still inside the transaction.
			if view != nil {
				if err := recordView(tx, it.key, &rec, *view); err != nil {
					return err
				}
			}
			if err := fillTrail(tx, &rec); err != nil {
				return err
			}
			out = append(out, rec)
		}
		return nil
	}
	var err error
	if view == nil {
		err = s.viewTx(read)
	} else {
		err = s.updateTx(read)
	}
	if err != nil {
		return nil, "", fmt.Errorf("list qualified referrals of client %q: %w", clientID, err)
	}
	return out, next, nil
}

// recordView appends view to the trail of rec, stored at key.
func recordView(tx *storeTx, key string, rec *referrals.QualifiedReferral, view referrals.AuditEntry) error {
	if err := migrateTrail(tx, key, rec); err != nil {
		return err
	}
	return appendInOrder(tx, auditKeyPrefix(rec.ClientID, rec.ExternalSourceID), view)
}

// UpdateQualified changes the client's qualified referral with fn,
// atomically. fn sees the record as GetQualified returns it; entries it
// appends to AuditTrail are appended to the stored trail, and changing the
// entries it was given is refused (ErrInvalid): the trail is append-only.
func (s *BuntStore) UpdateQualified(_ context.Context, clientID, externalSourceID string, fn func(*referrals.QualifiedReferral) error) (referrals.QualifiedReferral, error) {
	key := recordKey(qualifiedPrefix, clientID, externalSourceID)
	var rec referrals.QualifiedReferral
	var fnErr error
	err := s.updateTx(func(tx *storeTx) error {
		var err error
		if rec, _, err = lookup[referrals.QualifiedReferral](tx, key); err != nil {
			return err
		}
		if err := migrateTrail(tx, key, &rec); err != nil {
			return err
		}
		if err := fillTrail(tx, &rec); err != nil {
			return err
		}
		_, old, err := encodeQualified(rec)
		if err != nil {
			return err
		}
		given := slices.Clone(rec.AuditTrail)
		if fnErr = fn(&rec); fnErr != nil {
			return fnErr
		}
		if len(rec.AuditTrail) < len(given) || !slices.Equal(rec.AuditTrail[:len(given)], given) {
			return fmt.Errorf("%w: the update changed or removed audit entries; the trail is append-only", ErrInvalid)
		}
		newKey, value, err := encodeQualified(rec)
		if err != nil {
			return err
		}
		if newKey != key {
			return fmt.Errorf("%w: the update changed the record's client or identifier", ErrInvalid)
		}
		// An unchanged record is not rewritten, which spares a file store
		// bytes and an fsync.
		if value != old {
			if _, _, err := tx.Set(key, value, nil); err != nil {
				return fmt.Errorf("write %q: %w", key, err)
			}
		}
		if err := appendInOrder(tx, auditKeyPrefix(clientID, externalSourceID), rec.AuditTrail[len(given):]...); err != nil {
			return err
		}
		// Return what is stored, with the canonical submittedAt.
		if rec, err = decode[referrals.QualifiedReferral](key, value); err != nil {
			return err
		}
		return fillTrail(tx, &rec)
	})
	switch {
	case fnErr != nil:
		return referrals.QualifiedReferral{}, fnErr
	case err != nil:
		return referrals.QualifiedReferral{}, fmt.Errorf("update qualified referral %q of client %q: %w", externalSourceID, clientID, err)
	}
	return rec, nil
}
