package sandbox

import (
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"

	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
)

// requestInfo is what the middleware chain learns about one request, for
// the journal: who sent it, which rule answered it.
type requestInfo struct {
	endpoint string
	claimed  idp.Claimed
	ruleID   string
	scenario string
	fault    string
	// refusal is why the bearer token was refused, for the journal.
	refusal string
}

type requestInfoKey struct{}

func infoFrom(ctx context.Context) *requestInfo {
	info, _ := ctx.Value(requestInfoKey{}).(*requestInfo)
	if info == nil {
		return &requestInfo{}
	}
	return info
}

// statusRecorder remembers the status a handler wrote. Unwrap lets
// http.ResponseController reach the connection (faults hijack it).
type statusRecorder struct {
	http.ResponseWriter
	status int
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

// withJournal identifies the caller (for failure rules, rate limits and the
// journal) and records every request except the sandbox's own, even one a
// fault aborted.
func (s *Server) withJournal(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := &requestInfo{endpoint: string(endpointOf(r))}
		info.claimed = s.identify(r, info.endpoint)
		obs := &idp.Observation{}
		ctx := idp.WithObservation(context.WithValue(r.Context(), requestInfoKey{}, info), obs)
		r = r.WithContext(ctx)
		if !journaled(r) {
			next.ServeHTTP(w, r)
			return
		}
		start := s.cfg.Clock.Now()
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			s.journal.Add(s.journalEntry(r, rec, info, obs, start))
		}()
		next.ServeHTTP(rec, r)
	})
}

// identify names the client of a request without authenticating it: from
// the credentials of a token request, or the claims of a bearer token.
func (s *Server) identify(r *http.Request, endpoint string) idp.Claimed {
	if endpoint == "token" {
		return idp.Claimed{ClientID: idp.ClientIDOf(r)}
	}
	return s.cfg.Provider.Identify(bearerToken(r))
}

func (s *Server) journalEntry(r *http.Request, rec *statusRecorder, info *requestInfo, obs *idp.Observation, start time.Time) JournalEntry {
	now := s.cfg.Clock.Now()
	e := JournalEntry{
		At:           start.UTC().Format(fixtures.TimestampLayout),
		Method:       r.Method,
		Path:         r.URL.Path,
		Query:        journal.RedactQuery(r.URL.RawQuery),
		Endpoint:     info.endpoint,
		ClientID:     info.claimed.ClientID,
		TokenID:      info.claimed.TokenID,
		Status:       rec.status,
		Fault:        info.fault,
		RuleID:       info.ruleID,
		Scenario:     info.scenario,
		DurationMs:   float64(now.Sub(start).Microseconds()) / 1000,
		RequestID:    requestID(r),
		TLS:          r.TLS != nil,
		RequestBytes: r.ContentLength,
		Headers:      journal.RedactHeaders(r.Header),
		Connection:   r.RemoteAddr,
		Run:          runOf(r),
		TokenRefusal: info.refusal,
		// Seconds with the fraction: a jump of a few seconds still shows.
		ClockOffsetSeconds: s.cfg.Clock.Offset().Seconds(),
	}
	if obs.ClientID != "" {
		e.ClientID = obs.ClientID
	}
	if obs.TokenID != "" {
		e.TokenID = obs.TokenID
	}
	expires := info.claimed.ExpiresAt
	if !obs.TokenExpiresAt.IsZero() {
		expires = obs.TokenExpiresAt
	}
	if !expires.IsZero() {
		e.TokenExpiresAt = expires.UTC().Format(time.RFC3339)
	}
	if ra, err := strconv.Atoi(rec.Header().Get("Retry-After")); err == nil {
		e.RetryAfterSeconds = ra
	}
	return e
}
