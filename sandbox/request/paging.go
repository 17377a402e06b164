package request

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// MaxPageLimit is the largest ?limit= the API accepts (documented).
const MaxPageLimit = 500

// Page reads ?limit= and ?cursor=. A query that does not parse, a
// parameter given twice, an empty one or a limit that is not plain digits
// from 1 to MaxPageLimit is a 400 naming the parameter.
func Page(r *http.Request) (store.Page, error) {
	page := store.Page{Limit: store.DefaultLimit}
	q, err := StrictQuery(r.URL.RawQuery)
	if err != nil {
		return page, err
	}
	if cursor, ok := q["cursor"]; ok {
		if cursor == "" {
			return page, BadQuery("cursor", "is empty; leave it out for the first page")
		}
		page.Cursor = cursor
	}
	if raw, ok := q["limit"]; ok {
		n, err := strconv.Atoi(raw)
		if err != nil || !IsDigits(raw) || n < 1 || n > MaxPageLimit {
			return page, BadQuery("limit", fmt.Sprintf("must be a whole number from 1 to %d, got %q", MaxPageLimit, Printable(raw)))
		}
		page.Limit = n
	}
	return page, nil
}

// IsDigits reports whether s is only ASCII digits: strconv.Atoi also takes
// a sign ("+5"), which the document's integer does not.
func IsDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// ListError maps a store listing error to the problem a client sees.
func ListError(err error) error {
	if errors.Is(err, store.ErrBadCursor) {
		return BadQuery("cursor", "is not a cursor this listing returned; start again without one")
	}
	return err
}

// BadQuery is the 400 naming a query parameter at fault.
func BadQuery(field, message string) error {
	e := reply.NewRequestError(http.StatusBadRequest, "invalid query parameter "+field)
	e.Problem.Errors = []reply.FieldError{{Field: field, Message: message}}
	return e
}

// NextCursor is a listing's nextCursor member: null on the last page.
func NextCursor(c string) *string {
	if c == "" {
		return nil
	}
	return &c
}
