package store

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// maxUpdateAttempts bounds the compare-and-set retries of one update. A
// retry means another writer changed the record between the read and the
// commit; thousands in a row mean something is wrong, not busy.
const maxUpdateAttempts = 1000

// errRetry is casScript's "changed since the read" answer.
var errRetry = errors.New("record changed during the update")

// cas commits an update read at generation gen. audit is nil for a
// referral; for a qualified referral it is the entries to append after the
// total read.
func (s *RedisStore) cas(ctx context.Context, gen, kind, clientID, id, oldJSON, newJSON, oldMember, newMember string, total int, audit []string) error {
	args := append([]any{gen, kind, escape(id), oldJSON, newJSON, oldMember, newMember, total}, quotaArgs(s.quota)...)
	for _, a := range audit {
		args = append(args, a)
	}
	res, err := s.runClient(ctx, clientID, casScript, args...)
	if err != nil {
		return err
	}
	switch res {
	case "ok":
		return nil
	case "retry":
		return errRetry
	case "notfound":
		return ErrNotFound
	}
	return fmt.Errorf("redis: unexpected update reply %v", res)
}

// UpdateReferral runs fn on the client's referral and commits the result
// if nobody changed the record meanwhile, else runs fn again on the new
// record. fn may thus run more than once; only its last run counts.
func (s *RedisStore) UpdateReferral(ctx context.Context, clientID, outcomesID string, fn func(*referrals.Referral) error) (referrals.Referral, error) {
	rec, err := s.updateReferral(ctx, clientID, outcomesID, fn)
	var fnErr fnError
	switch {
	case errors.As(err, &fnErr):
		return referrals.Referral{}, fnErr.err
	case err != nil:
		return referrals.Referral{}, fmt.Errorf("update referral %q of client %q: %w", outcomesID, clientID, err)
	}
	return rec, nil
}

// fnError carries the caller's own error out unchanged.
type fnError struct{ err error }

func (e fnError) Error() string { return e.err.Error() }

func (s *RedisStore) updateReferral(ctx context.Context, clientID, id string, fn func(*referrals.Referral) error) (referrals.Referral, error) {
	for range maxUpdateAttempts {
		rep, err := s.read(ctx, redisReferral, clientID, id, "")
		if err != nil {
			return referrals.Referral{}, err
		}
		rec, err := decodeJSON[referrals.Referral](id, rep.json)
		if err != nil {
			return referrals.Referral{}, err
		}
		oldMember := member(clientID, sortLine(clientID, rec.SubmittedAt, id))
		if err := fn(&rec); err != nil {
			return referrals.Referral{}, fnError{err}
		}
		if rec.ClientID != clientID || rec.OutcomesID != id {
			return referrals.Referral{}, fmt.Errorf("%w: the update changed the record's client or identifier", ErrInvalid)
		}
		enc, err := redisReferralRecord(rec)
		if err != nil {
			return referrals.Referral{}, err
		}
		err = s.cas(ctx, rep.gen, redisReferral, clientID, id, rep.json, enc.json, oldMember, enc.member, -1, nil)
		if errors.Is(err, errRetry) {
			continue
		}
		if err != nil {
			return referrals.Referral{}, err
		}
		return decodeJSON[referrals.Referral](id, enc.json)
	}
	return referrals.Referral{}, fmt.Errorf("%w after %d attempts", errRetry, maxUpdateAttempts)
}

// UpdateQualified is UpdateReferral for qualified referrals: fn sees the
// record as GetQualified returns it, entries it appends are appended to
// the stored trail, and changing the entries it was given is ErrInvalid.
func (s *RedisStore) UpdateQualified(ctx context.Context, clientID, externalSourceID string, fn func(*referrals.QualifiedReferral) error) (referrals.QualifiedReferral, error) {
	rec, err := s.updateQualified(ctx, clientID, externalSourceID, fn)
	var fnErr fnError
	switch {
	case errors.As(err, &fnErr):
		return referrals.QualifiedReferral{}, fnErr.err
	case err != nil:
		return referrals.QualifiedReferral{}, fmt.Errorf("update qualified referral %q of client %q: %w", externalSourceID, clientID, err)
	}
	return rec, nil
}

func (s *RedisStore) updateQualified(ctx context.Context, clientID, id string, fn func(*referrals.QualifiedReferral) error) (referrals.QualifiedReferral, error) {
	for range maxUpdateAttempts {
		rec, rep, err := s.getQualified(ctx, clientID, id, nil)
		if err != nil {
			return referrals.QualifiedReferral{}, err
		}
		oldMember := member(clientID, sortLine(clientID, rec.SubmittedAt, id))
		given := slices.Clone(rec.AuditTrail)
		if err := fn(&rec); err != nil {
			return referrals.QualifiedReferral{}, fnError{err}
		}
		if len(rec.AuditTrail) < len(given) || !slices.Equal(rec.AuditTrail[:len(given)], given) {
			return referrals.QualifiedReferral{}, fmt.Errorf("%w: the update changed or removed audit entries; the trail is append-only", ErrInvalid)
		}
		if rec.ClientID != clientID || rec.ExternalSourceID != id {
			return referrals.QualifiedReferral{}, fmt.Errorf("%w: the update changed the record's client or identifier", ErrInvalid)
		}
		// given ends in the newest stored entry (the commit checks that
		// none was added since), so the new entries are put in order here,
		// as appendInOrder does.
		added := slices.Clone(rec.AuditTrail[len(given):])
		prev := ""
		if len(given) > 0 {
			prev = given[len(given)-1].At
		}
		for i := range added {
			added[i].At = notBefore(added[i].At, prev)
			prev = added[i].At
		}
		enc, err := redisQualifiedRecord(withTrail(rec, nil))
		if err != nil {
			return referrals.QualifiedReferral{}, err
		}
		audit, err := encodeAudit(added)
		if err != nil {
			return referrals.QualifiedReferral{}, err
		}
		err = s.cas(ctx, rep.gen, redisQualified, clientID, id, rep.json, enc.json, oldMember, enc.member, rep.total, audit)
		if errors.Is(err, errRetry) {
			continue
		}
		if err != nil {
			return referrals.QualifiedReferral{}, err
		}
		// The commit checked that the trail still had rep.total entries, so
		// the stored trail's newest entries are those read plus the added.
		trail := append(slices.Clone(given), added...)
		out, err := decodeJSON[referrals.QualifiedReferral](id, enc.json)
		if err != nil {
			return referrals.QualifiedReferral{}, err
		}
		out.AuditTrail = trail[max(0, len(trail)-TrailInRecord):]
		out.AuditTrailTotal = rep.total + len(added)
		return out, nil
	}
	return referrals.QualifiedReferral{}, fmt.Errorf("%w after %d attempts", errRetry, maxUpdateAttempts)
}

// withTrail returns q with its trail replaced.
func withTrail(q referrals.QualifiedReferral, trail []referrals.AuditEntry) referrals.QualifiedReferral {
	q.AuditTrail = trail
	return q
}
