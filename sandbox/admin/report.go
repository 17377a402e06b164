package admin

import (
	"net/http"
	"strconv"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/conformance"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/request"
)

// serveReport answers GET /__sandbox/report: the client conformance report
// over the request journal (package conformance). ?clientId= judges one
// client (404 when the journal has nothing from it, so a CI job with a
// wrong id fails instead of passing vacuously); ?pingsPerMinute= and
// ?maxAttempts= override the ping and give-up thresholds.
func (a *API) serveReport(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	opts := conformance.Options{
		TLS: a.cfg.HTTPSOnly || r.TLS != nil, // r.TLS: a test may serve TLS without the flag
		Now: a.clocks.Now(""),
		// A client id no client has (a token request with a wrong id, a
		// forged token) is listed apart, never judged as a client.
		Known: func(id string) bool { _, ok := a.cfg.Provider.Client(id); return ok },
	}
	var errs []reply.FieldError
	for _, p := range []struct {
		name string
		into *int
	}{{"pingsPerMinute", &opts.PingsPerMinute}, {"maxAttempts", &opts.MaxAttempts}} {
		v := q.Get(p.name)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || !request.IsDigits(v) || n < 1 {
			errs = append(errs, reply.FieldError{Field: p.name, Message: "must be a positive whole number"})
		}
		*p.into = n
	}
	if len(errs) > 0 {
		p := reply.New(http.StatusBadRequest, "invalid query parameters")
		p.Errors = errs
		a.reply.Problem(w, r, p)
		return
	}
	clientID := q.Get("clientId")
	f := journal.Filter{ClientID: clientID}
	if clientID == conformance.Unidentified {
		f.ClientID = "" // filtered below: the journal stores no id for them
	}
	entries, err := a.backend.Journal.Find(r.Context(), f)
	if err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	if clientID == conformance.Unidentified {
		entries = unidentified(entries)
	}
	if clientID != "" && len(entries) == 0 {
		a.reply.Problem(w, r, reply.New(http.StatusNotFound, "the request journal holds no request from client "+clientID))
		return
	}
	reply.JSON(w, http.StatusOK, conformance.Evaluate(entries, opts))
}

// unidentified keeps the entries that name no client.
func unidentified(entries []journal.Entry) []journal.Entry {
	var out []journal.Entry
	for _, e := range entries {
		if e.ClientID == "" {
			out = append(out, e)
		}
	}
	return out
}
