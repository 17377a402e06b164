package sandbox

import (
	"net/http"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
)

// serveOpenAPI serves the OpenAPI document without a token, like the health
// check: a partner's tooling reads it before it has credentials. Its servers
// and OAuth2 tokenUrl name the address the request came in on (or
// --public-url), as the discovery document does.
func (s *Server) serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Contract != nil {
		s.serveContract(w, r)
		return
	}
	base := s.cfg.Provider.BaseURL(r)
	reply.SetJSONContentType(w.Header())
	_, _ = w.Write(openapi.Served(base, s.cfg.Provider.TokenURL(base)))
}
