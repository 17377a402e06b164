package partnerapi

import (
	"net/http"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
)

// serveContract serves the --contract document in place of the built-in
// one, with the sandbox's additions, its servers naming the address the
// request came in on and its OAuth2 tokenUrl the sandbox's token endpoint.
// The built-in document supplied as a contract is served as the default
// run serves it.
func (a *API) serveContract(w http.ResponseWriter, r *http.Request) {
	base := a.cfg.Provider.BaseURL(r)
	reply.SetJSONContentType(w.Header())
	_, _ = w.Write(a.cfg.Contract.Served(base, a.cfg.Provider.TokenURL(base)))
}
