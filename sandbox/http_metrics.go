package sandbox

import (
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/exchange"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/metrics"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// MetricsPath serves the Prometheus metrics, guarded as every admin read.
const MetricsPath = "/__sandbox/metrics"

// unmatchedOperation is the operation label of a request no route matched:
// the raw path never becomes a label.
const unmatchedOperation = "unmatched"

// withMetrics counts every request, including those refused before they
// reach a route (admin guard, rate limit, forced answers), once its answer
// is written or a fault has ended it. Latency is real elapsed time, not the
// sandbox clock, which the admin API moves.
func (s *Server) withMetrics(next layer) layer {
	return func(w http.ResponseWriter, r *http.Request) exchange.Outcome {
		start := time.Now()
		st, r := withState(r)
		st.metricsRec = statusRecorder{ResponseWriter: w}
		rec := &st.metricsRec
		out := next(rec, r)
		s.metrics.Observe(s.outcome(r, rec.status, out, &st.obs, time.Since(start)))
		return out
	}
}

// outcome gathers the labels of one answered request from what its layers
// reported and what the identity provider observed.
func (s *Server) outcome(r *http.Request, status int, out exchange.Outcome, obs *idp.Observation, elapsed time.Duration) metrics.Outcome {
	o := metrics.Outcome{
		Operation: out.Operation, Method: r.Method, Status: status, Elapsed: elapsed,
		Endpoint: string(out.Caller.Endpoint), Client: out.Caller.ClientID(), Rule: out.Ruling.RuleID, Scenario: out.Ruling.Scenario,
		DelayedOnly: out.Ruling.RuleID == DelayHeader,
	}
	if o.Operation == "" {
		o.Operation = s.operationOf(r)
	}
	if out.Verified.ClientID != "" {
		o.Client = out.Verified.ClientID
	}
	if obs.ClientID != "" {
		o.Client = obs.ClientID
	}
	o.TokenIssued = o.Endpoint == string(scenarios.EndpointToken) && obs.TokenID != "" && status == http.StatusOK
	o.TokenError = obs.TokenError
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
