package sandbox

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// maxPageLimit is the largest ?limit= the API accepts (documented).
const maxPageLimit = 500

// pageFrom reads ?limit= and ?cursor=. A query that does not parse, a
// parameter given twice, an empty one or a limit that is not plain digits
// from 1 to maxPageLimit is a 400 naming the parameter.
func pageFrom(r *http.Request) (store.Page, error) {
	page := store.Page{Limit: store.DefaultLimit}
	q, err := strictQuery(r.URL.RawQuery)
	if err != nil {
		return page, err
	}
	if cursor, ok := q["cursor"]; ok {
		if cursor == "" {
			return page, badQuery("cursor", "is empty; leave it out for the first page")
		}
		page.Cursor = cursor
	}
	if raw, ok := q["limit"]; ok {
		n, err := strconv.Atoi(raw)
		if err != nil || !isDigits(raw) || n < 1 || n > maxPageLimit {
			return page, badQuery("limit", fmt.Sprintf("must be a whole number from 1 to %d, got %q", maxPageLimit, printable(raw)))
		}
		page.Limit = n
	}
	return page, nil
}

// isDigits reports whether s is only ASCII digits: strconv.Atoi also takes
// a sign ("+5"), which the document's integer does not.
func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// listError maps a store listing error to the problem a client sees.
func listError(err error) error {
	if errors.Is(err, store.ErrBadCursor) {
		return badQuery("cursor", "is not a cursor this listing returned; start again without one")
	}
	return err
}

func badQuery(field, message string) error {
	e := reply.NewRequestError(http.StatusBadRequest, "invalid query parameter "+field)
	e.Problem.Errors = []FieldError{{Field: field, Message: message}}
	return e
}

// nextCursor is the page's nextCursor: null on the last page.
func nextCursor(c string) *string {
	if c == "" {
		return nil
	}
	return &c
}
