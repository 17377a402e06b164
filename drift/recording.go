package drift

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Recorded is one exchange with the real service from a recording (serve
// --upstream journals them): the request as far as it was kept, and the
// answer, with patient data already replaced by placeholders.
type Recorded struct {
	Method, Path, Query string
	// Authorized is true when the request carried a bearer token; the
	// replay sends the sandbox's own.
	Authorized bool
	// RequestBody is the JSON body sent, placeholders in place of patient
	// data; nil when none was kept.
	RequestBody []byte
	Status      int
	Header      http.Header
	Body        []byte
}

// isToken is true for a token endpoint exchange.
func (r Recorded) isToken() bool { return strings.HasSuffix(r.Path, "/oauth2/v2.0/token") }

// probeName names a recorded exchange as a probe: method and path, and the
// status, so one path's several answers are several probes.
func (r Recorded) probeName() string {
	name := "recorded:" + r.Method + ":" + r.Path
	if r.Query != "" {
		name += "?" + r.Query
	}
	return name + ":" + strconv.Itoa(r.Status)
}

// RunRecording compares a recording of the real service's answers with
// what the sandbox answers the same requests: each distinct method, path,
// query and recorded status is sent once to cfg.Sandbox (with its own
// token where the recorded request had one) and compared in form as a
// live probe is. cfg.Upstream is not used: nothing goes to the real service.
func RunRecording(ctx context.Context, cfg Config, recorded []Recorded) (*Report, error) {
	cfg = cfg.withDefaults()
	client := &http.Client{Transport: cfg.Transport, Timeout: cfg.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	sb := &side{target: cfg.Sandbox, pacer: newPacer(cfg.Sandbox.Name, cfg.Sandbox.RootURL, client, cfg.MaxRPS, cfg.Wait)}
	r := &runner{cfg: cfg, sb: sb, report: &Report{
		Upstream: "recording", Sandbox: cfg.Sandbox.RootURL,
		Differences: []Difference{}, Allowed: []Difference{}, Probes: []ProbeResult{}, Skipped: []ProbeResult{},
	}}
	err := r.replay(ctx, recorded)
	r.report.Requests = []RequestSummary{sb.summary()}
	r.report.secrets = scrubber{cfg.Sandbox.Credentials.ClientSecret, sb.token}
	return r.report, err
}

func (r *runner) replay(ctx context.Context, recorded []Recorded) error {
	a, err := r.sb.pacer.do(ctx, formRequest(r.sb, tokenForm(r.sb.target.Credentials, nil)))
	if err != nil {
		return fmt.Errorf("sandbox token: %w", err)
	}
	if r.sb.token = accessToken(a); r.sb.token == "" {
		return fmt.Errorf("%w: the sandbox's token endpoint (%s) gave no access token", ErrRefused, r.sb.tokenURL())
	}
	seen := map[string]bool{}
	for _, rec := range recorded {
		name := rec.probeName()
		if seen[name] {
			continue
		}
		seen[name] = true
		up := answer{status: rec.Status, header: rec.Header, body: rec.Body}
		var sa answer
		switch {
		case rec.isToken() && rec.Status != http.StatusOK:
			r.report.Skipped = append(r.report.Skipped, ProbeResult{Name: name, Request: rec.Method + " " + rec.Path,
				Reason: "a recorded token error cannot be replayed: the journal keeps no token form (it holds the secret)"})
			continue
		case rec.isToken():
			sa = a // the sandbox's answer to its own token request
		default:
			if sa, err = r.sb.pacer.do(ctx, r.sb.replayRequest(rec)); err != nil {
				return fmt.Errorf("sandbox, %s: %w", name, err)
			}
		}
		result := ProbeResult{Name: name, Request: rec.Method + " " + rec.Path, UpstreamStatus: rec.Status, SandboxStatus: sa.status}
		// Recorded tokens are redacted, so token answers compare by shape.
		for _, d := range compareAnswers(probe{name: name}, up, sa) {
			if reason := r.cfg.Allow.reason(d); reason != "" {
				d.Allowed = reason
				r.report.Allowed = append(r.report.Allowed, d)
				continue
			}
			result.Differences++
			r.report.Differences = append(r.report.Differences, d)
		}
		r.report.Probes = append(r.report.Probes, result)
	}
	return nil
}

// replayRequest is a recorded request as the sandbox gets it.
func (s *side) replayRequest(rec Recorded) request {
	token := ""
	if rec.Authorized {
		token = s.token
	}
	path := rec.Path
	if rec.Query != "" {
		path += "?" + rec.Query
	}
	req := s.apiRequest(rec.Method, path, true, rec.RequestBody, token)
	if rec.RequestBody == nil {
		req.header.Del("Content-Type")
	}
	return req
}
