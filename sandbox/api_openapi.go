package sandbox

import (
	"net/http"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi"
)

// serveOpenAPI serves the OpenAPI document without a token, like the health
// check: a partner's tooling reads it before it has credentials.
func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(openapi.Document())
}
