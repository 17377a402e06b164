package sandbox

import (
	"bufio"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/exchange"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// statusRecorder remembers the status a handler wrote. Unwrap lets
// http.ResponseController reach the connection (faults hijack it).
type statusRecorder struct {
	http.ResponseWriter
	status int
	// end, when set, is stamped as a fault takes the connection over.
	end *requestEnd
}

// requestEnd is when a request ended for its client, on the sandbox clock
// the client lives by, for the journal's duration.
type requestEnd struct {
	s        *Server
	clientID string
	at       time.Time
}

// stamp sets the end once: the first stamp wins.
func (e *requestEnd) stamp() {
	if e.at.IsZero() {
		e.at = e.s.clocks.Now(e.clientID)
	}
}

// WriteHeader records the first status written.
func (w *statusRecorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

// Write records an implied 200 when no status was written first.
func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Hijack stamps the end before handing the connection over. A fault that
// closes the connection ends the exchange for the client there and then,
// while the handler may run on for a while: the journal must not date the
// request's end after requests the client sent once it saw the close.
func (w *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if w.end != nil {
		w.end.stamp()
	}
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// withJournal identifies the caller (for failure rules, rate limits and the
// journal), hands it to next, and records every request except the
// sandbox's own from what next reports, even one a fault ended.
func (s *Server) withJournal(next exchange.HandlerFunc) layer {
	return func(w http.ResponseWriter, r *http.Request) exchange.Outcome {
		st, r := withState(r)
		c := s.identify(r)
		if !journaled(r) {
			out := next(w, r, c)
			out.Caller = c
			return out
		}
		start := s.clocks.Now(c.ClientID())
		st.end = requestEnd{s: s, clientID: c.ClientID()}
		st.journalRec = statusRecorder{ResponseWriter: w, end: &st.end}
		rec := &st.journalRec
		out := next(rec, r, c)
		out.Caller = c
		st.end.stamp()
		if err := s.backend.Journal.Add(r.Context(), s.journalEntry(r, rec, out, &st.obs, start, st.end.at)); err != nil {
			s.log.Error("journal a request", "request_id", reply.RequestID(r), "err", err)
		}
		return out
	}
}

// journalEntry is the journal's record of r, built from what its layers
// reported (out), what the identity provider observed (obs) and the
// answer rec saw.
func (s *Server) journalEntry(r *http.Request, rec *statusRecorder, out exchange.Outcome, obs *idp.Observation, start, end time.Time) JournalEntry {
	c, ruling := out.Caller, out.Ruling
	e := JournalEntry{
		At:           start.UTC().Format(referrals.TimestampLayout),
		Method:       r.Method,
		Path:         s.journalPath(r.URL.Path),
		Query:        s.redactor.Query(r.URL.RawQuery),
		Endpoint:     string(c.Endpoint),
		ClientID:     c.Claimed.ClientID,
		TokenID:      c.Claimed.TokenID,
		Status:       rec.status,
		Fault:        string(ruling.Fault),
		RuleID:       ruling.RuleID,
		Scenario:     ruling.Scenario,
		DurationMs:   float64(end.Sub(start).Microseconds()) / 1000,
		DelayMs:      float64(ruling.Delay.Microseconds()) / 1000,
		RequestID:    reply.RequestID(r),
		TLS:          r.TLS != nil,
		RequestBytes: r.ContentLength,
		Headers:      s.redactor.Headers(r.Header),
		Connection:   r.RemoteAddr,
		Run:          runOf(r),
		TokenRefusal: out.Refusal,
		Upstream:     out.Upstream,
		Submission:   out.Submission,
	}
	answered := rec.Header()
	if ruling.HeldStatus != 0 {
		e.Status, answered = ruling.HeldStatus, ruling.HeldHeader
	}
	if loc := answered.Get("Location"); loc != "" {
		e.Location = s.redactor.Path(loc)
	}
	if out.Upstream != nil && s.upstream != nil {
		s.upstream.PlaceholderEntry(&e)
	}
	expires := c.Claimed.ExpiresAt
	for _, seen := range []idp.Claimed{out.Verified, {ClientID: obs.ClientID, TokenID: obs.TokenID, ExpiresAt: obs.TokenExpiresAt}} {
		if seen.ClientID != "" {
			e.ClientID = seen.ClientID
		}
		if seen.TokenID != "" {
			e.TokenID = seen.TokenID
		}
		if !seen.ExpiresAt.IsZero() {
			expires = seen.ExpiresAt
		}
	}
	if c.Endpoint == scenarios.EndpointToken && e.ClientID == "" && c.Unregistered {
		e.NamedClientID = s.redactor.Value(c.RuleClient)
	}
	// How far the client's clock was from real time (seconds with the
	// fraction, so a jump of a few seconds still shows): the report tells a
	// token that expired because the clock jumped.
	own, _ := s.clocks.Offset(e.ClientID)
	e.ClockOffsetSeconds = (s.clocks.Global().Offset() + own).Seconds()
	if !expires.IsZero() {
		e.TokenExpiresAt = expires.UTC().Format(time.RFC3339)
	}
	if v := answered.Get("Retry-After"); v != "" {
		if ra, err := strconv.Atoi(v); err == nil {
			e.RetryAfterSeconds = ra
		}
	}
	e.RateLimit = rateLimitOf(answered)
	return e
}

// rateLimitOf reads the RateLimit-* headers the sandbox wrote on an
// answer, or nil when it wrote none (or not all three).
// Most answers carry none, so their absence is found without parsing
// (a failed Atoi allocates its error) or canonicalizing a name (Get does).
func rateLimitOf(h http.Header) *journal.RateLimit {
	l, r, s := h[rateLimitLimit], h[rateLimitRemaining], h[rateLimitReset]
	if len(l) == 0 || len(r) == 0 || len(s) == 0 {
		return nil
	}
	limit, errL := strconv.Atoi(l[0])
	remaining, errR := strconv.Atoi(r[0])
	reset, errS := strconv.Atoi(s[0])
	if errL != nil || errR != nil || errS != nil {
		return nil
	}
	return &journal.RateLimit{Limit: limit, Remaining: remaining, Reset: reset}
}

// journaled reports whether requests to this path enter the request journal:
// everything but the sandbox's own admin API, console and health check.
func journaled(r *http.Request) bool {
	return !strings.HasPrefix(r.URL.Path, "/__sandbox/")
}
