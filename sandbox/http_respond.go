package sandbox

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// writeJSON writes v as a JSON response with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // a failed write means the client left
}

// problem writes p for request r, filling in the instance and trace id.
func (s *Server) problem(w http.ResponseWriter, r *http.Request, p Problem) {
	writeProblem(w, p.forRequest(r, requestID(r)))
}

// fail answers err: the request's own problem, or a logged 500 whose body
// does not leak internals.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, errSharedState) || errors.Is(err, store.ErrUnavailable) || errors.Is(err, idp.ErrClientStore) {
		s.log.Error("shared state unavailable", "request_id", requestID(r), "err", err)
		s.unavailable(w, r)
		return
	}
	p := problemFor(err)
	if p.Status >= http.StatusInternalServerError {
		s.log.Error("request failed", "method", r.Method, "path", s.redactor.Path(r.URL.Path), "request_id", requestID(r), "err", err)
	}
	s.problem(w, r, p)
}

// warnUnknownFields names ignored JSON fields in the Sandbox-Warning header,
// so a partner sees a typo without the sandbox being stricter than the
// real service.
func warnUnknownFields(w http.ResponseWriter, unknown []string) {
	if len(unknown) > 0 {
		w.Header().Set(WarningHeader, "unknown fields ignored: "+strings.Join(unknown, ", "))
	}
}

// WarningHeader is the response header naming ignored request fields.
const WarningHeader = "Sandbox-Warning"
