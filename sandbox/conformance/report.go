// Package conformance judges a client against the rules the interface
// document sets for clients (sections 5 and 8): renew the token before it
// expires, recover from 401 with a new token, reuse tokens, wait after 429
// and 503, back off exponentially, ping sparingly, send the right content
// types, keep credentials out of URLs, use HTTPS. It reads only the request
// journal, so Evaluate is a pure function of the entries and the options.
//
// Every check has a stable id (the Check* constants) and ends pass, fail,
// warn or not-exercised (the client never did what the rule is about). Each
// result names its evidence: the request ids (X-Request-Id) of the journal
// entries that show it.
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package conformance

import (
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// Result is the outcome of one check.
type Result string

// Results, from best to worst; NotExercised says nothing about the client
// except that it never did what the rule is about.
const (
	Pass         Result = "pass"
	Warn         Result = "warn"
	Fail         Result = "fail"
	NotExercised Result = "not-exercised"
)

// Results lists every result, in the order a summary prints them.
func Results() []Result { return []Result{Pass, Warn, Fail, NotExercised} }

// severity orders results for a client's overall result: any fail makes
// the client fail, any warn makes it warn, and a client with nothing but
// not-exercised checks has not been judged at all.
func (r Result) severity() int {
	switch r {
	case Fail:
		return 3
	case Warn:
		return 2
	case Pass:
		return 1
	}
	return 0
}

// Unidentified is the client id the report uses for requests that belong
// to no client: no token, one the sandbox did not issue (the journal never
// believes a token's claims unverified), or a token request without the
// client's secret. Only checks that judge single requests apply to them:
// they may come from several programs.
const Unidentified = "(unidentified)"

// Defaults of Options.
const (
	DefaultPingsPerMinute = 6
	DefaultRenewalMargin  = 60 * time.Second
	DefaultMaxAttempts    = 8
)

// Options tune the judgement. Zero fields take the defaults.
type Options struct {
	// TLS says the sandbox serves HTTPS (started with --tls); without it
	// the https-only check is not exercised.
	TLS bool
	// PingsPerMinute is the most pings in any 60 seconds that count as
	// sparing; more warn, more than four times as many fail.
	PingsPerMinute int
	// RenewalMargin is how long before expiry a token should be renewed;
	// the interface document's examples use 60 seconds.
	RenewalMargin time.Duration
	// MaxAttempts is how many consecutive failed attempts a client may make
	// before it should give up (backs-off warns past it).
	MaxAttempts int
	// Now is when the report is made, on the sandbox clock.
	Now time.Time
	// Known says whether a client id names a client of the sandbox.
	// Requests naming any other id are listed apart as unknown clients,
	// never judged. Nil: every id counts as known.
	Known func(clientID string) bool
}

func (o Options) withDefaults() Options {
	if o.PingsPerMinute <= 0 {
		o.PingsPerMinute = DefaultPingsPerMinute
	}
	if o.RenewalMargin <= 0 {
		o.RenewalMargin = DefaultRenewalMargin
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	return o
}

// Check is one rule's verdict on one client.
type Check struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Result      Result `json:"result"`
	Explanation string `json:"explanation"`
	// Evidence holds the request ids of the entries that show the result,
	// at most MaxEvidence of them; empty for a pass without incidents.
	Evidence []string `json:"evidence"`
}

// ClientReport is every check's verdict on one program of a client (see
// splitPrograms for how programs are told apart).
type ClientReport struct {
	ClientID string `json:"clientId"`
	// Program is which of the client's programs this is.
	Program Program `json:"program"`
	// Requests counts the client's journaled requests.
	Requests int `json:"requests"`
	// Result is the worst result of the checks (fail, warn, pass), or
	// not-exercised when no check was exercised.
	Result  Result         `json:"result"`
	Summary map[Result]int `json:"summary"`
	Checks  []Check        `json:"checks"`
}

// Settings are the thresholds a report was made with.
type Settings struct {
	TLS                  bool `json:"tls"`
	PingsPerMinute       int  `json:"pingsPerMinute"`
	RenewalMarginSeconds int  `json:"renewalMarginSeconds"`
	MaxAttempts          int  `json:"maxAttempts"`
}

// Report is the conformance report: one ClientReport per program of each
// client seen in the journal, sorted by client id (Unidentified last),
// then in the order the programs first appeared; and apart, the client ids
// that requests named but the sandbox does not know.
type Report struct {
	GeneratedAt    string          `json:"generatedAt"`
	Settings       Settings        `json:"settings"`
	Clients        []ClientReport  `json:"clients"`
	UnknownClients []UnknownClient `json:"unknownClients"`
}

// Evaluate judges every client in entries (journal order, oldest first).
func Evaluate(entries []journal.Entry, opts Options) Report {
	opts = opts.withDefaults()
	report := Report{
		Settings: Settings{
			TLS: opts.TLS, PingsPerMinute: opts.PingsPerMinute,
			RenewalMarginSeconds: int(opts.RenewalMargin / time.Second), MaxAttempts: opts.MaxAttempts,
		},
		Clients: []ClientReport{},
	}
	if !opts.Now.IsZero() {
		report.GeneratedAt = opts.Now.UTC().Format(referrals.TimestampLayout)
	}
	sorted, unknown := splitUnknown(withoutDiscovery(sortedByID(entries)), opts.Known)
	report.UnknownClients = unknown
	groups := map[string][]call{}
	for _, e := range sorted {
		id := e.ClientID
		if id == "" {
			id = Unidentified
		}
		groups[id] = append(groups[id], newCall(e))
	}
	ids := make([]string, 0, len(groups))
	for id := range groups {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if (ids[i] == Unidentified) != (ids[j] == Unidentified) {
			return ids[j] == Unidentified
		}
		return ids[i] < ids[j]
	})
	for _, id := range ids {
		if id == Unidentified {
			cr := evaluateClient(id, groups[id], opts)
			cr.Program = describePrograms([][]call{groups[id]})[0]
			cr.Program.Label = "requests without a client id"
			report.Clients = append(report.Clients, cr)
			continue
		}
		programs := splitPrograms(groups[id])
		for i, p := range describePrograms(programs) {
			cr := evaluateClient(id, programs[i], opts)
			cr.Program = p
			report.Clients = append(report.Clients, cr)
		}
	}
	return report
}

