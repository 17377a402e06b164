package sandbox

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// requestInfo is what the middleware chain learns about one request, for
// the journal: who sent it, which rule answered it.
type requestInfo struct {
	endpoint string
	claimed  idp.Claimed
	ruleID   string
	scenario string
	fault    string
	// delay is how long a rule or X-Sandbox-Delay held the answer back.
	delay time.Duration
	// ruleClient is the client id failure rules match (see identify);
	// ruleClientUnregistered marks one that is not a registered client.
	ruleClient             string
	ruleClientUnregistered bool
	// unverified marks a request whose credential the sandbox did not issue.
	unverified bool
	// tokenErr is why the bearer token did not verify: authentication
	// answers with it instead of verifying the token a second time.
	tokenErr error
	// refusal is why the bearer token was refused, for the journal.
	refusal string
	// upstream is the real service's answer (serve --upstream).
	upstream *journal.Upstream
	// heldStatus and heldHeader are the answer a drop-after-commit fault
	// kept from the client: the journal shows what was committed.
	heldStatus int
	heldHeader http.Header
	// submission identifies what a referral was submitted for (see
	// submissionOf), for the resubmits-safely check.
	submission string
}

// infoFrom returns the request's info; a throwaway one outside the chain.
func infoFrom(ctx context.Context) *requestInfo {
	if st := stateFrom(ctx); st != nil {
		return &st.info
	}
	return &requestInfo{}
}

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
	s    *Server
	info *requestInfo
	at   time.Time
}

// stamp sets the end once: the first stamp wins.
func (e *requestEnd) stamp() {
	if e.at.IsZero() {
		e.at = e.s.clocks.Now(e.info.claimed.ClientID)
	}
}

func (w *statusRecorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

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
// journal) and records every request except the sandbox's own, even one a
// fault aborted.
func (s *Server) withJournal(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st, r := withState(r)
		info, obs := &st.info, &st.obs
		*info = requestInfo{endpoint: string(endpointOf(r))}
		s.identify(r, info)
		if !journaled(r) {
			next.ServeHTTP(w, r)
			return
		}
		start := s.clocks.Now(info.claimed.ClientID)
		st.end = requestEnd{s: s, info: info}
		st.journalRec = statusRecorder{ResponseWriter: w, end: &st.end}
		rec := &st.journalRec
		defer func() {
			st.end.stamp()
			if err := s.backend.Journal.Add(r.Context(), s.journalEntry(r, rec, info, obs, start, st.end.at)); err != nil {
				s.log.Error("journal a request", "request_id", requestID(r), "err", err)
			}
		}()
		next.ServeHTTP(rec, r)
	})
}

func (s *Server) journalEntry(r *http.Request, rec *statusRecorder, info *requestInfo, obs *idp.Observation, start, end time.Time) JournalEntry {
	e := JournalEntry{
		At:           start.UTC().Format(referrals.TimestampLayout),
		Method:       r.Method,
		Path:         s.journalPath(r.URL.Path),
		Query:        s.redactor.Query(r.URL.RawQuery),
		Endpoint:     info.endpoint,
		ClientID:     info.claimed.ClientID,
		TokenID:      info.claimed.TokenID,
		Status:       rec.status,
		Fault:        info.fault,
		RuleID:       info.ruleID,
		Scenario:     info.scenario,
		DurationMs:   float64(end.Sub(start).Microseconds()) / 1000,
		DelayMs:      float64(info.delay.Microseconds()) / 1000,
		RequestID:    requestID(r),
		TLS:          r.TLS != nil,
		RequestBytes: r.ContentLength,
		Headers:      s.redactor.Headers(r.Header),
		Connection:   r.RemoteAddr,
		Run:          runOf(r),
		TokenRefusal: info.refusal,
		Upstream:     info.upstream,
	}
	answered := rec.Header()
	if info.heldStatus != 0 {
		e.Status, answered = info.heldStatus, info.heldHeader
	}
	if loc := answered.Get("Location"); loc != "" {
		e.Location = s.redactor.Path(loc)
	}
	e.Submission = info.submission
	if info.upstream != nil && s.upstream != nil {
		s.upstream.PlaceholderEntry(&e)
	}
	if obs.ClientID != "" {
		e.ClientID = obs.ClientID
	}
	if obs.TokenID != "" {
		e.TokenID = obs.TokenID
	}
	if info.endpoint == "token" && e.ClientID == "" && info.ruleClientUnregistered {
		e.NamedClientID = s.redactor.Value(info.ruleClient)
	}
	// How far the client's clock was from real time (seconds with the
	// fraction, so a jump of a few seconds still shows): the report tells a
	// token that expired because the clock jumped.
	own, _ := s.clocks.Offset(e.ClientID)
	e.ClockOffsetSeconds = (s.clocks.Global().Offset() + own).Seconds()
	expires := info.claimed.ExpiresAt
	if !obs.TokenExpiresAt.IsZero() {
		expires = obs.TokenExpiresAt
	}
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
func rateLimitOf(h http.Header) *journal.RateLimit {
	limit, errL := strconv.Atoi(h.Get("RateLimit-Limit"))
	remaining, errR := strconv.Atoi(h.Get("RateLimit-Remaining"))
	reset, errS := strconv.Atoi(h.Get("RateLimit-Reset"))
	if errL != nil || errR != nil || errS != nil {
		return nil
	}
	return &journal.RateLimit{Limit: limit, Remaining: remaining, Reset: reset}
}
