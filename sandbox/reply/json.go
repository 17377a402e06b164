package reply

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// jsonContentType is the Content-Type value of every JSON answer, one
// slice shared by all: Header().Set allocates a slice per call. Nothing
// changes a header value in place (Set and Add replace or copy it).
var jsonContentType = []string{"application/json"}

// SetJSONContentType marks the answer h belongs to as JSON.
func SetJSONContentType(h http.Header) { h["Content-Type"] = jsonContentType }

// chunkedFrom is the length of body from which net/http, unless told the
// Content-Length, sends an answer chunked: the buffer it fills before it
// must send the headers (bufferBeforeChunkingSize in net/http).
const chunkedFrom = 2048

// JSON writes v as a JSON response with status: as json.Encoder encodes
// it (a newline after), with its Content-Length (see JSONBytes).
func JSON(w http.ResponseWriter, status int, v any) {
	var body bytes.Buffer // the Encoder writes the whole encoding at once
	if err := json.NewEncoder(&body).Encode(v); err != nil {
		// No value the sandbox answers with fails to encode; were one to,
		// the status goes alone, as json.Encoder wrote nothing either.
		SetJSONContentType(w.Header())
		w.WriteHeader(status)
		return
	}
	JSONBytes(w, status, body.Bytes())
}

// JSONBytes writes body, already encoded JSON, as a response with status
// and its Content-Length. Left to itself, net/http sends a body of more
// than chunkedFrom bytes chunked, which costs a listing a third write to
// the connection, for the seven bytes that end the chunks. A shorter body
// it sends with its length already, so the header is set only for a
// longer one (setting it costs two allocations).
func JSONBytes(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	SetJSONContentType(h)
	if len(body) > chunkedFrom {
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
	}
	w.WriteHeader(status)
	_, _ = w.Write(body) // a failed write means the client left
}

// WarningHeader is the response header naming ignored request fields.
const WarningHeader = "Sandbox-Warning"

// WarnUnknownFields names ignored JSON fields in the Sandbox-Warning
// header, so a partner sees a typo without the sandbox being stricter than
// the real service.
func WarnUnknownFields(w http.ResponseWriter, unknown []string) {
	if len(unknown) > 0 {
		w.Header().Set(WarningHeader, "unknown fields ignored: "+strings.Join(unknown, ", "))
	}
}
