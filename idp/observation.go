package idp

import (
	"context"
	"time"
)

// Observation is what the identity provider learned about a request that the
// request journal records: the client and the token's uti. The journal puts
// an empty one in the request context; the provider fills it in.
type Observation struct {
	ClientID string
	TokenID  string
	// TokenExpiresAt is the expiry of the token issued or presented.
	TokenExpiresAt time.Time
	// TokenError is the error code of a refused token request
	// (invalid_client, ...), set by WriteTokenError; "" otherwise.
	TokenError string
}

// ObservationKey is the context key of a request's *Observation. A
// context type of the caller's own may answer it from its Value method
// instead of WithObservation adding a context (the sandbox's request state
// does: one allocation less per request).
type ObservationKey struct{}

// WithObservation returns a context carrying o.
func WithObservation(ctx context.Context, o *Observation) context.Context {
	return context.WithValue(ctx, ObservationKey{}, o)
}

// ObservationFrom returns the Observation in ctx, or nil.
func ObservationFrom(ctx context.Context) *Observation {
	o, _ := ctx.Value(ObservationKey{}).(*Observation)
	return o
}
