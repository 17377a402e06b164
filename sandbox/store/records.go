package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tidwall/buntdb"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// Names of the identifier fields, for error messages.
const (
	fieldOutcomesID = "outcomesId"
	fieldExternalID = "externalSourceId"
)

// encodeReferral checks a referral, canonicalises its submittedAt and
// returns its key and stored value, in the compact form (see compact.go).
func encodeReferral(r referrals.Referral) (key, value string, err error) {
	key, line, js, err := referralParts(r)
	if err != nil {
		return "", "", err
	}
	return key, compactReferral(line, js), nil
}

// referralParts checks a referral, canonicalises its submittedAt and
// returns its key, sort line and JSON.
func referralParts(r referrals.Referral) (key, line, js string, err error) {
	if err := checkIdentity("referral", r.ClientID, fieldOutcomesID, r.OutcomesID); err != nil {
		return "", "", "", err
	}
	if r.SubmittedAt, err = CanonicalTimestamp(r.SubmittedAt); err != nil {
		return "", "", "", err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return "", "", "", fmt.Errorf("encode referral: %w", err)
	}
	line = sortLine(r.ClientID, r.SubmittedAt, r.OutcomesID)
	return recordKey(referralPrefix, r.ClientID, r.OutcomesID), line, string(b), nil
}

// encodeQualified is encodeReferral for qualified referrals. The audit trail
// is not part of the stored value: it lives in audit keys (see audit.go),
// where insertQualified writes it with canonical times.
func encodeQualified(q referrals.QualifiedReferral) (key, value string, err error) {
	q.AuditTrail, q.AuditTrailTotal = nil, 0
	if err := checkIdentity("qualified referral", q.ClientID, fieldExternalID, q.ExternalSourceID); err != nil {
		return "", "", err
	}
	if q.SubmittedAt, err = CanonicalTimestamp(q.SubmittedAt); err != nil {
		return "", "", err
	}
	if q.AuditTrail, err = canonicalAuditTrail(q.AuditTrail); err != nil {
		return "", "", err
	}
	b, err := json.Marshal(q)
	if err != nil {
		return "", "", fmt.Errorf("encode qualified referral: %w", err)
	}
	line := sortLine(q.ClientID, q.SubmittedAt, q.ExternalSourceID)
	return recordKey(qualifiedPrefix, q.ClientID, q.ExternalSourceID), line + "\n" + string(b), nil
}

// decode parses the record in a stored value.
func decode[T any](key, value string) (T, error) {
	var rec T
	record, ok := appendRecordJSON(nil, value)
	if !ok {
		return rec, fmt.Errorf("%w: %q: a compact record that does not parse", ErrCorrupt, key)
	}
	if err := json.Unmarshal(record, &rec); err != nil {
		return rec, fmt.Errorf("%w: %q: %v", ErrCorrupt, key, err)
	}
	return rec, nil
}

// insert stores a new record; ErrConflict if its key is taken. It sets
// the value and, when that replaced one, returns ErrConflict, which the
// caller must return so that updateTx rolls the transaction (and the
// listing index) back and the record stands as it was: one lookup in the
// keys' tree, where reading the key first took two and allocated a
// search item each time (see loadEncoded).
func insert(tx *storeTx, key, value string) error {
	_, replaced, err := tx.Set(key, value, nil)
	switch {
	case err != nil:
		return fmt.Errorf("write %q: %w", key, err)
	case replaced:
		return ErrConflict
	}
	return nil
}

// lookup reads the record at key; ErrNotFound if there is none.
func lookup[T any](tx *storeTx, key string) (T, string, error) {
	value, err := tx.Get(key)
	if errors.Is(err, buntdb.ErrNotFound) {
		var zero T
		return zero, "", ErrNotFound
	}
	if err != nil {
		var zero T
		return zero, "", fmt.Errorf("read %q: %w", key, err)
	}
	rec, err := decode[T](key, value)
	return rec, value, err
}

// update runs fn on the record at key and stores the result, in the caller's
// write transaction. encode must give the record back its key; a different
// key means fn changed the record's identity, which is refused. An unchanged
// record is not rewritten, which spares a file store an fsync.
func update[T any](tx *storeTx, key string, encode func(T) (string, string, error), fn func(*T) error) (T, error) {
	rec, old, err := lookup[T](tx, key)
	if err != nil {
		return rec, err
	}
	if err := fn(&rec); err != nil {
		return rec, err
	}
	newKey, value, err := encode(rec)
	if err != nil {
		return rec, err
	}
	if newKey != key {
		return rec, fmt.Errorf("%w: the update changed the record's client or identifier", ErrInvalid)
	}
	if value != old {
		if _, _, err := tx.Set(key, value, nil); err != nil {
			return rec, fmt.Errorf("write %q: %w", key, err)
		}
	}
	// Return what is stored, with the canonical submittedAt.
	return decode[T](key, value)
}

// canonicalAuditTrail returns trail with every at canonical, as a copy: the
// caller's slice (the fixtures the store resets to) is left alone.
func canonicalAuditTrail(trail []referrals.AuditEntry) ([]referrals.AuditEntry, error) {
	out := slices.Clone(trail)
	for i := range out {
		if canonicalShape(out[i].At) {
			continue // what the store wrote; an update re-encodes the whole trail
		}
		t, err := time.Parse(time.RFC3339Nano, out[i].At)
		if err != nil {
			return nil, fmt.Errorf("%w: auditTrail[%d].at %q is not an RFC 3339 timestamp", ErrInvalid, i, out[i].At)
		}
		out[i].At = t.UTC().Format(referrals.TimestampLayout)
	}
	return out, nil
}

// canonicalShape is a cheap test for a timestamp the store wrote itself
// (referrals.TimestampLayout in UTC), so re-encoding a long audit trail does
// not parse every entry again.
func canonicalShape(s string) bool {
	const n = len("2006-01-02T15:04:05.000000Z")
	return len(s) == n && s[4] == '-' && s[10] == 'T' && s[19] == '.' && s[n-1] == 'Z'
}
