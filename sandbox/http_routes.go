package sandbox

import (
	"maps"
	"net/http"
	"sort"
	"strings"

	"github.com/gorilla/mux"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/exchange"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/request"
)

// methods maps each HTTP method a path answers to its handler, for
// handlers that report nothing beyond their answer.
type methods map[string]http.Handler

// apiMethods maps each HTTP method an API path answers to its operation,
// which reports what it did (the token it accepted, what was submitted).
type apiMethods map[string]exchange.Handler

// handle registers path with its methods; other methods get 405 with Allow.
func (s *Server) handle(r *mux.Router, path string, m methods) {
	answers := make(map[string]exchange.Handler, len(m))
	for method, h := range m {
		answers[method] = exchange.Plain{Handler: h}
	}
	s.handleAPI(r, path, answers)
}

// handleAPI registers path with operations that report what they did;
// other methods get 405 with Allow.
func (s *Server) handleAPI(r *mux.Router, path string, m apiMethods) {
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
	r.Handle(path, &pathRoute{reply: s.reply, methods: m, allow: strings.Join(allowed, ", ")})
}

// pathRoute answers one path: each method with its handler, any other
// with 405 and Allow.
type pathRoute struct {
	reply   *reply.Replier
	methods apiMethods
	allow   string
}

// Answer answers r with its method's handler and reports what it did.
func (p *pathRoute) Answer(w http.ResponseWriter, r *http.Request, c exchange.Caller) exchange.Outcome {
	h, ok := p.methods[r.Method]
	if !ok {
		w.Header().Set("Allow", p.allow)
		p.reply.Problem(w, r, reply.New(http.StatusMethodNotAllowed, "this path answers "+p.allow))
		return exchange.Outcome{}
	}
	return h.Answer(w, r, c)
}

// ServeHTTP answers for a caller nobody identified: the router's own
// entry, which serveRoutes never takes (an API operation then verifies
// the token itself).
func (p *pathRoute) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.Answer(w, r, exchange.Caller{})
}

// notFound answers unknown paths with a problem body.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	escaped := r.URL.EscapedPath()
	s.reply.Problem(w, r, reply.New(http.StatusNotFound, "no such path: "+escaped+request.UncleanPathHint(escaped)))
}
