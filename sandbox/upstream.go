package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/placeholder"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redact"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/contractdoc"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/exchange"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// UpstreamConfig makes the sandbox a recording proxy (serve --upstream):
// partner calls to the token endpoint, the API and ping go to the real
// service, and its answers come back, journaled with patient data
// replaced and checked against the OpenAPI document. Failure rules still
// apply first, so a rule can answer 503 in front of the real service.
type UpstreamConfig struct {
	// RootURL is the real service's {root_url}; the API is RootURL/api/v1.
	RootURL string
	// AuthURL is its {auth_url}; token requests go to AuthURL/oauth2/v2.0/token.
	AuthURL string
	// Transport sends the forwarded requests (default http.DefaultTransport).
	Transport http.RoundTripper
	// Keep names the JSON members and headers whose values the journal
	// keeps as the real service sent them (serve --upstream-keep); every
	// other value is replaced by a placeholder of its form.
	Keep []string
}

const (
	// upstreamTimeout bounds one forwarded request.
	upstreamTimeout = 30 * time.Second
	// maxForwardedBytes bounds a forwarded request or answer body.
	maxForwardedBytes = 4 << 20
)

// hopHeaders are not forwarded either way (RFC 9110 7.6.1).
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// upstreamProxy forwards partner calls to the real service.
type upstreamProxy struct {
	root, auth   string
	client       *http.Client
	validator    *documentValidator
	placeholders *placeholder.Maker
	bodies       *bodyBudget
}

func newUpstreamProxy(cfg *UpstreamConfig, contract *contractdoc.Contract) (*upstreamProxy, error) {
	if cfg == nil {
		return nil, nil
	}
	for _, u := range []string{cfg.RootURL, cfg.AuthURL} {
		parsed, err := url.Parse(u)
		if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
			return nil, fmt.Errorf("sandbox: upstream %q is not an absolute http or https URL", u)
		}
	}
	validator, err := newDocumentValidator()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	placeholders, err := newPlaceholders(contract, cfg.Keep)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	transport := cfg.Transport
	if transport == nil {
		transport = http.DefaultTransport
	}
	return &upstreamProxy{
		root: strings.TrimRight(cfg.RootURL, "/"), auth: strings.TrimRight(cfg.AuthURL, "/"),
		client: &http.Client{Transport: transport, Timeout: upstreamTimeout,
			// The partner sees the real service's redirect, not where it leads.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		validator: validator, placeholders: placeholders,
		bodies: newBodyBudget(maxBodiesInFlight),
	}, nil
}

// target is where a partner call goes on the real service; "" for a
// request the sandbox answers itself (its admin API, discovery, keys).
func (p *upstreamProxy) target(r *http.Request, endpoint string) string {
	switch endpoint {
	case "token":
		return p.auth + "/oauth2/v2.0/token"
	case "api", "ping":
		u := p.root + r.URL.EscapedPath()
		if r.URL.RawQuery != "" {
			u += "?" + r.URL.RawQuery
		}
		return u
	}
	return ""
}

// withUpstream forwards partner calls when the sandbox is a recording
// proxy. It sits after the failure rules and before the sandbox's own rate
// limit: the real service limits for itself.
func (s *Server) withUpstream(next exchange.HandlerFunc) exchange.HandlerFunc {
	if s.upstream == nil {
		return next
	}
	return func(w http.ResponseWriter, r *http.Request, c exchange.Caller) exchange.Outcome {
		target := s.upstream.target(r, string(c.Endpoint))
		if target == "" {
			return next(w, r, c)
		}
		return s.forward(w, r, c, target, next)
	}
}

