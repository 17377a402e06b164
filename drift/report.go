package drift

import "strings"

// Difference is one way the sandbox's answer to a probe differs in form
// from the upstream's.
type Difference struct {
	// Key is Probe and Aspect joined by "/": what an allow file names.
	Key string `json:"key"`
	// Probe names the request, e.g. trials-list or ping.no-token.
	Probe string `json:"probe"`
	// Aspect names what differs: status, header:Content-Type,
	// body:$.trials[].name, token:expires_in, jwt-header:kid, claim:roles.
	Aspect string `json:"aspect"`
	// Upstream and Sandbox are the two forms, e.g. "date-time (T, Z, 7
	// fraction digits)" or "absent".
	Upstream string `json:"upstream"`
	Sandbox  string `json:"sandbox"`
	// Detail says in words what differs.
	Detail string `json:"detail"`
	// Allowed is the allow file's reason, set only on allowed differences.
	Allowed string `json:"allowedBecause,omitempty"`
}

func newDifference(probe, aspect, upstream, sandbox, detail string) Difference {
	return Difference{Key: probe + "/" + aspect, Probe: probe, Aspect: aspect, Upstream: upstream, Sandbox: sandbox, Detail: detail}
}

// ProbeResult is what became of one probe.
type ProbeResult struct {
	Name string `json:"name"`
	// Request is the method and path sent, e.g. GET /api/v1/referrals/trials.
	Request string `json:"request"`
	// UpstreamStatus and SandboxStatus are the statuses answered (0 when
	// skipped).
	UpstreamStatus int `json:"upstreamStatus,omitempty"`
	SandboxStatus  int `json:"sandboxStatus,omitempty"`
	// Differences counts the differences not allowed.
	Differences int `json:"differences"`
	// Reason says why a probe was skipped.
	Reason string `json:"reason,omitempty"`
}

// RequestSummary counts the requests sent to one side.
type RequestSummary struct {
	Target string `json:"target"`
	URL    string `json:"url"`
	Sent   int    `json:"sent"`
	// ByStatus counts answers by status code ("transport error" for none).
	ByStatus map[string]int `json:"byStatus"`
	// Retried counts requests sent again after a 429.
	Retried int `json:"retried"`
	// WaitedSeconds is the time spent waiting for Retry-After and 429s.
	WaitedSeconds float64 `json:"waitedSeconds"`
	// Tokens counts the access tokens obtained (one reused for every
	// probe, plus one per kind of token a probe needs).
	Tokens int `json:"tokens"`
}

// Report is the outcome of a drift run.
type Report struct {
	Upstream string `json:"upstream"`
	Sandbox  string `json:"sandbox"`
	// Differences are those the allow list does not cover: any makes the
	// run fail.
	Differences []Difference `json:"differences"`
	// Allowed are differences the allow list covers, with its reasons.
	Allowed []Difference `json:"allowed"`
	// Probes ran; Skipped did not, each with its reason.
	Probes   []ProbeResult    `json:"probes"`
	Skipped  []ProbeResult    `json:"skipped"`
	Requests []RequestSummary `json:"requests"`

	// secrets are the client secrets and tokens of the run, scrubbed
	// from every output.
	secrets scrubber
}

// Failed is true when a difference is not allowed.
func (r *Report) Failed() bool { return len(r.Differences) > 0 }

// differencesOf returns the differences (allowed or not) of one probe.
func (r *Report) differencesOf(probe string) (diffs, allowed []Difference) {
	for _, d := range r.Differences {
		if d.Probe == probe {
			diffs = append(diffs, d)
		}
	}
	for _, d := range r.Allowed {
		if d.Probe == probe {
			allowed = append(allowed, d)
		}
	}
	return diffs, allowed
}

// scrubber removes secrets and tokens from anything written out, as a last
// line of defence: no probe copies a value, but an upstream could echo one
// in a place drift does print (an error code, a header form).
type scrubber []string

func (s scrubber) scrub(text string) string {
	for _, secret := range s {
		if len(secret) >= 4 {
			text = strings.ReplaceAll(text, secret, "[redacted]")
		}
	}
	return text
}
