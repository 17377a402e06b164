package admin

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/gorilla/mux"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// The small readings of a request every admin handler shares. They say
// the same as the partner API's, which the root keeps for itself: the
// admin API borrows only what carries a rule (Reader), not these
// few lines.

// bearerToken returns the token of an "Authorization: Bearer" header.
func bearerToken(r *http.Request) string {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// pathVars returns the route's variables decoded: the root's router
// matches paths as encoded (mux's UseEncodedPath), so mux hands them out
// as they were encoded ("a%2Fb"), and the handlers want the id the client
// meant ("a/b").
func pathVars(r *http.Request) map[string]string {
	vars := mux.Vars(r)
	out := make(map[string]string, len(vars))
	for k, v := range vars {
		if d, err := url.PathUnescape(v); err == nil {
			v = d
		}
		out[k] = v
	}
	return out
}

// storeContext is the context a handler gives the record store: the
// request's values without its cancellation, so that a client that hangs
// up cannot cut off a write once begun (it may already be applied).
func storeContext(r *http.Request) context.Context {
	return context.WithoutCancel(r.Context())
}

// isDigits reports whether s is only ASCII digits: strconv.Atoi also takes
// a sign ("+5"), which no admin parameter does.
func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// badQuery is the 400 naming a query parameter at fault.
func badQuery(field, message string) error {
	e := reply.NewRequestError(http.StatusBadRequest, "invalid query parameter "+field)
	e.Problem.Errors = []reply.FieldError{{Field: field, Message: message}}
	return e
}

// listError maps a store listing error to the problem a caller sees.
func listError(err error) error {
	if errors.Is(err, store.ErrBadCursor) {
		return badQuery("cursor", "is not a cursor this listing returned; start again without one")
	}
	return err
}

// nextCursor is the page's nextCursor: null on the last page.
func nextCursor(c string) *string {
	if c == "" {
		return nil
	}
	return &c
}
