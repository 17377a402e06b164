package metrics

import (
	"net/http"
	"time"
)

// Outcome is what one answered request adds to the series.
type Outcome struct {
	// Operation is the route's template, never the raw path, so that a
	// caller cannot make a series per path.
	Operation, Method string
	// Status is the answer's status; 0 when a fault closed the connection.
	Status int
	// Endpoint is the request's group: "token", "api", "ping" or another.
	Endpoint string
	// Client is the verified client's id, "" for none.
	Client string
	// Rule and Scenario name the failure rule that acted on the request
	// and its named scenario, "" for none.
	Rule, Scenario string
	// TokenIssued says the token endpoint issued an access token.
	TokenIssued bool
	// TokenError is the token endpoint's error code when it refused.
	TokenError string
	// Elapsed is the real time from arrival to the end of the answer.
	Elapsed time.Duration
	// DelayedOnly says Rule only delayed the answer (the X-Sandbox-Delay
	// header): a 429 after a delay is still the rate limiter's, while a
	// forced 429 names its rule.
	DelayedOnly bool
}

// Observe counts one answered request.
func (m *Metrics) Observe(o Outcome) {
	client := m.clients.value(o.Client)
	status := statusLabel(o.Status)
	m.requests.WithLabelValues(o.Operation, metricMethod(o.Method), status, client).Inc()
	m.duration.WithLabelValues(o.Operation).Observe(o.Elapsed.Seconds())
	if o.Rule != "" {
		m.forced.WithLabelValues(m.rules.value(o.Rule), o.Scenario).Inc()
	}
	switch {
	case o.TokenIssued:
		m.tokens.WithLabelValues(client).Inc()
	case o.Endpoint == "token" && o.Status >= 400:
		code := o.TokenError
		if code == "" {
			code = otherLabel
		}
		m.tokenErrors.WithLabelValues(code).Inc()
	case (o.Endpoint == "api" || o.Endpoint == "ping") && (o.Rule == "" || o.DelayedOnly) && o.Status == http.StatusTooManyRequests:
		// A forced 429 names its rule; a delay alone leaves the limiter's.
		m.rateLimited.WithLabelValues(client).Inc()
	}
}
