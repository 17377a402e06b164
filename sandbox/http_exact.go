package sandbox

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/gorilla/mux"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redact"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/exchange"
)

// exactRoute is a route without variables, served without the router.
type exactRoute struct {
	operation string // the route's template, the metrics' operation label
	handler   exchange.Handler
}

// exactRoutes finds the routes of r whose path has no variables and that
// r itself would choose for that exact path. Serving them from a map
// spares gorilla/mux's matching and the two contexts and request copies
// it attaches per request (route and variables), which no such route's
// handler reads: 8 of an authenticated GET's allocations.
func exactRoutes(r *mux.Router) map[string]exactRoute {
	exact := map[string]exactRoute{}
	_ = r.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if err != nil || strings.ContainsAny(tpl, "{}") || route.GetHandler() == nil {
			return nil
		}
		var m mux.RouteMatch
		req := &http.Request{Method: http.MethodGet, URL: &url.URL{Path: tpl}, Header: http.Header{}}
		if r.Match(req, &m) && m.Route == route && len(m.Vars) == 0 {
			exact[tpl] = exactRoute{operation: tpl, handler: answerer(route.GetHandler())}
		}
		return nil
	})
	return exact
}

// serveRoutes answers r from its exact route when it has one, else from
// the route the router matches, and reports the route's template as the
// operation with what its handler reported.
func (s *Server) serveRoutes(w http.ResponseWriter, r *http.Request, c exchange.Caller) exchange.Outcome {
	if e, ok := s.exact[r.URL.EscapedPath()]; ok {
		out := e.handler.Answer(w, r, c)
		out.Operation = e.operation
		return out
	}
	var m mux.RouteMatch
	if !s.router.Match(r, &m) || m.Route == nil || m.MatchErr != nil {
		s.notFound(w, r)
		return exchange.Outcome{}
	}
	// The router's ServeHTTP attaches the variables the same way; it is
	// bypassed only so that the route's handler can report what it did.
	r = mux.SetURLVars(r, m.Vars)
	var out exchange.Outcome
	if h, ok := m.Route.GetHandler().(exchange.Handler); ok {
		out = h.Answer(w, r, c)
	} else {
		m.Route.GetHandler().ServeHTTP(w, r) // the identity provider's: it reports nothing
	}
	if tpl, err := m.Route.GetPathTemplate(); err == nil {
		out.Operation = tpl
	}
	return out
}

// answerer is h as an exchange.Handler: the sandbox's own routes are
// already one; the identity provider's report nothing.
func answerer(h http.Handler) exchange.Handler {
	if a, ok := h.(exchange.Handler); ok {
		return a
	}
	return exchange.Plain{Handler: h}
}

// cleanPaths returns the paths of the exact routes in which x finds no
// credential. The redactor never changes after it is made, so the
// journal can skip redacting such a path: the answer would be the path
// itself (see journalPath).
func cleanPaths(exact map[string]exactRoute, x *redact.Redactor) map[string]bool {
	clean := make(map[string]bool, len(exact))
	for path := range exact {
		if x.Path(path) == path {
			clean[path] = true
		}
	}
	return clean
}

// journalPath is path as the journal and problem bodies show it: with
// every segment that holds a credential redacted. The sandbox's own route
// paths are looked up instead of scanned segment by segment.
func (s *Server) journalPath(path string) string {
	if s.cleanPaths[path] {
		return path
	}
	return s.redactor.Path(path)
}
