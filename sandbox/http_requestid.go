package sandbox

import (
	"net/http"
	"regexp"

	"github.com/google/uuid"
)

// RequestIDHeader carries the request id on every response; a client's own
// id is echoed so it can correlate its logs with the sandbox's journal.
const RequestIDHeader = "X-Request-Id"

// clientRequestID is what a client may send as its own request id: short and
// printable, so it can be echoed in headers and bodies safely.
var clientRequestID = regexp.MustCompile(`^[A-Za-z0-9._:\-]{1,128}$`)

// withRequestID gives every request an id, echoing the client's when valid.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(RequestIDHeader)
		if id == "" || !clientRequestID.MatchString(id) {
			id = uuid.NewString()
		}
		w.Header().Set(RequestIDHeader, id)
		st, r := withState(r)
		st.id = id
		next.ServeHTTP(w, r)
	})
}

// requestID returns the id withRequestID assigned to r.
func requestID(r *http.Request) string {
	if st := stateFrom(r.Context()); st != nil {
		return st.id
	}
	return ""
}
