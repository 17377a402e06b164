package store

import (
	"fmt"
	"strings"
)

// listing describes one paged listing: the cursor kind and the records'
// key space, which names their listing index.
type listing struct {
	kind      string // cursor kind, one per key space
	keyPrefix string
}

func referralListing() listing  { return listing{kind: "r", keyPrefix: referralPrefix} }
func qualifiedListing() listing { return listing{kind: "q", keyPrefix: qualifiedPrefix} }

// item is a stored record as the index walk returns it.
type item struct{ key, value string }

// pageLimit applies the Page.Limit rules.
func pageLimit(limit int) (int, error) {
	switch {
	case limit < 0:
		return 0, fmt.Errorf("%w: page limit %d is negative", ErrInvalid, limit)
	case limit == 0:
		return DefaultLimit, nil
	case limit > MaxLimit:
		return MaxLimit, nil
	}
	return limit, nil
}

// walkPage reads one page of the client's records, newest first. It seeks
// the index to the cursor's position and reads at most limit+1 records (the
// extra one only tells whether a next page exists), so its cost does not
// grow with the number of stored records.
func walkPage(tx *storeTx, l listing, clientID string, page Page) ([]item, string, error) {
	limit, err := pageLimit(page.Limit)
	if err != nil {
		return nil, "", err
	}
	prefix := clientSortPrefix(clientID)
	// Without a cursor, start after the client's last line; with one, at the
	// line of the record it names, which was on the previous page.
	from, after := clientSortEnd(clientID), ""
	if page.Cursor != "" {
		if from, err = decodeCursor(page.Cursor, l.kind, clientID); err != nil {
			return nil, "", err
		}
		after = from
	}
	items := make([]item, 0, limit+1)
	tx.descendIndex(l.keyPrefix, from, func(key, value string) bool {
		line, _ := splitValue(value)
		if !strings.HasPrefix(line, prefix) {
			return false // walked past the client's oldest record
		}
		if line == after {
			return true
		}
		items = append(items, item{key, value})
		return len(items) <= limit
	})
	if len(items) <= limit {
		return items, "", nil
	}
	items = items[:limit]
	line, _ := splitValue(items[limit-1].value)
	next, err := encodeCursor(l.kind, line)
	if err != nil {
		return nil, "", err
	}
	return items, next, nil
}

// listRecords reads one page of the client's records in l and hands each
// to add, in order. A record add finds damaged (ErrCorrupt) is left out and
// logged once; any other error of add ends the listing. ListReferrals and
// ListReferralsJSON differ only in add: decoding a record, or appending its
// JSON.
func (s *BuntStore) listRecords(what string, l listing, clientID string, page Page, add func(it item) error) (string, error) {
	var items []item
	var next string
	err := s.viewTx(func(tx *storeTx) error {
		var err error
		items, next, err = walkPage(tx, l, clientID, page)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("list %s of client %q: %w", what, clientID, err)
	}
	for _, it := range items {
		err := add(it)
		if s.bad.skip(it.key, err) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("list %s of client %q: %w", what, clientID, err)
		}
	}
	return next, nil
}
