package partnerapi

import (
	"net/http"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
)

// OpenAPI serves the OpenAPI document without a token, like the health
// check: a partner's tooling reads it before it has credentials. Its servers
// and OAuth2 tokenUrl name the address the request came in on (or
// --public-url), as the discovery document does.
func (a *API) OpenAPI(w http.ResponseWriter, r *http.Request) {
	if a.cfg.Contract != nil {
		a.serveContract(w, r)
		return
	}
	base := a.cfg.Provider.BaseURL(r)
	reply.SetJSONContentType(w.Header())
	_, _ = w.Write(openapi.Served(base, a.cfg.Provider.TokenURL(base)))
}