// forward sends r to target and answers with the real service's answer; a
// token form the sandbox could not parse is answered by next (the
// sandbox's own token endpoint, with Entra's error body), since the bytes
// to forward are gone. It reports the real service's answer, as the
// journal keeps it, in the outcome's Upstream.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, c exchange.Caller, target string, next exchange.HandlerFunc) exchange.Outcome {
	p := s.upstream
	rec := &journal.Upstream{URL: p.placeholderURL(s.redactURL(target))}
	reported := exchange.Outcome{Upstream: rec}
	held, ok := p.bodies.reserveRequest(r.ContentLength)
	if !ok {
		rec.Error = "refused: the recording proxy holds as many body bytes as it may"
		s.refuseHold(w, r, c, fmt.Sprintf("the recording proxy already holds %d MiB of bodies in flight, its limit; retry after %d second(s)", maxBodiesInFlight>>20, heldRetryAfter))
		return reported
	}
	defer held.release()
	reqBody, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxForwardedBytes))
	held.shrinkTo(int64(len(reqBody)))
	if r.PostForm != nil {
		// The journal's identification parsed the token form already,
		// which consumed the body: send the form it read.
		reqBody, err = []byte(r.PostForm.Encode()), nil
	}
	switch {
	case err != nil && c.Endpoint == scenarios.EndpointToken:
		rec.Error = "the token form could not be read; the sandbox answered it itself"
		answered := next(w, r, c)
		answered.Upstream = rec
		return answered
	case err != nil:
		s.reply.Problem(w, r, reply.New(http.StatusRequestEntityTooLarge, fmt.Sprintf("the body could not be read in full (at most %d bytes are forwarded)", maxForwardedBytes)))
		return reported
	}
	credential := s.upstreamCredential(r)
	rec.RequestBody, _ = p.placeholderJSON(reqBody, credential)
	out, err := http.NewRequestWithContext(r.Context(), r.Method, target, bytes.NewReader(reqBody))
	if err != nil {
		rec.Error = "could not build the request"
		s.reply.Problem(w, r, reply.New(http.StatusBadGateway, "the recording proxy could not build the request to the real service"))
		return reported
	}
	out.Header = forwardedHeaders(r.Header)
	resp, err := p.client.Do(out)
	if err != nil {
		// The error names the URL, which carries no credential but may
		// carry one in its query: say only what kind of failure it was.
		rec.Error = upstreamFailure(err)
		s.log.Warn("the real service did not answer", "method", r.Method, "url", rec.URL, "err", rec.Error)
		s.reply.Problem(w, r, reply.New(http.StatusBadGateway, "the real service did not answer: "+rec.Error))
		return reported
	}
	defer resp.Body.Close()
	held.release() // the request is sent: its room goes before the answer asks
	if err := held.reserveAnswer(r.Context(), resp.ContentLength); err != nil {
		rec.Status, rec.Error = resp.StatusCode, "the caller left while the answer waited for room"
		return reported
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxForwardedBytes+1))
	if err != nil || len(body) > maxForwardedBytes {
		rec.Status, rec.Error = resp.StatusCode, "the answer's body could not be read in full"
		s.reply.Problem(w, r, reply.New(http.StatusBadGateway, fmt.Sprintf("the real service's answer could not be read in full (at most %d bytes)", maxForwardedBytes)))
		return reported
	}
	s.record(r, rec, resp, body, credential)
	for name, values := range resp.Header {
		if !isHopHeader(name) {
			w.Header()[name] = values
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
	return reported
}

// record fills the journal's view of the answer and logs, in one line, how
// it diverges from the document.
func (s *Server) record(r *http.Request, rec *journal.Upstream, resp *http.Response, body []byte, credential func(string) bool) {
	p := s.upstream
	rec.Status, rec.Headers, rec.BodyBytes = resp.StatusCode, p.placeholderHeaders(s.redactor, resp.Header, credential), len(body)
	if len(body) > 0 {
		rec.Body, rec.BodyOmitted = p.placeholderJSON(body, credential)
	}
	shown := p.placeholders.Path(s.redactor.Path(r.URL.Path))
	rec.Divergences = p.validator.divergences(r.Context(), r, shown, resp.StatusCode, resp.Header, body)
	p.placeholderDivergences(rec.Divergences, credential)
	if len(rec.Divergences) > 0 {
		// One line per answer, however many divergences: the list is
		// capped at journal.MaxDivergences and a line saying how many more.
		s.log.Warn("the real service diverges from the OpenAPI document", "method", r.Method, "path", shown, "divergences", rec.Divergences)
	}
}

// isCredential reports whether a value from a forwarded body is a
// credential (an access token, a known secret).
func (s *Server) isCredential(v string) bool { return s.redactor.Value(v) != v }

func (s *Server) redactURL(target string) string {
	u, err := url.Parse(target)
	if err != nil {
		return redact.Redacted
	}
	u.Path, u.RawPath = s.redactor.Path(u.Path), ""
	u.RawQuery = s.redactor.Query(u.RawQuery)
	return u.String()
}

// forwardedHeaders are the partner's headers minus hop-by-hop ones, the
// sandbox's own X-Sandbox-* controls, which the real service must not see,
// and Accept-Encoding, so that the answer arrives decompressed and the
// journal can read it.
func forwardedHeaders(h http.Header) http.Header {
	out := http.Header{}
	for name, values := range h {
		if isHopHeader(name) || strings.EqualFold(name, "Accept-Encoding") || strings.HasPrefix(strings.ToLower(name), "x-sandbox-") {
			continue
		}
		out[name] = values
	}
	return out
}

func isHopHeader(name string) bool {
	for _, h := range hopHeaders {
		if strings.EqualFold(h, name) {
			return true
		}
	}
	return false
}

// upstreamFailure names a transport error without its URL.
func upstreamFailure(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if ue != nil && ue.Timeout() {
		return "timed out"
	}
	return err.Error()
}
