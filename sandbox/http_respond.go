package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/backend"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// jsonContentType is the Content-Type value of every JSON answer, one
// slice shared by all: Header().Set allocates a slice per call. Nothing
// changes a header value in place (Set and Add replace or copy it).
var jsonContentType = []string{"application/json"}

// setJSONContentType marks the answer h belongs to as JSON.
func setJSONContentType(h http.Header) { h["Content-Type"] = jsonContentType }

// chunkedFrom is the length of body from which net/http, unless told the
// Content-Length, sends an answer chunked: the buffer it fills before it
// must send the headers (bufferBeforeChunkingSize in net/http).
const chunkedFrom = 2048

// writeJSON writes v as a JSON response with status: as json.Encoder
// encodes it (a newline after), with its Content-Length (see
// writeJSONBytes).
func writeJSON(w http.ResponseWriter, status int, v any) {
	var body bytes.Buffer // the Encoder writes the whole encoding at once
	if err := json.NewEncoder(&body).Encode(v); err != nil {
		// No value the sandbox answers with fails to encode; were one to,
		// the status goes alone, as json.Encoder wrote nothing either.
		setJSONContentType(w.Header())
		w.WriteHeader(status)
		return
	}
	writeJSONBytes(w, status, body.Bytes())
}

// writeJSONBytes writes body, already encoded JSON, as a response with
// status and its Content-Length. Left to itself, net/http sends a body of
// more than chunkedFrom bytes chunked, and a page of 50 referrals (18 KB)
// took a third write to the connection, for the seven bytes that end the
// chunks. A shorter body it sends with its length already, so the header
// is set only for a longer one (setting it costs two allocations).
func writeJSONBytes(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	setJSONContentType(h)
	if len(body) > chunkedFrom {
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
	}
	w.WriteHeader(status)
	_, _ = w.Write(body) // a failed write means the client left
}

// problem writes p for request r, filling in the instance and trace id.
// The instance is the path as the journal shows it: a token or secret sent
// as a path segment never comes back in an error body.
func (s *Server) problem(w http.ResponseWriter, r *http.Request, p Problem) {
	p = p.forRequest(r, requestID(r))
	p.Instance = s.redactor.Path(p.Instance)
	writeProblem(w, p)
}

// fail answers err: the request's own problem, or a logged 500 whose body
// does not leak internals.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, backend.ErrUnavailable) || errors.Is(err, store.ErrUnavailable) || errors.Is(err, idp.ErrClientStore) ||
		errors.Is(err, scenarios.ErrUnavailable) || errors.Is(err, journal.ErrUnavailable) {
		s.log.Error("shared state unavailable", "request_id", requestID(r), "err", err)
		if maybeStored(r, err) {
			s.unconfirmedWrite(w, r)
			return
		}
		s.unavailable(w, r, err)
		return
	}
	p := problemFor(err)
	// A quota refusal is the caller's, and a runaway loop meets one per
	// request: no log line each.
	if p.Status >= http.StatusInternalServerError && p.Status != http.StatusInsufficientStorage {
		s.log.Error("request failed", "method", s.redactor.Log(r.Method), "path", s.redactor.LogPath(r.URL.Path), "request_id", requestID(r), "err", err)
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
