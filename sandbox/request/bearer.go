package request

import (
	"net/http"
	"strings"
)

// Bearer returns the token of an "Authorization: Bearer" header.
func Bearer(r *http.Request) string {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}
