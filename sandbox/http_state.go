package sandbox

import (
	"context"
	"net/http"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/exchange"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
)

// requestState is what the layers keep of one request that is not theirs
// to return: its id, the identity provider's observation (which the token
// endpoint, an http.Handler of package idp, writes), and the recorders of
// its status. What the layers decide travels as values (package
// exchange). It is one allocation per request, and is itself the
// request's context, answering for itself, its id and its observation: a
// value per layer would cost a context and a request copy each, on every
// request.
type requestState struct {
	// Context is the request's context before the state was attached:
	// every other value, its deadline and its cancellation.
	context.Context
	id         string
	idHeader   [1]string // the X-Request-Id header's value
	obs        idp.Observation
	metricsRec statusRecorder
	journalRec statusRecorder
	end        requestEnd
}

type requestStateKey struct{}

// Value answers the state and its observation, and asks the parent
// context for any other key.
func (st *requestState) Value(key any) any {
	switch key {
	case requestStateKey{}:
		return st
	case idp.ObservationKey{}:
		return &st.obs
	case reply.RequestIDKey{}:
		return &st.id
	}
	return st.Context.Value(key)
}

// stateFrom returns the request's state, or nil outside the chain.
func stateFrom(ctx context.Context) *requestState {
	st, _ := ctx.Value(requestStateKey{}).(*requestState)
	return st
}

// layer is one step of a request's life before the journal's layer has
// decided who the caller is: it answers the request or hands it on, and
// returns what happened.
type layer func(w http.ResponseWriter, r *http.Request) exchange.Outcome

// withState returns r's state, attaching a new one (and its observation,
// for the identity provider) when r has none yet.
func withState(r *http.Request) (*requestState, *http.Request) {
	if st := stateFrom(r.Context()); st != nil {
		return st, r
	}
	st := &requestState{Context: r.Context()}
	return st, r.WithContext(st)
}
