package sandbox

import (
	"bytes"
	"fmt"
	"io"
	"net/http"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/exchange"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/failures"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/recording"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// UpstreamConfig makes the sandbox a recording proxy (serve --upstream);
// see recording.Config.
type UpstreamConfig = recording.Config

// withUpstream forwards partner calls when the sandbox is a recording
// proxy. It sits after the failure rules and before the sandbox's own rate
// limit: the real service limits for itself.
func (s *Server) withUpstream(next exchange.HandlerFunc) exchange.HandlerFunc {
	if s.upstream == nil {
		return next
	}
	return func(w http.ResponseWriter, r *http.Request, c exchange.Caller) exchange.Outcome {
		target := s.upstream.Target(r, string(c.Endpoint))
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
	rec := &journal.Upstream{URL: p.JournalURL(target)}
	reported := exchange.Outcome{Upstream: rec}
	held, ok := p.ReserveRequest(r.ContentLength)
	if !ok {
		rec.Error = "refused: the recording proxy holds as many body bytes as it may"
		s.failures.RefuseHold(w, r, c, fmt.Sprintf("the recording proxy already holds %d MiB of bodies in flight, its limit; retry after %d second(s)", recording.MaxBodiesInFlight>>20, failures.HeldRetryAfter))
		return reported
	}
	defer held.Release()
	reqBody, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, recording.MaxForwardedBytes))
	held.ShrinkTo(int64(len(reqBody)))
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
		s.reply.Problem(w, r, reply.New(http.StatusRequestEntityTooLarge, fmt.Sprintf("the body could not be read in full (at most %d bytes are forwarded)", recording.MaxForwardedBytes)))
		return reported
	}
	credential := p.Credential(r)
	rec.RequestBody, _ = p.PlaceholderJSON(reqBody, credential)
	out, err := http.NewRequestWithContext(r.Context(), r.Method, target, bytes.NewReader(reqBody))
	if err != nil {
		rec.Error = "could not build the request"
		s.reply.Problem(w, r, reply.New(http.StatusBadGateway, "the recording proxy could not build the request to the real service"))
		return reported
	}
	out.Header = recording.ForwardedHeaders(r.Header)
	resp, err := p.Do(out)
	if err != nil {
		// The error names the URL, which carries no credential but may
		// carry one in its query: say only what kind of failure it was.
		rec.Error = recording.Failure(err)
		s.log.Warn("the real service did not answer", "method", r.Method, "url", rec.URL, "err", rec.Error)
		s.reply.Problem(w, r, reply.New(http.StatusBadGateway, "the real service did not answer: "+rec.Error))
		return reported
	}
	defer resp.Body.Close()
	held.Release() // the request is sent: its room goes before the answer asks
	if err := held.ReserveAnswer(r.Context(), resp.ContentLength); err != nil {
		rec.Status, rec.Error = resp.StatusCode, "the caller left while the answer waited for room"
		return reported
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, recording.MaxForwardedBytes+1))
	if err != nil || len(body) > recording.MaxForwardedBytes {
		rec.Status, rec.Error = resp.StatusCode, "the answer's body could not be read in full"
		s.reply.Problem(w, r, reply.New(http.StatusBadGateway, fmt.Sprintf("the real service's answer could not be read in full (at most %d bytes)", recording.MaxForwardedBytes)))
		return reported
	}
	p.Record(r, rec, resp, body, credential)
	for name, values := range resp.Header {
		if !recording.IsHopHeader(name) {
			w.Header()[name] = values
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
	return reported
}
