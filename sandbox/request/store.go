package request

import (
	"context"
	"net/http"
)

// StoreContext is the context a handler gives the record store: the
// request's values (its trace) without its cancellation. A client that
// hangs up must not cut off a write once begun: other replicas may see it
// already, an audit entry records a read that did happen, and a Redis
// write given up half way is neither done nor refused (it may have been
// applied). Nor a read: one cut short would fail as if Redis had, logged
// and journaled as the shared state's failure when the client merely left.
// Each call stays bounded by --redis-timeout.
func StoreContext(r *http.Request) context.Context {
	return context.WithoutCancel(r.Context())
}
