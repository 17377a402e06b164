package sandbox

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// maxPageLimit is the largest ?limit= the API accepts (documented).
const maxPageLimit = 500

// pageFrom reads ?limit= and ?cursor=. A bad limit is a 400 naming the field.
func pageFrom(r *http.Request) (store.Page, error) {
	q := r.URL.Query()
	page := store.Page{Limit: store.DefaultLimit, Cursor: q.Get("cursor")}
	if raw := q.Get("limit"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > maxPageLimit {
			return page, badQuery("limit", fmt.Sprintf("must be a whole number from 1 to %d, got %q", maxPageLimit, raw))
		}
		page.Limit = n
	}
	return page, nil
}

// listError maps a store listing error to the problem a client sees.
func listError(err error) error {
	if errors.Is(err, store.ErrBadCursor) {
		return badQuery("cursor", "is not a cursor this listing returned; start again without one")
	}
	return err
}

func badQuery(field, message string) error {
	e := newRequestError(http.StatusBadRequest, "invalid query parameter "+field)
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
