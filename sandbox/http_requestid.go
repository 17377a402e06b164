package sandbox

import (
	"crypto/rand"
	"net/http"

	"github.com/google/uuid"

	"github.com/referrals-sandbox/referrals-sandbox/internal/lazyregexp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/exchange"
)

// RequestIDHeader carries the request id on every response; a client's own
// id is echoed so it can correlate its logs with the sandbox's journal.
const RequestIDHeader = "X-Request-Id"

// clientRequestID is what a client may send as its own request id: short and
// printable, so it can be echoed in headers and bodies safely.
var clientRequestID = lazyregexp.New(`^[A-Za-z0-9._:\-]{1,128}$`)

// withRequestID gives every request an id, echoing the client's when valid.
func withRequestID(next layer) layer {
	return func(w http.ResponseWriter, r *http.Request) exchange.Outcome {
		st, r := withState(r)
		id := r.Header.Get(RequestIDHeader)
		if id == "" || !clientRequestID().MatchString(id) {
			id = newRequestID()
		}
		st.id = id
		// The header's value slice lives in the request's state: Set
		// would allocate one per request.
		st.idHeader[0] = id
		w.Header()[RequestIDHeader] = st.idHeader[:]
		return next(w, r)
	}
}

// newRequestID returns a random (version 4) UUID. uuid.NewString reads
// its bytes through an io.Reader, which moves them to the heap on every
// request; crypto/rand.Read fills an array on the stack.
func newRequestID() string {
	var u uuid.UUID
	_, _ = rand.Read(u[:])  // never fails: on failure it crashes the program
	u[6] = u[6]&0x0f | 0x40 // version 4 (RFC 9562 5.4)
	u[8] = u[8]&0x3f | 0x80 // the RFC's variant
	return u.String()
}
