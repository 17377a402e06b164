package sandbox

import (
	"context"
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

type requestIDKey struct{}

// withRequestID gives every request an id, echoing the client's when valid.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(RequestIDHeader)
		if !clientRequestID.MatchString(id) {
			id = uuid.NewString()
		}
		w.Header().Set(RequestIDHeader, id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id)))
	})
}

// requestID returns the id withRequestID assigned to r.
func requestID(r *http.Request) string {
	id, _ := r.Context().Value(requestIDKey{}).(string)
	return id
}
