package scenarios

import (
	"math/rand/v2"
	"net/http"
	"time"
)

// DefaultRetryAfter is the Retry-After of a forced 429 or 503 whose rule
// gives no retryAfterSeconds.
const DefaultRetryAfter = time.Second

// Decision is what the engine decided for one request. The server waits
// Delay, then applies Fault if set, else answers with Status (rendered as
// problem+json, or as an Entra error body when Error is set), else answers
// normally.
type Decision struct {
	RuleID   string
	Scenario string
	// Status is the forced HTTP status, 0 for the normal answer. When Error
	// is set it carries that error's status from the interface document
	// (401 for invalid_client, 400 otherwise).
	Status     int
	Error      string        // forced token error code, if any
	Reason     string        // for the error description, e.g. "expired"
	RetryAfter time.Duration // for 429 and 503; 0 otherwise
	Delay      time.Duration // wait before answering or faulting
	Fault      Fault
}

// decide builds the Decision of a firing rule, drawing its delay from rng.
func (r Rule) decide(rng *rand.Rand) Decision {
	d := Decision{
		RuleID:   r.ID,
		Scenario: r.Scenario,
		Status:   r.Status,
		Error:    r.Error,
		Reason:   r.Reason,
		Fault:    r.Fault,
	}
	if r.Error != "" {
		d.Status = ErrorStatus(r.Error)
	}
	if d.Status == http.StatusTooManyRequests || d.Status == http.StatusServiceUnavailable {
		d.RetryAfter = DefaultRetryAfter
		if r.RetryAfterSeconds > 0 {
			d.RetryAfter = time.Duration(r.RetryAfterSeconds) * time.Second
		}
	}
	if r.Delay != nil {
		d.Delay = r.Delay.sample(rng)
	}
	return d
}
