package sandbox

import (
	"bytes"
	"net/http"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi"
)

// serveContract serves the --contract document in place of the built-in
// one, its servers naming the address the request came in on. The built-in
// document supplied as a contract is served as the default run serves it.
func (s *Server) serveContract(w http.ResponseWriter, r *http.Request) {
	base := s.cfg.Provider.BaseURL(r)
	doc := s.cfg.Contract.Document()
	var body []byte
	if bytes.Equal(doc, openapi.Document()) {
		body = openapi.Served(base, s.cfg.Provider.TokenURL(base))
	} else {
		var err error
		if body, err = s.cfg.Contract.Served(base); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	setJSONContentType(w.Header())
	_, _ = w.Write(body)
}
