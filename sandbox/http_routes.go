package sandbox

import (
	"maps"
	"net/http"
	"sort"
	"strings"

	"github.com/gorilla/mux"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
)

// methods maps each HTTP method a path answers to its handler.
type methods map[string]http.Handler

// handle registers path with its methods; other methods get 405 with Allow.
func (s *Server) handle(r *mux.Router, path string, m methods) {
	m = maps.Clone(m) // two paths may share one methods value
	allowed := make([]string, 0, len(m)+1)
	for method := range m {
		allowed = append(allowed, method)
	}
	if _, ok := m[http.MethodGet]; ok {
		m[http.MethodHead] = m[http.MethodGet]
		allowed = append(allowed, http.MethodHead)
	}
	sort.Strings(allowed)
	allow := strings.Join(allowed, ", ")
	r.Handle(path, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h, ok := m[req.Method]
		if !ok {
			w.Header().Set("Allow", allow)
			s.reply.Problem(w, req, reply.New(http.StatusMethodNotAllowed, "this path answers "+allow))
			return
		}
		h.ServeHTTP(w, req)
	}))
}

// notFound answers unknown paths with a problem body.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	escaped := r.URL.EscapedPath()
	s.reply.Problem(w, r, reply.New(http.StatusNotFound, "no such path: "+escaped+uncleanPathHint(escaped)))
}
