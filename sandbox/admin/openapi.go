package admin

import (
	"fmt"
	"net/http"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi"
)

// serveAdminOpenAPI serves the admin API's OpenAPI document without the
// admin token: it holds no data, and tooling (and the QA console) reads it
// first. Its servers entry names the address it was fetched at, or
// --public-url, as the API's document does. It is a document of its own so partners' generated clients, built
// from /api/v1/openapi.json, never contain the sandbox's controls.
func (a *API) serveAdminOpenAPI(w http.ResponseWriter, r *http.Request) {
	doc, err := openapi.ServedAdmin(a.cfg.Provider.BaseURL(r))
	if err != nil {
		a.reply.Fail(w, r, fmt.Errorf("admin OpenAPI document: %w", err))
		return
	}
	w.Header().Set("Content-Type", openapi.ContentType)
	_, _ = w.Write(doc)
}
