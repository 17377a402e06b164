package failures

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// perRequestDecision reads the X-Sandbox-* headers. An unknown value is an
// error listing the allowed ones: a typo must never pass silently.
func (l *Layer) perRequestDecision(r *http.Request, req scenarios.Request) (scenarios.Decision, bool, error) {
	var d scenarios.Decision
	found := false
	if err := l.cfg.CheckRun(r); err != nil {
		return d, false, err
	}
	if name := r.Header.Get(ScenarioHeader); name != "" {
		sd, matched, err := l.cfg.Rules.DecideScenario(r.Context(), name, req)
		if err != nil {
			return d, false, fmt.Errorf("%s: %w", ScenarioHeader, err)
		}
		if matched {
			d, found = sd, true
		}
	}
	if v := r.Header.Get(ForceStatusHeader); v != "" {
		status, code, err := forcedValue(v, req.Endpoint)
		if err != nil {
			return d, false, err
		}
		d.Status, d.Error, d.Fault, d.RuleID, d.Scenario = status, code, "", ForceStatusHeader, ""
		if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
			d.RetryAfter = scenarios.DefaultRetryAfter
		}
		found = true
	}
	if v := r.Header.Get(DelayHeader); v != "" {
		delay, err := scenarios.ParseDelay(v)
		if err != nil {
			return d, false, fmt.Errorf("%s: %w", DelayHeader, err)
		}
		d.Delay += delay
		if d.RuleID == "" {
			d.RuleID = DelayHeader
		}
		found = true
	}
	return d, found, nil
}

// forcedValue parses X-Sandbox-Force-Status: a status the endpoint can give,
// or on the token endpoint one of its error codes.
func forcedValue(v string, endpoint scenarios.Endpoint) (status int, code string, err error) {
	allowedStatuses := scenarios.ForcibleStatuses(endpoint)
	allowedErrors := scenarios.ForcibleErrors(endpoint)
	if n, convErr := strconv.Atoi(v); convErr == nil {
		for _, a := range allowedStatuses {
			if a == n {
				return n, "", nil
			}
		}
	}
	for _, a := range allowedErrors {
		if a == v {
			return scenarios.ErrorStatus(a), a, nil
		}
	}
	allowed := make([]string, 0, len(allowedStatuses)+len(allowedErrors))
	for _, a := range allowedStatuses {
		allowed = append(allowed, strconv.Itoa(a))
	}
	allowed = append(allowed, allowedErrors...)
	return 0, "", fmt.Errorf("%s: %q cannot be forced on the %s endpoint; allowed: %s", ForceStatusHeader, v, endpoint, strings.Join(allowed, ", "))
}
