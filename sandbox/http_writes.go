package sandbox

import (
	"context"
	"net/http"
)

// writeContext is the context a handler gives a record store write: the
// request's values (its trace) without its cancellation or deadline. A
// client that hangs up must not cut off a write once begun: other replicas
// may see it already, an audit entry records a read that did happen, and
// a Redis write given up half way is neither done nor refused (it may have
// been applied). Reads take r.Context(), which ends them with the request.
func writeContext(r *http.Request) context.Context {
	return context.WithoutCancel(r.Context())
}
