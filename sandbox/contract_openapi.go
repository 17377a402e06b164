package sandbox

import (
	"net/http"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
)

// serveContract serves the --contract document in place of the built-in
// one, with the sandbox's additions, its servers naming the address the
// request came in on and its OAuth2 tokenUrl the sandbox's token endpoint.
// The built-in document supplied as a contract is served as the default
// run serves it.
func (s *Server) serveContract(w http.ResponseWriter, r *http.Request) {
	base := s.cfg.Provider.BaseURL(r)
	reply.SetJSONContentType(w.Header())
	_, _ = w.Write(s.cfg.Contract.Served(base, s.cfg.Provider.TokenURL(base)))
}
