package sandbox

import (
	"crypto/subtle"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi"
)

// adminRoutes registers the admin API under /__sandbox/: scenarios, the
// scenario library, the clock, reset, record statuses and the journal.
func (s *Server) adminRoutes(r *mux.Router) {
	admin := func(h http.HandlerFunc) http.Handler { return s.adminOnly(h) }
	s.handle(r, "/__sandbox/scenarios", methods{
		http.MethodGet:    admin(s.listRules),
		http.MethodPost:   admin(s.addRule),
		http.MethodDelete: admin(s.clearRules),
	})
	s.handle(r, "/__sandbox/scenarios/{id}", methods{
		http.MethodGet:    admin(s.getRule),
		http.MethodDelete: admin(s.deleteRule),
	})
	s.handle(r, "/__sandbox/library", methods{http.MethodGet: admin(s.listLibrary)})
	s.handle(r, "/__sandbox/library/{name}", methods{
		http.MethodGet:    admin(s.getScenario),
		http.MethodPost:   admin(s.activateScenario),
		http.MethodDelete: admin(s.deactivateScenario),
	})
	s.handle(r, "/__sandbox/clock", methods{
		http.MethodGet:  admin(s.getClock),
		http.MethodPost: admin(s.moveClock),
	})
	s.handle(r, "/__sandbox/reset", methods{http.MethodPost: admin(s.reset)})
	s.handle(r, "/__sandbox/referrals/{trial_id}/{outcomes_id}/status", methods{http.MethodPost: admin(s.moveReferralStatus)})
	s.handle(r, "/__sandbox/qualified/{external_source_id}/status", methods{http.MethodPost: admin(s.moveQualifiedStatus)})
	s.handle(r, "/__sandbox/requests", methods{
		http.MethodGet:    admin(s.listRequests),
		http.MethodDelete: admin(s.clearRequests),
	})
	s.handle(r, "/__sandbox/report", methods{http.MethodGet: admin(s.serveReport)})
	s.handle(r, openapi.AdminPath, methods{http.MethodGet: http.HandlerFunc(s.serveAdminOpenAPI)})
	s.consoleRoutes(r) // QA console (/__sandbox/ui/) and its data (/__sandbox/data/...)
}

// adminOnly requires the admin token when one is configured (--admin-token).
// Without one the admin API is open, as befits a sandbox on localhost.
func (s *Server) adminOnly(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.AdminToken != "" {
			got := bearerToken(r)
			if subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.AdminToken)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="referrals-sandbox admin"`)
				s.problem(w, r, newProblem(http.StatusUnauthorized, "the admin API needs the admin token (--admin-token) as a bearer token"))
				return
			}
		}
		w.Header().Set("Cache-Control", "no-store")
		h(w, r)
	})
}

// decodeAdmin decodes an admin request body; an empty body is allowed and
// leaves into as it is.
func decodeAdmin(r *http.Request, into any) error {
	if r.ContentLength == 0 && r.Header.Get("Content-Type") == "" {
		return nil
	}
	return decodeAdminBody(r, into)
}

// decodeAdminBody decodes an admin request body strictly: unlike the API,
// which mirrors the real service's tolerance, the admin API refuses unknown
// fields, because a misspelt rule field (probabilty) would silently make a
// rule fire every time.
func decodeAdminBody(r *http.Request, into any) error {
	unknown, err := decodeJSON(r, maxBodyBytes, into)
	if err != nil {
		return err
	}
	if len(unknown) > 0 {
		errs := make([]FieldError, 0, len(unknown))
		for _, f := range unknown {
			errs = append(errs, FieldError{Field: f, Message: "unknown field"})
		}
		return &requestError{Problem: validationProblem(errs)}
	}
	return nil
}
