package scenarios

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Rule limits.
const (
	maxRetryAfterSeconds = 3600
	maxReasonLen         = 200
	maxIDLen             = 64
)

// Rule is one failure to inject: which requests it matches, what it does to
// them and how often. Zero values mean "not set": an empty matcher matches
// everything, probability 0 means always, times 0 means unlimited.
type Rule struct {
	// ID names the rule; assigned by the Engine when empty.
	ID          string `json:"id,omitempty"`
	Description string `json:"description,omitempty"`
	// Scenario is the named scenario the rule came from. It is read-only:
	// set on activation and cleared when a rule is added directly.
	Scenario string `json:"scenario,omitempty"`

	// Matchers.
	Method   string   `json:"method,omitempty"`   // HTTP method, case-insensitive
	Path     string   `json:"path,omitempty"`     // exact path, or "*" for one whole segment
	ClientID string   `json:"clientId,omitempty"` // only this client's requests
	Endpoint Endpoint `json:"endpoint,omitempty"` // token, api, ping or any (default)

	// Effects. Status, Error and Fault are mutually exclusive.
	Status            int    `json:"status,omitempty"`
	Error             string `json:"error,omitempty"`             // token endpoint only
	RetryAfterSeconds int    `json:"retryAfterSeconds,omitempty"` // 429 and 503; default 1
	Reason            string `json:"reason,omitempty"`            // for the error description, e.g. "expired"
	Delay             *Delay `json:"delay,omitempty"`
	Fault             Fault  `json:"fault,omitempty"`

	// Counting.
	Times       int     `json:"times,omitempty"`       // fire on the next N matches, then retire
	After       int     `json:"after,omitempty"`       // let the first N matches through
	Probability float64 `json:"probability,omitempty"` // chance of firing; 0 means always
	Seed        uint64  `json:"seed,omitempty"`        // PRNG seed; unset is seed 0
	PerClient   bool    `json:"perClient,omitempty"`   // keep times/after per client id

	// Timeline makes the rule's effects change with time: phases in order,
	// each lasting its "for" on the rule's clock (the bound client's own
	// clock, else the sandbox clock) from when the rule was added or
	// activated. The effects then go in the phases, and the rule retires
	// after the last one. See timeline.go.
	Timeline []Phase `json:"timeline,omitempty"`
}

// FieldError is a Rule validation failure naming the JSON field at fault.
type FieldError struct {
	Field   string
	Message string
}

// Error formats the failure as "field: message".
func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// fieldErr builds a *FieldError with a formatted message.
func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Validate checks r and returns the first problem as a *FieldError naming the
// JSON field, e.g. `status: 418 cannot be forced on endpoint "api"; allowed:
// 401, 403, 429, 500, 503`.
func (r Rule) Validate() error {
	checks := []func() error{r.validateBounds, r.validateID, r.validateMatchers, r.validateEffects, r.validateCounting}
	if len(r.Timeline) > 0 {
		checks = []func() error{r.validateBounds, r.validateID, r.validateMatchers, r.validateTimeline}
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// validateID checks the id's shape: ids appear in URLs, so keep them plain.
func (r Rule) validateID() error {
	if r.ID == "" {
		return nil
	}
	if len(r.ID) > maxIDLen {
		return fieldErr("id", "longer than %d characters", maxIDLen)
	}
	for _, c := range r.ID {
		if !isIDChar(c) {
			return fieldErr("id", "%q may only contain letters, digits, '.', '_' and '-'", r.ID)
		}
	}
	return nil
}

// isIDChar reports whether c may appear in a rule id.
func isIDChar(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '.' || c == '_' || c == '-'
}

// validateMatchers checks method, path and endpoint.
func (r Rule) validateMatchers() error {
	for _, c := range r.Method {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return fieldErr("method", "%q is not an HTTP method", r.Method)
		}
	}
	if err := validatePath(r.Path); err != nil {
		return err
	}
	if !r.Endpoint.valid() {
		return fieldErr("endpoint", "%q is not one of token, api, ping, service, any", r.Endpoint)
	}
	return nil
}

// validateEffects checks status, error, retryAfterSeconds, reason, delay and
// fault, and that the rule does at least one thing.
func (r Rule) validateEffects() error {
	if r.Status == 0 && r.Error == "" && r.Delay == nil && r.Fault == FaultNone {
		return fieldErr("rule", "must set at least one of status, error, delay, fault or timeline")
	}
	endpoint := r.Endpoint
	if endpoint == "" {
		endpoint = EndpointAny
	}
	if r.Status != 0 && !canForce(endpoint, r.Status) {
		return fieldErr("status", "%d cannot be forced on endpoint %q; allowed: %s",
			r.Status, endpoint, joinInts(ForcibleStatuses(endpoint)))
	}
	if r.Error != "" {
		if endpoint != EndpointToken {
			return fieldErr("error", "only the token endpoint answers with OAuth errors; set endpoint to \"token\"")
		}
		if allowed := ForcibleErrors(endpoint); !slices.Contains(allowed, r.Error) {
			return fieldErr("error", "%q cannot be forced; allowed: %s", r.Error, strings.Join(allowed, ", "))
		}
		if r.Status != 0 {
			return fieldErr("error", "cannot be combined with status (the error decides the status)")
		}
	}
	if !r.Fault.valid() {
		return fieldErr("fault", "%q is not one of %s", r.Fault, faultNames)
	}
	if r.Fault != FaultNone && (r.Status != 0 || r.Error != "") {
		return fieldErr("fault", "cannot be combined with status or error (a fault replaces the answer)")
	}
	if r.RetryAfterSeconds != 0 {
		if r.Status != 429 && r.Status != 503 {
			return fieldErr("retryAfterSeconds", "only applies to status 429 or 503")
		}
		if r.RetryAfterSeconds < 0 || r.RetryAfterSeconds > maxRetryAfterSeconds {
			return fieldErr("retryAfterSeconds", "%d must be between 1 and %d", r.RetryAfterSeconds, maxRetryAfterSeconds)
		}
	}
	if r.Reason != "" {
		if r.Status == 0 && r.Error == "" {
			return fieldErr("reason", "only applies with status or error")
		}
		if len(r.Reason) > maxReasonLen {
			return fieldErr("reason", "longer than %d characters", maxReasonLen)
		}
		for _, c := range r.Reason {
			if c < ' ' || c == 0x7f {
				return fieldErr("reason", "must not contain control characters")
			}
		}
	}
	if r.Delay != nil {
		return r.Delay.validate()
	}
	return nil
}

// validateCounting checks times, after, probability and perClient.
func (r Rule) validateCounting() error {
	if r.Times < 0 {
		return fieldErr("times", "%d must not be negative", r.Times)
	}
	if r.After < 0 {
		return fieldErr("after", "%d must not be negative", r.After)
	}
	if r.Probability < 0 || r.Probability > 1 || math.IsNaN(r.Probability) {
		return fieldErr("probability", "%g must be between 0 and 1", r.Probability)
	}
	if r.PerClient && r.Times == 0 && r.After == 0 {
		return fieldErr("perClient", "needs times or after to count per client")
	}
	return nil
}

// joinInts formats ns as "1, 2, 3".
func joinInts(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ", ")
}
