package store

import (
	"errors"
	"fmt"
)

// Quota bounds what one client may keep in the store: its records of both
// kinds, and the bytes they take with their audit trails. A zero field is
// no bound. The quota belongs to a client id (the verified identity of a
// token), so one runaway caller fills its own quota and leaves every other
// client's room alone.
//
// Bytes count what the backend keeps for the client: each record's key
// and stored value, and each audit entry's key and JSON on the embedded
// store; each record's JSON and listing member, and each audit entry's
// JSON on Redis, which so counts a record about a hundred bytes less (no
// key, no sort line before the JSON). What a record costs in memory is
// larger again (see docs/security.md).
type Quota struct {
	// Records bounds the client's referrals and qualified referrals
	// together.
	Records int
	// Bytes bounds the bytes of those records and of their audit entries.
	Bytes int64
}

// ErrQuota: the write would take the client beyond its quota (see Quota);
// nothing was written. Its error names the bound that was reached.
var ErrQuota = errors.New("store quota exceeded")

// check refuses a quota with a negative bound.
func (q Quota) check() error {
	if q.Records < 0 || q.Bytes < 0 {
		return fmt.Errorf("%w: quota bounds must not be negative", ErrInvalid)
	}
	return nil
}

// usage is what one client keeps (or, in a transaction, the change of it).
type usage struct {
	records int
	bytes   int64
}

// exceeds reports which bound of q a client holding u (after a change
// that grew it by d) breaks, as an error wrapping ErrQuota, or nil. A
// change that does not grow the bound it is measured by is never refused,
// so a client over its quota (after fixtures larger than it were loaded)
// can still change a record without growing it.
func (q Quota) exceeds(u, d usage) error {
	if q.Records > 0 && d.records > 0 && u.records+d.records > q.Records {
		return fmt.Errorf("%w: the client would hold %d records, its quota is %d", ErrQuota, u.records+d.records, q.Records)
	}
	if q.Bytes > 0 && d.bytes > 0 && u.bytes+d.bytes > q.Bytes {
		return fmt.Errorf("%w: the client would hold %d bytes, its quota is %d", ErrQuota, u.bytes+d.bytes, q.Bytes)
	}
	return nil
}
