package sandbox

import "net/http"

// withHTTPSOnly refuses plain HTTP when the sandbox serves --tls. The
// request has already been journaled (with "tls": false), so the
// conformance report's https-only check can name it.
func (s *Server) withHTTPSOnly(next http.Handler) http.Handler {
	if !s.cfg.HTTPSOnly {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil {
			next.ServeHTTP(w, r)
			return
		}
		s.refuseRequest(w, r, "this sandbox serves HTTPS only (--tls), as the real service does; use https://"+r.Host+r.URL.Path)
	})
}
