package sandbox

import (
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/metrics"
)

// MetricsPath serves the Prometheus metrics, guarded as every admin read.
const MetricsPath = "/__sandbox/metrics"

// unmatchedOperation is the operation label of a request no route matched:
// the raw path never becomes a label.
const unmatchedOperation = "unmatched"

// metricsNote collects, while a request goes down the middleware chain,
// what the metrics need from its inner layers: the route that matched and
// what the journal's layer learned of the caller.
type metricsNote struct {
	operation string
	info      *requestInfo
	obs       *idp.Observation
}

// withMetrics counts every request, including those refused before they
// reach a route (admin guard, rate limit, forced answers), once its answer
// is written or a fault has ended it. Latency is real elapsed time, not the
// sandbox clock, which the admin API moves.
func (s *Server) withMetrics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		st, r := withState(r)
		note := &st.note
		st.metricsRec = statusRecorder{ResponseWriter: w}
		rec := &st.metricsRec
		defer func() { s.metrics.Observe(s.outcome(r, rec.status, note, time.Since(start))) }()
		next.ServeHTTP(rec, r)
	})
}

// withMetricsInfo sits inside withJournal and hands the request's identity
// and the provider's observation up to withMetrics.
func (s *Server) withMetricsInfo(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if st := stateFrom(r.Context()); st != nil {
			st.note.info, st.note.obs = &st.info, &st.obs
		}
		next.ServeHTTP(w, r)
	})
}

// noteRoute is router middleware: it runs only when a route matched, and
// records that route's template as the request's operation.
func noteRoute(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if st := stateFrom(r.Context()); st != nil {
			if tpl, err := mux.CurrentRoute(r).GetPathTemplate(); err == nil {
				st.note.operation = tpl
			}
		}
		next.ServeHTTP(w, r)
	})
}

// outcome gathers the labels of one answered request.
func (s *Server) outcome(r *http.Request, status int, note *metricsNote, elapsed time.Duration) metrics.Outcome {
	o := metrics.Outcome{Operation: note.operation, Method: r.Method, Status: status, Elapsed: elapsed}
	if o.Operation == "" {
		o.Operation = s.operationOf(r)
	}
	if info := note.info; info != nil {
		o.Endpoint, o.Client, o.Rule, o.Scenario = info.endpoint, info.claimed.ClientID, info.ruleID, info.scenario
		o.DelayedOnly = info.ruleID == DelayHeader
	}
	if obs := note.obs; obs != nil {
		if obs.ClientID != "" {
			o.Client = obs.ClientID
		}
		o.TokenIssued = o.Endpoint == "token" && obs.TokenID != "" && status == http.StatusOK
		o.TokenError = obs.TokenError
	}
	return o
}

// operationOf matches r against the routes for a request answered before
// routing (refused by the admin guard, the rate limit or a rule).
func (s *Server) operationOf(r *http.Request) string {
	var m mux.RouteMatch
	if s.router == nil || !s.router.Match(r, &m) || m.Route == nil {
		return unmatchedOperation
	}
	tpl, err := m.Route.GetPathTemplate()
	if err != nil {
		return unmatchedOperation
	}
	return tpl
}

// serveMetrics answers GET /__sandbox/metrics.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	s.metrics.Handler().ServeHTTP(w, r)
}

// MetricsHandler serves the metrics without the admin guard, for the
// separate listener of --metrics-addr, which an operator binds to an
// address only the scraper reaches.
func (s *Server) MetricsHandler() http.Handler { return s.metrics.Handler() }
