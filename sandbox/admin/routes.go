package admin

import (
	"net/http"

	"github.com/gorilla/mux"
)

// Routes registers the admin API under /__sandbox/ on r: scenarios, the
// scenario library, the clock, reset, clients, record statuses, the
// journal, the report, the personas and the QA console. The metrics and
// the admin OpenAPI document, served under /__sandbox/ too, are the
// root's to register (the metrics with Only; the document is package
// documents').
func (a *API) Routes(r *mux.Router) {
	type methods = map[string]http.Handler
	handle := func(path string, m methods) { a.cfg.Handle(r, path, m) }
	admin := func(h http.HandlerFunc) http.Handler { return a.Only(h) }
	handle("/__sandbox/scenarios", methods{
		http.MethodGet:    admin(a.listRules),
		http.MethodPost:   admin(a.addRule),
		http.MethodDelete: admin(a.noParams(a.clearRules)),
	})
	handle("/__sandbox/scenarios/{id}", methods{
		http.MethodGet:    admin(a.getRule),
		http.MethodDelete: admin(a.noParams(a.deleteRule)),
	})
	handle("/__sandbox/library", methods{http.MethodGet: admin(a.listLibrary), http.MethodPost: admin(a.saveScenario)})
	handle("/__sandbox/library/{name}", methods{
		http.MethodGet:    admin(a.getScenario),
		http.MethodPost:   admin(a.activateScenario),
		http.MethodDelete: admin(a.noParams(a.deactivateScenario)),
	})
	handle("/__sandbox/library/saved/{name}", methods{http.MethodDelete: admin(a.noParams(a.deleteSavedScenario))})
	handle("/__sandbox/clock", methods{
		http.MethodGet:  admin(a.getClock),
		http.MethodPost: admin(a.moveClock),
	})
	handle("/__sandbox/personas", methods{http.MethodGet: admin(a.listPersonas)})
	handle("/__sandbox/reset", methods{http.MethodPost: admin(a.reset)})
	handle("/__sandbox/clients", methods{
		http.MethodGet:  admin(a.listClients),
		http.MethodPost: admin(a.createClient),
	})
	handle("/__sandbox/clients/{id}", methods{
		http.MethodGet:    admin(a.getClient),
		http.MethodDelete: admin(a.noParams(a.deleteClient)),
	})
	handle("/__sandbox/clients/{id}/secrets", methods{http.MethodPost: admin(a.addClientSecret)})
	handle("/__sandbox/clients/{id}/secrets/{secretId}", methods{http.MethodDelete: admin(a.noParams(a.deleteClientSecret))})
	handle("/__sandbox/referrals/{trial_id}/{outcomes_id}/status", methods{http.MethodPost: admin(a.moveReferralStatus)})
	handle("/__sandbox/qualified/{external_source_id}/status", methods{http.MethodPost: admin(a.moveQualifiedStatus)})
	handle("/__sandbox/requests", methods{
		http.MethodGet:    admin(a.listRequests),
		http.MethodDelete: admin(a.noParams(a.clearRequests)),
	})
	handle(HARPath, methods{http.MethodGet: admin(a.serveHAR)})
	handle("/__sandbox/report", methods{http.MethodGet: admin(a.serveReport)})
	a.consoleRoutes(handle, admin) // QA console (/__sandbox/ui/) and its data (/__sandbox/data/...)
}
