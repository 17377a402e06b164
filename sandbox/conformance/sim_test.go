package conformance

import (
	"cmp"
	"fmt"
	"net/http"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// lifetime is the sandbox's default token lifetime.
const lifetime = 3599 * time.Second

// sim writes journal entries as the sandbox would for one client whose
// requests each take answer (5 ms unless the test says otherwise), on a
// clock the test moves.
type sim struct {
	now    time.Time
	answer time.Duration
	id     uint64
	tokens int
	client string
	tls    bool
	token  string
	// lifetime of the tokens it issues; 0: the default lifetime.
	lifetime time.Duration
	expires  map[string]time.Time
	entries  []journal.Entry
}

func newSim() *sim {
	return &sim{
		now:     time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC),
		answer:  5 * time.Millisecond,
		client:  "partner",
		tls:     true,
		expires: map[string]time.Time{},
	}
}

// wait moves the clock as a client sleeping d would.
func (s *sim) wait(d time.Duration) { s.now = s.now.Add(d) }

// mod changes an entry before it is recorded.
type mod func(*journal.Entry)

func status(n int) mod { return func(e *journal.Entry) { e.Status = n } }
func retryAfter(n int) mod {
	return func(e *journal.Entry) { e.RetryAfterSeconds = n }
}
func query(q string) mod               { return func(e *journal.Entry) { e.Query = q } }
func plainHTTP() mod                   { return func(e *journal.Entry) { e.TLS = false } }
func bodyBytes(n int64) mod            { return func(e *journal.Entry) { e.RequestBytes = n } }
func setHeader(name, value string) mod { return func(e *journal.Entry) { e.Headers[name] = value } }
func fault(name string) mod            { return func(e *journal.Entry) { e.Fault, e.Status = name, 0 } }
func client(id string) mod             { return func(e *journal.Entry) { e.ClientID = id } }
func took(ms float64) mod              { return func(e *journal.Entry) { e.DurationMs = ms } }
func path(method, p string) mod        { return func(e *journal.Entry) { e.Method, e.Path = method, p } }
func endpoint(kind string) mod         { return func(e *journal.Entry) { e.Endpoint = kind } }
func conn(addr string) mod             { return func(e *journal.Entry) { e.Connection = addr } }
func runLabel(label string) mod        { return func(e *journal.Entry) { e.Run = label } }
func refusal(reason string) mod        { return func(e *journal.Entry) { e.TokenRefusal = reason } }
func offset(seconds float64) mod       { return func(e *journal.Entry) { e.ClockOffsetSeconds = seconds } }
func withToken(id string, exp time.Time) mod {
	return func(e *journal.Entry) { e.TokenID, e.TokenExpiresAt = id, exp.Format(time.RFC3339) }
}

// record journals e after mods and returns its request id.
func (s *sim) record(e journal.Entry, mods ...mod) string {
	s.id++
	e.ID = s.id
	e.At = s.now.Format(referrals.TimestampLayout)
	e.RequestID = fmt.Sprintf("req-%d", s.id)
	e.ClientID = s.client
	e.TLS = s.tls
	e.DurationMs = float64(s.answer.Microseconds()) / 1000
	if e.Headers == nil {
		e.Headers = map[string]string{"User-Agent": "partner-client/1.0"}
	}
	for _, m := range mods {
		m(&e)
	}
	s.now = s.now.Add(time.Duration(e.DurationMs * float64(time.Millisecond))).Truncate(time.Microsecond)
	s.entries = append(s.entries, e)
	return e.RequestID
}

// fetchToken is a successful token request; the new token becomes the
// client's.
func (s *sim) fetchToken(mods ...mod) string {
	s.tokens++
	id := fmt.Sprintf("tok-%d", s.tokens)
	exp := s.now.Truncate(time.Second).Add(cmp.Or(s.lifetime, lifetime))
	s.token, s.expires[id] = id, exp
	e := journal.Entry{
		Method: http.MethodPost, Path: "/tenant/oauth2/v2.0/token", Endpoint: endpointToken, Status: http.StatusOK,
		Headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, RequestBytes: 120,
	}
	return s.record(e, append([]mod{withToken(id, exp)}, mods...)...)
}

// call is a GET of the trials with the client's current token: 401 when
// the token has expired, else 200, unless a mod says otherwise.
func (s *sim) call(mods ...mod) string {
	exp := s.expires[s.token]
	st := http.StatusOK
	if !s.now.Before(exp) {
		st = http.StatusUnauthorized
	}
	e := journal.Entry{Method: http.MethodGet, Path: "/api/v1/referrals/trials", Endpoint: endpointAPI, Status: st}
	return s.record(e, append([]mod{withToken(s.token, exp)}, mods...)...)
}

// post submits a referral as JSON.
func (s *sim) post(mods ...mod) string {
	all := append([]mod{path(http.MethodPost, "/api/v1/referrals/"), status(http.StatusCreated), bodyBytes(200),
		setHeader("Content-Type", "application/json; charset=utf-8")}, mods...)
	return s.call(all...)
}

func (s *sim) ping(mods ...mod) string {
	return s.call(append([]mod{path(http.MethodGet, "/health/ping"), endpoint(endpointPing)}, mods...)...)
}

// expiresAt is the expiry of the client's current token.
func (s *sim) expiresAt() time.Time { return s.expires[s.token] }
