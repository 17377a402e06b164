package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// EncodedSet is a fixture set's records as the embedded store keeps them:
// each record's key and stored value (sort line and JSON), encoded and
// checked once. The sandbox keeps one to seed the store and to reset it
// to, in place of the decoded fixtures: a decoded referral costs about as
// much memory again as its stored value, and the in-memory store inserts
// these very strings, so until a record changes the set and the store
// share one copy. A reset re-inserts the strings without encoding again.
//
// The zero value and nil hold no records. An EncodedSet is never changed
// once built, so it is safe for concurrent use.
type EncodedSet struct {
	referrals []item
	qualified []encodedQualified
}

// encodedQualified is a qualified referral's record and its audit trail,
// which the store keeps apart from the record (see audit.go).
type encodedQualified struct {
	item
	trail []referrals.AuditEntry // with canonical times
}

// EncodeSet encodes the records of set (its clients and trials are not
// records), checking each as Load does: identity fields present,
// timestamps RFC 3339. Two records with one key are found when the set is
// loaded (ErrConflict), as Load finds them. A nil set gives an empty set.
func EncodeSet(set *fixtures.Set) (*EncodedSet, error) {
	e := &EncodedSet{}
	if set == nil {
		return e, nil
	}
	// The slices never grow past these capacities, so the packer's
	// pointers into them stay valid.
	var p packer
	e.referrals = make([]item, 0, len(set.Referrals))
	for i, r := range set.Referrals {
		key, value, err := encodeReferral(r)
		if err != nil {
			return nil, fmt.Errorf("referral %d (%q): %w", i, r.OutcomesID, err)
		}
		e.referrals = append(e.referrals, item{key, value})
		it := &e.referrals[len(e.referrals)-1]
		p.pack(&it.key)
		p.pack(&it.value)
	}
	e.qualified = make([]encodedQualified, 0, len(set.QualifiedReferrals))
	for i, q := range set.QualifiedReferrals {
		key, value, err := encodeQualified(q)
		if err == nil {
			// Fixture files may write times as 2025-01-03T10:00:00.5Z; the
			// trail is served in the documented six-digit format.
			q.AuditTrail, err = canonicalAuditTrail(q.AuditTrail)
		}
		if err != nil {
			return nil, fmt.Errorf("qualified referral %d (%q): %w", i, q.ExternalSourceID, err)
		}
		e.qualified = append(e.qualified, encodedQualified{item{key, value}, q.AuditTrail})
		eq := &e.qualified[len(e.qualified)-1]
		p.pack(&eq.key)
		p.pack(&eq.value)
	}
	p.flush()
	return e, nil
}

// packChunk is the largest string a packer copies records into, and
// packFirstChunk its first: each chunk is twice the one before, up to
// packChunk. A set as small as the default fixtures then takes one small
// string, not a megabyte that stays allocated as long as the sandbox runs
// and that makes the collector's first cycles come sooner.
const (
	packFirstChunk = 16 << 10
	packChunk      = 1 << 20
)

// packer copies many small strings into a few large ones and points each
// at its copy. An EncodedSet is kept as long as the sandbox runs, so its
// strings might as well share allocations: each record's key and value
// would otherwise be an allocation of its own, rounded up to Go's next
// size class (about 30 bytes a referral) and interleaved in memory with
// the garbage of encoding it, which keeps partly used pages resident once
// that garbage is freed.
type packer struct {
	chunk strings.Builder
	refs  []*string // the strings in chunk, in order
	size  int       // the size of the last chunk begun; 0 before the first
}

// pack copies *s into the current chunk; flush points *s at the copy.
func (p *packer) pack(s *string) {
	if p.chunk.Len() > 0 && p.chunk.Len()+len(*s) > p.chunk.Cap() {
		p.flush()
	}
	if p.chunk.Len() == 0 {
		p.size = min(max(2*p.size, packFirstChunk), packChunk)
		p.chunk.Grow(max(p.size, len(*s)))
	}
	p.chunk.WriteString(*s)
	p.refs = append(p.refs, s)
}

// flush ends the current chunk: each string packed into it now points
// into it.
func (p *packer) flush() {
	all := p.chunk.String()
	off := 0
	for _, s := range p.refs {
		n := len(*s)
		*s = all[off : off+n]
		off += n
	}
	p.refs = p.refs[:0]
	p.chunk = strings.Builder{}
}

// Len is the number of records, of both kinds.
func (e *EncodedSet) Len() int {
	if e == nil {
		return 0
	}
	return len(e.referrals) + len(e.qualified)
}

