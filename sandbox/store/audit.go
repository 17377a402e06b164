package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// A qualified referral's audit entries live apart from the record, one key
// each, appended and never rewritten:
//
//	a:<escaped externalSourceId>:<escaped client>:<seq>
//
// seq counts from 1 (the oldest entry) and is zero-padded to a fixed width,
// so the keys of one record order by it. Before, every read appended to a
// trail inside the record and rewrote the whole record: after 6,000 reads
// one record was 792 KB and each read wrote and fsynced all of it. Now a
// read writes one small key and reads at most TrailInRecord entries back.
const auditPrefix = "a:"

// TrailInRecord is how many of its newest audit entries a qualified
// referral read from the store carries in AuditTrail; AuditTrailTotal
// counts them all and QualifiedAuditTrail pages through every one.
const TrailInRecord = 20

// auditSeqWidth is the digits of a seq in a key: any uint64 fits.
const auditSeqWidth = 20

// auditCursorKind is the cursor kind of audit trail listings.
const auditCursorKind = "a"

// auditKeyPrefix is the common prefix of every audit key of one record.
// Neither escaped part holds ':', so no other record's keys share it.
func auditKeyPrefix(clientID, externalSourceID string) string {
	return auditPrefix + escape(externalSourceID) + ":" + escape(clientID) + ":"
}

func auditKey(prefix string, seq uint64) string {
	var digits [auditSeqWidth]byte
	for i := len(digits) - 1; i >= 0; i-- {
		digits[i] = byte('0' + seq%10)
		seq /= 10
	}
	return prefix + string(digits[:])
}

// auditSeq parses the seq of an audit key under prefix.
func auditSeq(prefix, key string) (uint64, bool) {
	digits, ok := strings.CutPrefix(key, prefix)
	if !ok || len(digits) != auditSeqWidth {
		return 0, false
	}
	seq, err := strconv.ParseUint(digits, 10, 64)
	return seq, err == nil
}

// auditEnd sorts after every audit key under prefix (digits sort before
// '~').
func auditEnd(prefix string) string { return prefix + "~" }

// lastAudit returns the seq and the stored JSON of the newest audit entry
// under prefix, 0 and "" when there is none: one seek in the key order,
// whatever the trail's length.
func lastAudit(tx *storeTx, prefix string) (seq uint64, entry string, err error) {
	err = tx.DescendLessOrEqual("", auditEnd(prefix), func(key, value string) bool {
		if seq, _ = auditSeq(prefix, key); seq > 0 {
			entry = value
		}
		return false
	})
	if err != nil {
		return 0, "", fmt.Errorf("seek audit trail %q: %w", prefix, err)
	}
	return seq, entry, nil
}

// appendAudit stores entries after the newest audit entry under prefix.
func appendAudit(tx *storeTx, prefix string, entries ...referrals.AuditEntry) error {
	if len(entries) == 0 {
		return nil
	}
	last, _, err := lastAudit(tx, prefix)
	if err != nil {
		return err
	}
	return storeTrail(tx, prefix, last, entries, nil)
}

// appendInOrder is appendAudit for entries of what happens now (a view, a
// status move): an entry whose at is earlier than the entry before it (a
// client's clock moved back between the two) takes that entry's at, so a
// trail read oldest first never goes back in time and its order, which is
// the order the entries were stored in, agrees with their times.
func appendInOrder(tx *storeTx, prefix string, entries ...referrals.AuditEntry) error {
	if len(entries) == 0 {
		return nil
	}
	last, newest, err := lastAudit(tx, prefix)
	if err != nil {
		return err
	}
	prev := entryAt(newest)
	entries = slices.Clone(entries)
	for i := range entries {
		entries[i].At = notBefore(entries[i].At, prev)
		prev = entries[i].At
	}
	return storeTrail(tx, prefix, last, entries, nil)
}

// entryAt is the at of a stored audit entry's JSON, which json.Marshal
// starts with it; "" when it does not.
func entryAt(js string) string {
	rest, ok := strings.CutPrefix(js, `{"at":"`)
	if !ok {
		return ""
	}
	at, _, _ := strings.Cut(rest, `"`)
	return at
}

// notBefore returns at, or prev when that is later. Both in the store's
// canonical form (fixed width, UTC) compare as strings; anything else is
// left as it is.
func notBefore(at, prev string) string {
	if canonicalShape(at) && canonicalShape(prev) && prev > at {
		return prev
	}
	return at
}

// storeTrail stores entries under prefix after seq last, the newest entry
// there (0: none), and when list is not nil also appends to it the
// entries' JSON as stored, separated by commas.
func storeTrail(tx *storeTx, prefix string, last uint64, entries []referrals.AuditEntry, list *[]byte) error {
	for i, e := range entries {
		b, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("encode audit entry: %w", err)
		}
		key := auditKey(prefix, last+uint64(i)+1)
		if _, _, err := tx.Set(key, string(b), nil); err != nil {
			return fmt.Errorf("write %q: %w", key, err)
		}
		if list != nil {
			if i > 0 {
				*list = append(*list, ',')
			}
			*list = append(*list, b...)
		}
	}
	return nil
}

