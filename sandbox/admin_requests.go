package sandbox

import (
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"

	"net/http"
	"strconv"
	"time"
)

// listRequests answers GET /__sandbox/requests: the journal, oldest first,
// filtered by afterId (entries newer than that id), clientId, path (exact, or a prefix ending in *), status, since
// (RFC 3339) and limit (the latest N).
func (s *Server) listRequests(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := journal.Filter{ClientID: q.Get("clientId"), Path: q.Get("path")}
	var errs []FieldError
	if v := q.Get("status"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 || n > 599 {
			errs = append(errs, FieldError{Field: "status", Message: "must be an HTTP status code such as 401"})
		}
		f.Status = n
	}
	if v := q.Get("afterId"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			errs = append(errs, FieldError{Field: "afterId", Message: "must be a journal entry id"})
		}
		f.AfterID = n
	}
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			errs = append(errs, FieldError{Field: "since", Message: "must be an RFC 3339 time such as 2026-01-02T15:04:05Z"})
		}
		f.Since = t
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			errs = append(errs, FieldError{Field: "limit", Message: "must be a positive whole number"})
		}
		f.Limit = n
	}
	if len(errs) > 0 {
		p := newProblem(http.StatusBadRequest, "invalid query parameters")
		p.Errors = errs
		s.problem(w, r, p)
		return
	}
	entries := s.journal.Find(f)
	if entries == nil {
		entries = []JournalEntry{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"requests": entries})
}

// clearRequests answers DELETE /__sandbox/requests: the whole journal, or
// with ?clientId= only that client's entries, so a CI job can clear its own
// without touching another job's.
func (s *Server) clearRequests(w http.ResponseWriter, r *http.Request) {
	if clientID := r.URL.Query().Get("clientId"); clientID != "" {
		s.journal.ClearClient(clientID)
	} else {
		s.journal.Clear()
	}
	w.WriteHeader(http.StatusNoContent)
}
