package sandbox

import (
	"context"
	"net/http"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
)

// requestState is what the middleware chain keeps about one request: its
// id, what the metrics and the journal learn of it, and the recorders of
// its status. It is one allocation and one context value per request,
// where a value per layer cost a context and a request copy each (see
// "What each fix saved" in the README).
type requestState struct {
	id         string
	idHeader   [1]string // the X-Request-Id header's value
	note       metricsNote
	info       requestInfo
	obs        idp.Observation
	metricsRec statusRecorder
	journalRec statusRecorder
	end        requestEnd
}

type requestStateKey struct{}

// stateFrom returns the request's state, or nil outside the chain.
func stateFrom(ctx context.Context) *requestState {
	st, _ := ctx.Value(requestStateKey{}).(*requestState)
	return st
}

// withState returns r's state, attaching a new one (and its observation,
// for the identity provider) when r has none yet.
func withState(r *http.Request) (*requestState, *http.Request) {
	if st := stateFrom(r.Context()); st != nil {
		return st, r
	}
	st := &requestState{}
	ctx := idp.WithObservation(context.WithValue(r.Context(), requestStateKey{}, st), &st.obs)
	return st, r.WithContext(ctx)
}
