package sandbox

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
)

// adminRoutes registers the admin API under /__sandbox/: scenarios, the
// scenario library, the clock, reset, record statuses and the journal.
func (s *Server) adminRoutes(r *mux.Router) {
	admin := func(h http.HandlerFunc) http.Handler { return s.adminOnly(h) }
	s.handle(r, "/__sandbox/scenarios", methods{
		http.MethodGet:    admin(s.listRules),
		http.MethodPost:   admin(s.addRule),
		http.MethodDelete: admin(s.noParams(s.clearRules)),
	})
	s.handle(r, "/__sandbox/scenarios/{id}", methods{
		http.MethodGet:    admin(s.getRule),
		http.MethodDelete: admin(s.noParams(s.deleteRule)),
	})
	s.handle(r, "/__sandbox/library", methods{http.MethodGet: admin(s.listLibrary), http.MethodPost: admin(s.saveScenario)})
	s.handle(r, "/__sandbox/library/{name}", methods{
		http.MethodGet:    admin(s.getScenario),
		http.MethodPost:   admin(s.activateScenario),
		http.MethodDelete: admin(s.noParams(s.deactivateScenario)),
	})
	s.handle(r, "/__sandbox/library/saved/{name}", methods{http.MethodDelete: admin(s.noParams(s.deleteSavedScenario))})
	s.handle(r, "/__sandbox/clock", methods{
		http.MethodGet:  admin(s.getClock),
		http.MethodPost: admin(s.moveClock),
	})
	s.handle(r, "/__sandbox/personas", methods{http.MethodGet: admin(s.listPersonas)})
	s.handle(r, "/__sandbox/reset", methods{http.MethodPost: admin(s.reset)})
	s.handle(r, "/__sandbox/clients", methods{
		http.MethodGet:  admin(s.listClients),
		http.MethodPost: admin(s.createClient),
	})
	s.handle(r, "/__sandbox/clients/{id}", methods{
		http.MethodGet:    admin(s.getClient),
		http.MethodDelete: admin(s.noParams(s.deleteClient)),
	})
	s.handle(r, "/__sandbox/clients/{id}/secrets", methods{http.MethodPost: admin(s.addClientSecret)})
	s.handle(r, "/__sandbox/clients/{id}/secrets/{secretId}", methods{http.MethodDelete: admin(s.noParams(s.deleteClientSecret))})
	s.handle(r, "/__sandbox/referrals/{trial_id}/{outcomes_id}/status", methods{http.MethodPost: admin(s.moveReferralStatus)})
	s.handle(r, "/__sandbox/qualified/{external_source_id}/status", methods{http.MethodPost: admin(s.moveQualifiedStatus)})
	s.handle(r, "/__sandbox/requests", methods{
		http.MethodGet:    admin(s.listRequests),
		http.MethodDelete: admin(s.noParams(s.clearRequests)),
	})
	s.handle(r, HARPath, methods{http.MethodGet: admin(s.serveHAR)})
	s.handle(r, "/__sandbox/report", methods{http.MethodGet: admin(s.serveReport)})
	s.handle(r, MetricsPath, methods{http.MethodGet: admin(s.serveMetrics)})
	s.handle(r, openapi.AdminPath, methods{http.MethodGet: http.HandlerFunc(s.serveAdminOpenAPI)})
	s.consoleRoutes(r) // QA console (/__sandbox/ui/) and its data (/__sandbox/data/...)
}

// adminOnly requires the admin token when one is configured (--admin-token).
// Without one the admin API is open, as befits a sandbox on localhost, and
// withAdminGuard keeps other sites' pages out. Either way a state-changing
// call with a body must be declared application/json, else 415: a web page
// can send text/plain or a form anywhere without asking, but JSON only
// after a CORS preflight, which the sandbox never grants. A DELETE may come
// without a body (curl -X DELETE; some proxies drop DELETE bodies): a page
// can send a cross-origin DELETE only after that same preflight, so the
// JSON requirement would protect nothing there.
func (s *Server) adminOnly(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.AdminToken != "" {
			if !adminTokenMatches(bearerToken(r), s.cfg.AdminToken) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="referrals-sandbox admin"`)
				s.reply.Problem(w, r, reply.New(http.StatusUnauthorized, "the admin API needs the admin token (--admin-token) as a bearer token"))
				return
			}
		}
		w.Header().Set("Cache-Control", "no-store")
		// The admin API's queries are read as strictly as the API's: a
		// malformed escape, a parameter given twice or given empty is a
		// 400 naming it, never a silently different filter.
		if err := checkAdminQuery(r.URL.RawQuery); err != nil {
			s.reply.Fail(w, r, err)
			return
		}
		if stateChanging(r.Method) && !bodylessDelete(r) {
			if err := checkAdminContentType(r.Header.Get("Content-Type")); err != nil {
				s.reply.Problem(w, r, reply.New(http.StatusUnsupportedMediaType, err.Error()))
				return
			}
		}
		h(w, r)
	})
}

// adminTokenMatches compares the SHA-256 digests of the two tokens in
// constant time: subtle.ConstantTimeCompare returns at once for inputs of
// different lengths, which would let a caller time its way to the token's
// length; digests always have the same length.
func adminTokenMatches(got, want string) bool {
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

// bodylessDelete reports whether r is a DELETE without a body, which
// needs neither a Content-Type nor {} (see adminOnly).
func bodylessDelete(r *http.Request) bool {
	return r.Method == http.MethodDelete && r.ContentLength == 0
}

// noParams wraps a state-changing admin call that takes no parameters: its
// body must still be a JSON object, with no fields ({}), so that no POST
// can be made without a body a web page cannot send (see withAdminGuard).
// A DELETE may have no body at all.
func (s *Server) noParams(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if bodylessDelete(r) {
			h(w, r)
			return
		}
		if err := decodeAdminBody(r, &struct{}{}); err != nil {
			s.reply.Fail(w, r, err)
			return
		}
		h(w, r)
	}
}

// decodeAdminBody decodes an admin request body strictly: unlike the API,
// which mirrors the real service's tolerance, the admin API refuses unknown
// fields, because a misspelt rule field (probabilty) would silently make a
// rule fire every time.
func decodeAdminBody(r *http.Request, into any) error {
	if r.ContentLength == 0 {
		return reply.NewRequestError(http.StatusBadRequest, "the request body is empty; "+adminJSONHint)
	}
	unknown, content, err := decodeSubmission(r, maxBodyBytes, into)
	if err != nil {
		return err
	}
	// null, invalid UTF-8 and NUL are refused as on the API: one rule.
	errs := content
	for _, f := range unknown {
		errs = append(errs, FieldError{Field: f, Message: "unknown field"})
	}
	if len(errs) > 0 {
		return &reply.RequestError{Problem: reply.Validation(errs)}
	}
	return nil
}

// checkAdminQuery refuses an admin query strictQuery refuses, and any
// parameter given empty.
func checkAdminQuery(raw string) error {
	q, err := strictQuery(raw)
	if err != nil {
		return err
	}
	for k, v := range q {
		if v == "" {
			return badQuery(k, "is empty; leave it out instead")
		}
	}
	return nil
}