// Set decodes the records back, for a store that loads a fixtures.Set (the
// Redis store): each as the store would return it, submittedAt canonical,
// which loads exactly as the fixtures it was encoded from.
func (e *EncodedSet) Set() (*fixtures.Set, error) {
	set := &fixtures.Set{}
	if e == nil {
		return set, nil
	}
	set.Referrals = make([]referrals.Referral, 0, len(e.referrals))
	for _, it := range e.referrals {
		r, err := decode[referrals.Referral](it.key, it.value)
		if err != nil {
			return nil, err
		}
		set.Referrals = append(set.Referrals, r)
	}
	set.QualifiedReferrals = make([]referrals.QualifiedReferral, 0, len(e.qualified))
	for _, eq := range e.qualified {
		q, err := decode[referrals.QualifiedReferral](eq.key, eq.value)
		if err != nil {
			return nil, err
		}
		q.AuditTrail = eq.trail
		set.QualifiedReferrals = append(set.QualifiedReferrals, q)
	}
	return set, nil
}

// ofClient is the part of e that belongs to the client.
func (e *EncodedSet) ofClient(clientID string) *EncodedSet {
	out := &EncodedSet{}
	if e == nil {
		return out
	}
	owner := escape(clientID)
	for _, it := range e.referrals {
		if keyClient(it.key) == owner {
			out.referrals = append(out.referrals, it)
		}
	}
	for _, eq := range e.qualified {
		if keyClient(eq.key) == owner {
			out.qualified = append(out.qualified, eq)
		}
	}
	return out
}

// keyClient is the escaped client id of a record key,
// <prefix><escaped id>:<escaped client>: escaped parts hold no ':'.
func keyClient(key string) string {
	rest := key[strings.IndexByte(key, ':')+1:]
	return rest[strings.IndexByte(rest, ':')+1:]
}

// loadEncoded inserts e's records in the caller's write transaction; a key
// already taken is ErrConflict, and the caller's error rolls the
// transaction back. It sets each record and learns from the set whether
// the key was taken (insert), rather than reading the key first: each
// read of buntdb allocates a 48-byte search item, the size of the item it
// keeps for the record, and those dropped items, interleaved with the
// records' items, would leave the kept items' spans partly used and
// resident after the garbage is collected.
func loadEncoded(tx *storeTx, e *EncodedSet) error {
	if e == nil {
		return nil
	}
	for i, it := range e.referrals {
		if err := insert(tx, it.key, it.value); err != nil {
			return fmt.Errorf("referral %d (key %q): %w", i, it.key, err)
		}
	}
	for i, eq := range e.qualified {
		err := insert(tx, eq.key, eq.value)
		if err == nil {
			err = appendAudit(tx, auditPrefixOfKey(eq.key), eq.trail...)
		}
		if err != nil {
			return fmt.Errorf("qualified referral %d (key %q): %w", i, eq.key, err)
		}
	}
	return nil
}

// auditPrefixOfKey is auditKeyPrefix for the qualified record at key.
func auditPrefixOfKey(key string) string {
	return auditPrefix + strings.TrimPrefix(key, qualifiedPrefix) + ":"
}

// encodedLoader is a store that loads an EncodedSet as it is (the embedded
// store); any other store is given the set decoded.
type encodedLoader interface {
	SeedEncoded(ctx context.Context, e *EncodedSet) error
	ResetEncoded(ctx context.Context, e *EncodedSet) error
	ResetClientEncoded(ctx context.Context, clientID string, e *EncodedSet) error
}

// SeedFrom is st.Seed with e's records.
func SeedFrom(ctx context.Context, st Store, e *EncodedSet) error {
	if l, ok := st.(encodedLoader); ok {
		return l.SeedEncoded(ctx, e)
	}
	set, err := e.Set()
	if err != nil {
		return fmt.Errorf("seed store: %w", err)
	}
	return st.Seed(ctx, set)
}

// ResetFrom is st.Reset with e's records.
func ResetFrom(ctx context.Context, st Store, e *EncodedSet) error {
	if l, ok := st.(encodedLoader); ok {
		return l.ResetEncoded(ctx, e)
	}
	set, err := e.Set()
	if err != nil {
		return fmt.Errorf("reset store: %w", err)
	}
	return st.Reset(ctx, set)
}

// ResetClientFrom is st.ResetClient with e's records.
func ResetClientFrom(ctx context.Context, st Store, clientID string, e *EncodedSet) error {
	if l, ok := st.(encodedLoader); ok {
		return l.ResetClientEncoded(ctx, clientID, e)
	}
	set, err := e.ofClient(clientID).Set()
	if err != nil {
		return fmt.Errorf("reset client %q: %w", clientID, err)
	}
	return st.ResetClient(ctx, clientID, set)
}
