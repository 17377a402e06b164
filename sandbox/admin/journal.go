package admin

import (
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/request"

	"fmt"
	"net/http"
	"strconv"
	"time"
)

// requestsPage is the body of GET /__sandbox/requests.
type requestsPage struct {
	Requests []journal.Entry `json:"requests"`
	// NextAfterID is the afterId of the next page, nil when this page
	// reached the newest matching entry.
	NextAfterID *uint64 `json:"nextAfterId"`
}

// listRequests answers GET /__sandbox/requests: one page of the journal,
// oldest first, filtered by clientId, path (exact, or a prefix ending in *),
// status and since (RFC 3339). limit is the page size (default 100, at most
// 1000). Without afterId the page is the newest limit entries, which is
// what a person looking at the journal wants; with afterId (0 for the
// oldest entry kept) it is the first limit entries after that id, and
// nextAfterId continues the walk.
func (a *API) listRequests(w http.ResponseWriter, r *http.Request) {
	f, limit, ok := a.journalQuery(w, r)
	if !ok {
		return
	}
	page := requestsPage{Requests: []journal.Entry{}}
	if !r.URL.Query().Has("afterId") {
		entries, err := a.backend.Journal.Latest(r.Context(), f, limit)
		if err != nil {
			a.reply.Fail(w, r, err)
			return
		}
		page.Requests = append(page.Requests, entries...)
	} else {
		entries, more, err := a.backend.Journal.After(r.Context(), f, limit)
		if err != nil {
			a.reply.Fail(w, r, err)
			return
		}
		if len(entries) > 0 {
			page.Requests = entries
			if more {
				page.NextAfterID = &entries[len(entries)-1].ID
			}
		}
	}
	reply.JSON(w, http.StatusOK, page)
}

// journalQuery reads the journal's filters (clientId, path, status,
// afterId, since) and page size (limit, default journal.DefaultPageLimit)
// from r's query, which GET /__sandbox/requests and its HAR form share. An
// invalid value is answered with a 400 naming it, and ok is false.
func (a *API) journalQuery(w http.ResponseWriter, r *http.Request) (f journal.Filter, limit int, ok bool) {
	q := r.URL.Query()
	f = journal.Filter{ClientID: q.Get("clientId"), Path: q.Get("path")}
	limit = journal.DefaultPageLimit
	var errs []reply.FieldError
	if v := q.Get("status"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || !request.IsDigits(v) || n < 100 || n > 599 {
			errs = append(errs, reply.FieldError{Field: "status", Message: "must be an HTTP status code such as 401"})
		}
		f.Status = n
	}
	if v := q.Get("afterId"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || !request.IsDigits(v) {
			errs = append(errs, reply.FieldError{Field: "afterId", Message: "must be a journal entry id"})
		}
		f.AfterID = n
	}
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			errs = append(errs, reply.FieldError{Field: "since", Message: "must be an RFC 3339 time such as 2026-01-02T15:04:05Z"})
		}
		f.Since = t
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || !request.IsDigits(v) || n < 1 || n > journal.MaxPageLimit {
			errs = append(errs, reply.FieldError{Field: "limit", Message: fmt.Sprintf("must be a whole number from 1 to %d", journal.MaxPageLimit)})
		}
		limit = n
	}
	if len(errs) > 0 {
		p := reply.New(http.StatusBadRequest, "invalid query parameters")
		p.Errors = errs
		a.reply.Problem(w, r, p)
		return f, limit, false
	}
	return f, limit, true
}

// clearRequests answers DELETE /__sandbox/requests: the whole journal, or
// with ?clientId= only that client's entries, so a CI job can clear its own
// without touching another job's.
func (a *API) clearRequests(w http.ResponseWriter, r *http.Request) {
	var err error
	if clientID := r.URL.Query().Get("clientId"); clientID != "" {
		err = a.backend.Journal.ClearClient(r.Context(), clientID)
	} else {
		err = a.backend.Journal.Clear(r.Context())
	}
	if err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