// withoutDiscovery leaves out the anonymous GETs of the identity
// provider's metadata (OpenID configuration, instance discovery, JWKS)
// that MSAL and other libraries make before their first token: they
// carry no client id, so they would form an "(unidentified)" program that
// passes every check it can be judged by and says nothing about anyone.
func withoutDiscovery(entries []journal.Entry) []journal.Entry {
	out := entries[:0]
	for _, e := range entries {
		if !isDiscovery(e) {
			out = append(out, e)
		}
	}
	return out
}

// isDiscovery reports whether e is an anonymous read of the identity
// provider's metadata.
func isDiscovery(e journal.Entry) bool {
	return e.Endpoint == "" && e.ClientID == "" && e.TokenID == "" &&
		(e.Method == http.MethodGet || e.Method == http.MethodHead) &&
		(strings.Contains(e.Path, "/.well-known/") || strings.Contains(e.Path, "/discovery/"))
}

// sortedByID returns a copy of entries in journal order, whatever order
// the caller passed them in.
func sortedByID(entries []journal.Entry) []journal.Entry {
	out := append([]journal.Entry(nil), entries...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func evaluateClient(id string, calls []call, opts Options) ClientReport {
	cr := ClientReport{ClientID: id, Requests: len(calls), Summary: map[Result]int{}, Result: NotExercised}
	for _, r := range Results() {
		cr.Summary[r] = 0
	}
	for _, rule := range rules() {
		var c Check
		if id == Unidentified && !rule.perRequest {
			c = Check{Result: NotExercised, Explanation: "requests without a client id may come from several programs, so their order is not judged"}
		} else {
			c = rule.eval(calls, opts)
		}
		c.ID, c.Title = rule.id, rule.title
		c.Evidence = capEvidence(&c)
		cr.Checks = append(cr.Checks, c)
		cr.Summary[c.Result]++
		if c.Result.severity() > cr.Result.severity() {
			cr.Result = c.Result
		}
	}
	return cr
}