// deleteTrail deletes every audit entry under prefix.
func deleteTrail(tx *storeTx, prefix string) error {
	var keys []string
	err := tx.AscendRange("", prefix, auditEnd(prefix), func(k, _ string) bool {
		keys = append(keys, k)
		return true
	})
	if err != nil {
		return fmt.Errorf("walk audit trail %q: %w", prefix, err)
	}
	for _, k := range keys {
		if _, err := tx.Delete(k); err != nil {
			return fmt.Errorf("delete %q: %w", k, err)
		}
	}
	return nil
}

// fillTrail sets the record's AuditTrail to its newest TrailInRecord entries,
// oldest first, and AuditTrailTotal to their number. A record written before
// audit keys existed still holds its whole trail (see migrateTrail) and is
// shown the same way.
func fillTrail(tx *storeTx, q *referrals.QualifiedReferral) error {
	if len(q.AuditTrail) > 0 {
		q.AuditTrailTotal = len(q.AuditTrail)
		q.AuditTrail = q.AuditTrail[max(0, len(q.AuditTrail)-TrailInRecord):]
		return nil
	}
	prefix := auditKeyPrefix(q.ClientID, q.ExternalSourceID)
	trail := make([]referrals.AuditEntry, 0, TrailInRecord)
	total := uint64(0)
	var decodeErr error
	err := tx.DescendLessOrEqual("", auditEnd(prefix), func(key, value string) bool {
		seq, ok := auditSeq(prefix, key)
		if !ok {
			return false
		}
		if total == 0 {
			total = seq
		}
		var e referrals.AuditEntry
		if decodeErr = json.Unmarshal([]byte(value), &e); decodeErr != nil {
			decodeErr = fmt.Errorf("decode audit entry %q: %w", key, decodeErr)
			return false
		}
		trail = append(trail, e)
		return len(trail) < TrailInRecord
	})
	if err == nil {
		err = decodeErr
	}
	if err != nil {
		return fmt.Errorf("read audit trail %q: %w", prefix, err)
	}
	for i, j := 0, len(trail)-1; i < j; i, j = i+1, j-1 {
		trail[i], trail[j] = trail[j], trail[i]
	}
	q.AuditTrail, q.AuditTrailTotal = trail, int(total)
	return nil
}

// migrateTrail moves the trail of a record written before audit keys
// existed (a --data file of an older sandbox) into audit keys and rewrites
// the record without it, once, before the first entry is appended.
func migrateTrail(tx *storeTx, key string, q *referrals.QualifiedReferral) error {
	if len(q.AuditTrail) == 0 {
		return nil
	}
	if err := appendAudit(tx, auditKeyPrefix(q.ClientID, q.ExternalSourceID), q.AuditTrail...); err != nil {
		return err
	}
	q.AuditTrail = nil
	_, value, err := encodeQualified(*q)
	if err != nil {
		return err
	}
	if _, _, err := tx.Set(key, value, nil); err != nil {
		return fmt.Errorf("write %q: %w", key, err)
	}
	return nil
}

// insertQualified stores a new qualified referral and its audit trail.
// When answer is not nil, it also appends to it the record's JSON as
// GetQualified returns it (see CreateQualifiedJSON).
func insertQualified(tx *storeTx, q referrals.QualifiedReferral, answer *[]byte) error {
	key, value, err := encodeQualified(q)
	if err != nil {
		return err
	}
	if err := insert(tx, key, value); err != nil {
		return err
	}
	// Fixture files may write times as 2025-01-03T10:00:00.5Z; the trail is
	// served in the documented six-digit format.
	trail, err := canonicalAuditTrail(q.AuditTrail)
	if err != nil {
		return err
	}
	// A new record starts a new trail. Entries already under its id belong
	// to no record: a transaction a crash tore (buntdb replays each of its
	// writes alone), or a client reset of an earlier version, which left
	// them. Shown as this record's, they would tell a history it never had.
	// Without such entries, deleteTrail makes one seek and allocates nothing.
	prefix := auditKeyPrefix(q.ClientID, q.ExternalSourceID)
	if err := deleteTrail(tx, prefix); err != nil {
		return err
	}
	if answer == nil {
		return storeTrail(tx, prefix, 0, trail, nil)
	}
	// The stored JSON ends in the trail it leaves out, and only a record
	// with a submission (a contract's) writes a member after it. Every
	// entry is shown while the trail fits in the record (fillTrail).
	record := value[strings.IndexByte(value, '\n')+1:]
	const noTrail = `"auditTrail":null}`
	if len(q.Submission) == 0 && len(trail) <= TrailInRecord && strings.HasSuffix(record, noTrail) {
		*answer = append(*answer, record[:len(record)-len("null}")]...)
		*answer = append(*answer, '[')
		err := storeTrail(tx, prefix, 0, trail, answer)
		*answer = append(*answer, ']')
		if len(trail) > 0 {
			*answer = append(*answer, `,"auditTrailTotal":`...)
			*answer = strconv.AppendInt(*answer, int64(len(trail)), 10)
		}
		*answer = append(*answer, '}')
		return err
	}
	if err := storeTrail(tx, prefix, 0, trail, nil); err != nil {
		return err
	}
	return appendStoredQualified(tx, key, answer)
}

