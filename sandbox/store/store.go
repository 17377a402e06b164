package store

import (
	"context"
	"errors"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// Store is the storage the API and the QA console use. Every method is safe
// for concurrent use. Records are partitioned by client id: a record of one
// client is invisible to every other client's calls (ErrNotFound), except to
// the admin lookup FindReferral.
//
// Every method but Close takes the caller's context, as the sandbox's other
// storage seams do, so a request's cancellation and deadline reach a store
// that waits on the network (Redis): when the context ends first, the call
// fails with an error wrapping ErrUnavailable, and a write may have been
// applied or not. A caller whose write must complete once begun (an audit
// append, a write other replicas see) passes a context the request's end
// does not cancel (context.WithoutCancel). Close takes none: it releases
// the store whatever the caller's state.
type Store interface {
	// CreateReferral stores a new trial-based referral. It returns ErrConflict
	// when the client already has a referral with that outcomesId, and
	// ErrInvalid when clientId or outcomesId is empty or submittedAt is not an
	// RFC 3339 timestamp. submittedAt is stored in canonical form (see
	// CanonicalTimestamp).
	CreateReferral(ctx context.Context, r referrals.Referral) error
	// GetReferral returns the client's referral with that outcomesId, or
	// ErrNotFound.
	GetReferral(ctx context.Context, clientID, outcomesID string) (referrals.Referral, error)
	// ListReferrals returns one page of the client's referrals, newest
	// submittedAt first, records with equal submittedAt in a fixed order by
	// outcomesId, and the cursor of the next page ("" on the last page). The
	// slice is empty, not nil, when there is nothing to list. A cursor that
	// did not come from this client's referral listing gives ErrBadCursor.
	// Paging neither repeats nor skips a record, even if records are created
	// between pages (those are newer than the cursor and not listed).
	ListReferrals(ctx context.Context, clientID string, page Page) ([]referrals.Referral, string, error)
	// FindReferral is the admin lookup: the referral with that outcomesId,
	// whichever client owns it. Should several clients hold the same
	// outcomesId, it returns one of them, always the same one.
	FindReferral(ctx context.Context, outcomesID string) (referrals.Referral, error)
	// UpdateReferral runs fn on the client's referral and stores the result,
	// all in one transaction. An error from fn aborts the update and is
	// returned unchanged. fn must not change clientId or outcomesId
	// (ErrInvalid). fn may run more than once (the Redis store runs it again
	// when another replica changed the record meanwhile); only its last run
	// is stored, so fn must have no other effect.
	UpdateReferral(ctx context.Context, clientID, outcomesID string, fn func(*referrals.Referral) error) (referrals.Referral, error)

	// CreateQualified stores a new qualified referral; ErrConflict when the
	// client already has one with that externalSourceId.
	CreateQualified(ctx context.Context, q referrals.QualifiedReferral) error
	// GetQualified returns the client's qualified referral. Its AuditTrail
	// holds the newest TrailInRecord entries, oldest first, and
	// AuditTrailTotal counts them all. When view is not nil it is appended
	// to the audit trail in the same transaction, and the returned record
	// includes it. Appending costs the same whatever the trail's length:
	// the record is not rewritten.
	GetQualified(ctx context.Context, clientID, externalSourceID string, view *referrals.AuditEntry) (referrals.QualifiedReferral, error)
	// ListQualified pages through the client's qualified referrals like
	// ListReferrals, each with its trail as GetQualified returns it. When
	// view is not nil it is appended to every returned record, and only to
	// those, in the same transaction.
	ListQualified(ctx context.Context, clientID string, page Page, view *referrals.AuditEntry) ([]referrals.QualifiedReferral, string, error)
	// QualifiedAuditTrail returns one page of the whole audit trail of the
	// client's qualified referral, oldest first, and the cursor of the next
	// page ("" on the last). Page limits are those of listings; a cursor
	// that did not come from this record's trail gives ErrBadCursor, an
	// unknown record ErrNotFound. Reading the trail records nothing.
	QualifiedAuditTrail(ctx context.Context, clientID, externalSourceID string, page Page) ([]referrals.AuditEntry, string, error)
	// UpdateQualified is UpdateReferral for qualified referrals; fn must not
	// change clientId or externalSourceId. fn sees the record as
	// GetQualified returns it and may append to AuditTrail; changing the
	// entries it was given is ErrInvalid.
	UpdateQualified(ctx context.Context, clientID, externalSourceID string, fn func(*referrals.QualifiedReferral) error) (referrals.QualifiedReferral, error)

	// Clients returns, sorted, the client ids that own at least one record
	// of either kind.
	Clients(ctx context.Context) ([]string, error)
	// Empty reports whether the store holds nothing: no record and no
	// runtime client. Only an empty store is seeded with the fixtures.
	Empty(ctx context.Context) (bool, error)
	// Load inserts every referral and qualified referral of set in one
	// transaction: on any conflict or invalid record nothing is inserted. A
	// nil set inserts nothing.
	Load(ctx context.Context, set *fixtures.Set) error
	// Seed loads set into a store that Empty found empty, the way start-up
	// needs: a crash while seeding leaves the store empty, so the next
	// start seeds again (never a partial seed that is never completed), and
	// several replicas seeding one shared store at once leave one copy.
	Seed(ctx context.Context, set *fixtures.Set) error
	// Reset deletes every record and loads set, atomically: if set cannot be
	// loaded the old records stay, and a file store that crashes during a
	// Reset holds either the old records or the new ones. Reset(nil)
	// empties the store.
	Reset(ctx context.Context, set *fixtures.Set) error
	// ResetClient replaces the client's records of both kinds with its
	// records in set (none for a nil set), atomically, leaving every other
	// client's records as they are.
	ResetClient(ctx context.Context, clientID string, set *fixtures.Set) error

	// PutClient stores or replaces a client created at run time, so it
	// survives a restart on a file.
	PutClient(ctx context.Context, c referrals.Client) error
	// DeleteClient removes a runtime client; a missing one is not an error.
	DeleteClient(ctx context.Context, clientID string) error
	// RuntimeClients returns every stored runtime client. Reset removes
	// them with the records.
	RuntimeClients(ctx context.Context) ([]referrals.Client, error)

	// Close releases the store; for a file it syncs the file first.
	Close() error
}

// Page selects one page of a listing.
type Page struct {
	// Limit is the page size: 0 means DefaultLimit, values above MaxLimit
	// are lowered to MaxLimit, negative values give ErrInvalid.
	Limit int
	// Cursor is "" for the first page, else the cursor the previous page
	// returned.
	Cursor string
}

// Page size bounds. They keep one listing call bounded in time and memory
// whatever a caller asks for.
const (
	DefaultLimit = 50
	MaxLimit     = 1000
)

// Errors of the store. Callers test them with errors.Is; the store wraps
// them with context.
var (
	// ErrNotFound: no such record for this client.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the client already has a record with that identifier.
	ErrConflict = errors.New("already exists")
	// ErrBadCursor: the cursor is malformed or belongs to another listing.
	ErrBadCursor = errors.New("invalid cursor")
	// ErrInvalid: a record or argument the store cannot keep or use.
	ErrInvalid = errors.New("invalid")
	// ErrLocked: another process has the data file open.
	ErrLocked = errors.New("in use by another process")
	// ErrCorrupt: a stored record no longer decodes. Listings skip such
	// records (and log their keys); reading one directly gives ErrCorrupt.
	ErrCorrupt = errors.New("stored record does not decode")
	// ErrDamaged: the data file is damaged so that opening it would cut
	// off or overwrite acknowledged records; Open refuses it and leaves
	// the file as it was.
	ErrDamaged = errors.New("data file damaged")
	// ErrUnavailable: the store's server (Redis, in shared mode) did not
	// answer; the same call may succeed later. When the call may yet have
	// been applied (its answer timed out, or its replicas did not confirm
	// it in time: --redis-wait), the error also wraps
	// rediscall.ErrUnconfirmed, as the sandbox's other Redis-backed stores
	// do.
	ErrUnavailable = errors.New("store unavailable")
)
