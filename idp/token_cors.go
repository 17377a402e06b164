package idp

import (
	"net/http"
	"strings"
)

// maxPreflightHeaders bounds the header list a preflight may ask for; a
// browser asks for a handful of names.
const maxPreflightHeaders = 1024

// allowCrossOrigin lets a page read the token endpoint's answers, as
// Entra's token endpoint does (it accepts POST and OPTIONS, the CORS
// preflight). The answers carry no cookies, so any origin may read them.
func allowCrossOrigin(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Origin") != "" {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Access-Control-Expose-Headers", "client-request-id, x-ms-request-id, Retry-After")
	}
}

// answerPreflight answers OPTIONS as the Fetch standard's CORS preflight
// wants: 200, the methods the endpoint accepts, and the request headers the
// browser asked for when they are a well-formed list of header names.
func answerPreflight(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	h.Set("Allow", "POST, OPTIONS")
	if asked := r.Header.Get("Access-Control-Request-Headers"); asked != "" && headerList(asked) {
		h.Set("Access-Control-Allow-Headers", asked)
	}
	h.Set("Access-Control-Max-Age", "86400")
	h.Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
}

// headerList reports whether v is a short comma-separated list of header
// names (RFC 9110 tokens), so that only such a list is echoed back.
func headerList(v string) bool {
	if len(v) > maxPreflightHeaders {
		return false
	}
	for _, name := range strings.Split(v, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			return false
		}
		for _, c := range name {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", c)) {
				return false
			}
		}
	}
	return true
}