// appendStoredQualified appends the JSON of the qualified record at key as
// GetQualified returns it.
func appendStoredQualified(tx *storeTx, key string, answer *[]byte) error {
	rec, _, err := lookup[referrals.QualifiedReferral](tx, key)
	if err != nil {
		return err
	}
	if err := fillTrail(tx, &rec); err != nil {
		return err
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode qualified referral: %w", err)
	}
	*answer = append(*answer, b...)
	return nil
}

// QualifiedAuditTrail returns one page of the whole audit trail of the
// client's qualified referral, oldest first.
func (s *BuntStore) QualifiedAuditTrail(_ context.Context, clientID, externalSourceID string, page Page) ([]referrals.AuditEntry, string, error) {
	var out []referrals.AuditEntry
	var next string
	err := s.viewTx(func(tx *storeTx) error {
		rec, _, err := lookup[referrals.QualifiedReferral](tx, recordKey(qualifiedPrefix, clientID, externalSourceID))
		if err != nil {
			return err
		}
		out, next, err = auditPage(tx, rec, page)
		return err
	})
	if err != nil {
		return nil, "", fmt.Errorf("audit trail of qualified referral %q of client %q: %w", externalSourceID, clientID, err)
	}
	return out, next, nil
}

// auditPage reads the page of rec's trail after the cursor: limit entries
// from the seq after the cursor's, plus one to tell whether more follow.
func auditPage(tx *storeTx, rec referrals.QualifiedReferral, page Page) ([]referrals.AuditEntry, string, error) {
	prefix := auditKeyPrefix(rec.ClientID, rec.ExternalSourceID)
	limit, after, err := auditPageStart(prefix, page)
	if err != nil {
		return nil, "", err
	}
	out := make([]referrals.AuditEntry, 0, limit+1)
	if len(rec.AuditTrail) > 0 { // not migrated yet: the record holds it all
		if after < uint64(len(rec.AuditTrail)) {
			out = append(out, rec.AuditTrail[after:min(uint64(len(rec.AuditTrail)), after+uint64(limit)+1)]...)
		}
	} else {
		var decodeErr error
		err = tx.AscendGreaterOrEqual("", auditKey(prefix, after+1), func(key, value string) bool {
			if _, ok := auditSeq(prefix, key); !ok {
				return false
			}
			var e referrals.AuditEntry
			if decodeErr = json.Unmarshal([]byte(value), &e); decodeErr != nil {
				decodeErr = fmt.Errorf("decode audit entry %q: %w", key, decodeErr)
				return false
			}
			out = append(out, e)
			return len(out) <= limit
		})
		if err == nil {
			err = decodeErr
		}
		if err != nil {
			return nil, "", fmt.Errorf("walk audit trail %q: %w", prefix, err)
		}
	}
	return auditPageEnd(prefix, out, after, limit)
}

// auditPageStart applies the page rules to a listing of the audit trail
// whose keys start with prefix: the page size, and the seq of the entry the
// cursor names (0 without one), after which the page starts.
func auditPageStart(prefix string, page Page) (limit int, after uint64, err error) {
	if limit, err = pageLimit(page.Limit); err != nil {
		return 0, 0, err
	}
	if page.Cursor == "" {
		return limit, 0, nil
	}
	line, err := parseCursor(page.Cursor, auditCursorKind)
	if err != nil {
		return 0, 0, err
	}
	after, ok := auditSeq(prefix, line)
	if !ok {
		return 0, 0, fmt.Errorf("%w: cursor of another record", ErrBadCursor)
	}
	return limit, after, nil
}

// auditPageEnd cuts a page read with one entry beyond limit, which only
// tells whether a next page exists, and returns the next page's cursor: the
// audit key of the page's last entry (seq after+limit), "" on the last.
func auditPageEnd(prefix string, out []referrals.AuditEntry, after uint64, limit int) ([]referrals.AuditEntry, string, error) {
	if len(out) <= limit {
		return out, "", nil
	}
	next, err := encodeCursor(auditCursorKind, auditKey(prefix, after+uint64(limit)))
	if err != nil {
		return nil, "", err
	}
	return out[:limit], next, nil
}
