package idp

import "net/http"

// setTokenHeaders sets the headers every answer of the token endpoint
// carries, as Entra's do whatever the outcome: the body's type, no caching
// of a token or a refusal, and the caller's correlation id echoed so that
// MSAL can match the answer to its request.
func setTokenHeaders(h http.Header, contentType, correlationID string) {
	h.Set("Content-Type", contentType)
	h.Set("Cache-Control", "no-store, no-cache")
	h.Set("Pragma", "no-cache")
	h.Set("client-request-id", correlationID)
}
