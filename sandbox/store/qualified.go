package store

import (
	"fmt"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/tidwall/buntdb"
)

// CreateQualified stores a new qualified referral.
func (s *BuntStore) CreateQualified(q fixtures.QualifiedReferral) error {
	key, value, err := encodeQualified(q)
	if err == nil {
		err = s.updateTx(func(tx *buntdb.Tx) error { return insert(tx, key, value) })
	}
	if err != nil {
		return fmt.Errorf("create qualified referral %q of client %q: %w", q.ExternalSourceID, q.ClientID, err)
	}
	return nil
}

// GetQualified returns the client's qualified referral, recording view in
// its audit trail when view is not nil.
func (s *BuntStore) GetQualified(clientID, externalSourceID string, view *fixtures.AuditEntry) (fixtures.QualifiedReferral, error) {
	key := recordKey(qualifiedPrefix, clientID, externalSourceID)
	var rec fixtures.QualifiedReferral
	var err error
	if view == nil {
		err = s.viewTx(func(tx *buntdb.Tx) error {
			rec, _, err = lookup[fixtures.QualifiedReferral](tx, key)
			return err
		})
	} else {
		err = s.updateTx(func(tx *buntdb.Tx) error {
			rec, err = update(tx, key, encodeQualified, appendAudit(*view))
			return err
		})
	}
	if err != nil {
		return fixtures.QualifiedReferral{}, fmt.Errorf("get qualified referral %q of client %q: %w", externalSourceID, clientID, err)
	}
	return rec, nil
}

// ListQualified returns one page of the client's qualified referrals, newest
// first, recording view on each returned record when view is not nil.
func (s *BuntStore) ListQualified(clientID string, page Page, view *fixtures.AuditEntry) ([]fixtures.QualifiedReferral, string, error) {
	var out []fixtures.QualifiedReferral
	var next string
	read := func(tx *buntdb.Tx) error {
		var items []item
		var err error
		if items, next, err = walkPage(tx, qualifiedListing(), clientID, page); err != nil {
			return err
		}
		out = make([]fixtures.QualifiedReferral, 0, len(items))
		for _, it := range items {
			var rec fixtures.QualifiedReferral
			if view == nil {
				rec, err = decode[fixtures.QualifiedReferral](it.key, it.value)
			} else {
				// buntdb refuses writes during a walk, so the page is
				// written after it, still inside the transaction.
				rec, err = update(tx, it.key, encodeQualified, appendAudit(*view))
			}
			if s.bad.skip(it.key, err) {
				continue
			}
			if err != nil {
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

// UpdateQualified changes the client's qualified referral with fn,
// atomically.
func (s *BuntStore) UpdateQualified(clientID, externalSourceID string, fn func(*fixtures.QualifiedReferral) error) (fixtures.QualifiedReferral, error) {
	var rec fixtures.QualifiedReferral
	var fnErr error
	err := s.updateTx(func(tx *buntdb.Tx) error {
		var err error
		rec, err = update(tx, recordKey(qualifiedPrefix, clientID, externalSourceID), encodeQualified,
			func(q *fixtures.QualifiedReferral) error { fnErr = fn(q); return fnErr })
		return err
	})
	switch {
	case fnErr != nil:
		return fixtures.QualifiedReferral{}, fnErr
	case err != nil:
		return fixtures.QualifiedReferral{}, fmt.Errorf("update qualified referral %q of client %q: %w", externalSourceID, clientID, err)
	}
	return rec, nil
}

// appendAudit returns an update that adds entry to the audit trail.
func appendAudit(entry fixtures.AuditEntry) func(*fixtures.QualifiedReferral) error {
	return func(q *fixtures.QualifiedReferral) error {
		q.AuditTrail = append(q.AuditTrail, entry)
		return nil
	}
}
