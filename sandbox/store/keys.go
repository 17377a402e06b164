package store

import (
	"fmt"
	"strings"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// Key spaces. Trial-based and qualified referrals never share a prefix.
const (
	referralPrefix  = "r:"
	qualifiedPrefix = "q:"
)

// escape makes an identifier safe as one ':'-separated part of a key or sort
// line: '%', ':' and control characters become %XX. It is injective, and its
// output contains neither ':' nor a newline.
func escape(id string) string {
	if !strings.ContainsFunc(id, needsEscape) {
		return id
	}
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		if c := id[i]; needsEscape(rune(c)) {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

func needsEscape(r rune) bool { return r == '%' || r == ':' || r < 0x20 || r == 0x7f }

// recordKey is the key of one record. The record id comes first so that
// FindReferral, which knows only the id, is a prefix scan.
func recordKey(prefix, clientID, id string) string {
	return idKeyPrefix(prefix, id) + escape(clientID)
}

// idKeyPrefix is the common prefix of the keys of every client's record
// with this id.
func idKeyPrefix(prefix, id string) string { return prefix + escape(id) + ":" }

// CanonicalTimestamp parses an RFC 3339 timestamp and formats it as the store
// keeps it: referrals.TimestampLayout in UTC. Canonical timestamps have a
// fixed width, so they order correctly as strings, which the newest-first
// listing index relies on. Digits below the microsecond are dropped.
func CanonicalTimestamp(s string) (string, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return "", fmt.Errorf("%w: submittedAt %q is not an RFC 3339 timestamp", ErrInvalid, s)
	}
	// A timestamp the sandbox wrote is canonical already: no copy.
	var buf [len("2006-01-02T15:04:05.000000Z")]byte
	if canonical := t.UTC().AppendFormat(buf[:0], referrals.TimestampLayout); string(canonical) == s {
		return s, nil
	}
	return t.UTC().Format(referrals.TimestampLayout), nil
}

// checkIdentity rejects the records no key can be built for.
func checkIdentity(kind, clientID, idField, id string) error {
	if clientID == "" {
		return fmt.Errorf("%w: %s: clientId is empty", ErrInvalid, kind)
	}
	if id == "" {
		return fmt.Errorf("%w: %s of client %q: %s is empty", ErrInvalid, kind, clientID, idField)
	}
	return nil
}
