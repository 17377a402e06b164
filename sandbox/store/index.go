package store

import (
	"fmt"
	"strings"

	"github.com/tidwall/buntdb"
)

// Index names. Indexes are built in memory when the store opens and kept up
// to date by buntdb on every write; they are never written to the file.
const (
	referralsNewest = "referrals-newest"
	qualifiedNewest = "qualified-newest"
)

// A stored value is a sort line, a newline, then the record's JSON (for a
// referral, the compact form of compact.go):
//
//	<client>:<submittedAt>:<id>\n{"trialId":...}
//
// with client and id escaped. buntdb index comparators see only values, and
// reading three JSON fields in every comparison made opening or loading
// 100,000 records take seconds; comparing sort lines is a plain string
// comparison. The line needs no other parsing than the newline: escaped
// parts contain no ':' or newline, and submittedAt is canonical and of fixed
// width. All of a client's lines share the prefix "<client>:", and within it
// they order by submittedAt, then id.
func sortLine(clientID, submittedAt, id string) string {
	return clientSortPrefix(clientID) + submittedAt + ":" + escape(id)
}

// clientSortPrefix starts every sort line of the client; clientSortEnd sorts
// after all of them (';' follows ':') and before any other client's.
func clientSortPrefix(clientID string) string { return escape(clientID) + ":" }
func clientSortEnd(clientID string) string    { return escape(clientID) + ";" }

// splitValue separates a stored value into its sort line and JSON. A value
// without a newline is all sort line, which is how pivots look.
func splitValue(value string) (line, record string) {
	line, record, _ = strings.Cut(value, "\n")
	return line, record
}

func lessBySortLine(a, b string) bool {
	la, _ := splitValue(a)
	lb, _ := splitValue(b)
	return la < lb
}

// createIndexes builds the store's indexes over the records loaded so far.
func createIndexes(db *buntdb.DB) error {
	for name, prefix := range map[string]string{referralsNewest: referralPrefix, qualifiedNewest: qualifiedPrefix} {
		if err := db.CreateIndex(name, prefix+"*", lessBySortLine); err != nil {
			return fmt.Errorf("create index %s: %w", name, err)
		}
	}
	return nil
}
