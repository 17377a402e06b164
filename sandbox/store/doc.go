// Package store keeps the sandbox's referrals and qualified referrals in
// buntdb, in memory (":memory:", the default) or in an append-only file that
// survives restarts (--data FILE).
//
// Layout. Every record is exactly one buntdb key:
//
//	r:<outcomesId>:<client>        trial-based referral
//	q:<externalSourceId>:<client>  qualified referral
//
// whose value is a sort line and the record's JSON (see sortLine); a
// referral's JSON is stored without what the sort line holds (see
// compact.go), and rebuilt byte for byte when read. The two
// kinds live in separate key spaces, as the real service stores them apart.
// A qualified referral's audit trail is not in its record but in one key
// per entry, appended and never rewritten (see audit.go):
//
//	a:<externalSourceId>:<client>:<seq>
//
// Identifiers are escaped ('%', ':' and control characters become %XX) so
// that a ':' inside a client id or an external id cannot move the boundary
// between the parts of a key: client "a" with id "b:c" and client "a:b" with
// id "c" stay two records.
//
// The newest-first order of each client's records is the store's listing
// index over the sort lines (index.go), a B-tree beside buntdb's records,
// kept in step with every write. It lives in memory and is built in bulk
// from the records when the file is opened (index_build.go), so nothing derived is ever written: a write torn by a
// crash can lose whole records of an unacknowledged transaction, but it
// cannot leave a lookup entry pointing at nothing or a record missing from a
// listing.
//
// Files. A data file is locked (flock on FILE.lock) while a store has it
// open, so two processes never append to it at once. Reset builds the new
// content in FILE.reset and renames it over the data file (see resetFile),
// so a crash leaves the old content or the new, never a mix. A torn last
// command, which buntdb cuts at open, is logged; damage further back that
// buntdb would cut along with every later record refuses the open, the
// file untouched (checkDamage); a record that no longer decodes is left
// out of listings and logged (badKeys).
//
// Fixtures. The sandbox keeps the fixtures' records to seed and reset to
// as an EncodedSet: each record's key and value, encoded once. The
// in-memory store inserts those very strings, so the records it holds and
// the copy kept for Reset are one copy until a record changes.
//
// Listing seeks the index and reads one page: O(log n + limit) however many
// records are stored. Cursors are opaque to callers: base64url of the last
// returned record's sort line, which starts with the client's id, so a
// cursor is checked against the caller.
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package store
