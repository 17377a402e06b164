package sandbox

import (
	"net/http"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/exchange"
)

// caPath serves the CA certificate clients trust.
const caPath = "/__sandbox/ca.pem"

// withHTTPSOnly refuses plain HTTP when the sandbox serves --tls, except
// for the CA certificate. The request has already been journaled (with "tls": false), so the
// conformance report's https-only check can name it.
func (s *Server) withHTTPSOnly(next exchange.HandlerFunc) exchange.HandlerFunc {
	if !s.cfg.HTTPSOnly {
		return next
	}
	return func(w http.ResponseWriter, r *http.Request, c exchange.Caller) exchange.Outcome {
		// The CA certificate is public, and a client needs it before it
		// can speak HTTPS to this sandbox at all.
		if r.TLS != nil || r.URL.Path == caPath {
			return next(w, r, c)
		}
		s.reply.Refuse(w, r, "this sandbox serves HTTPS only (--tls), as the real service does; use https://"+r.Host+r.URL.Path)
		return exchange.Outcome{}
	}
}
