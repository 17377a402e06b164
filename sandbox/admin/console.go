package admin

import (
	"net/http"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/internal/console"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/request"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// consolePath is where the QA console is served.
const consolePath = "/__sandbox/ui/"

// consoleRoutes registers the QA console and the admin data endpoints it
// reads: trials, clients, and each partner's referrals and qualified
// referrals with the statuses they may move to.
//
// The console's files carry no data, so they are served without the admin
// token (a browser cannot send a bearer token when it navigates); the page
// asks for the token when the admin API answers 401.
func (a *API) consoleRoutes(handle func(string, map[string]http.Handler), admin func(http.HandlerFunc) http.Handler) {
	type methods = map[string]http.Handler
	handle("/__sandbox/data/trials", methods{http.MethodGet: admin(a.dataTrials)})
	handle("/__sandbox/data/clients", methods{http.MethodGet: admin(a.dataClients)})
	handle("/__sandbox/data/referrals", methods{http.MethodGet: admin(a.dataReferrals)})
	handle("/__sandbox/data/qualified", methods{http.MethodGet: admin(a.dataQualified)})

	ui := http.StripPrefix("/__sandbox/ui", console.Handler())
	handle("/__sandbox/ui", methods{http.MethodGet: http.RedirectHandler(consolePath, http.StatusMovedPermanently)})
	handle(consolePath, methods{http.MethodGet: ui})
	handle(consolePath+"{asset}", methods{http.MethodGet: ui})
}

// clientView is a client registration as the console shows it: never the
// secret.
type clientView struct {
	ClientID    string   `json:"clientId"`
	Roles       []string `json:"roles"`
	Resources   []string `json:"resources"`
	Environment string   `json:"environment"`
	Description string   `json:"description,omitempty"`
}

// referralRow is a referral with the statuses the admin API may move it to,
// so the console offers only moves the processing order allows.
type referralRow struct {
	adminReferral
	NextStatuses []string `json:"nextStatuses"`
}

// qualifiedRow is referralRow for qualified referrals; the audit trail is
// part of the record.
type qualifiedRow struct {
	adminQualified
	NextStatuses []string `json:"nextStatuses"`
}

// dataTrials answers GET /__sandbox/data/trials: every trial of the
// fixtures, including those the API does not list (inactive or not
// accepting referrals), with their switches.
func (a *API) dataTrials(w http.ResponseWriter, _ *http.Request) {
	trials := a.cfg.Trials
	if trials == nil {
		trials = []referrals.Trial{}
	}
	reply.JSON(w, http.StatusOK, map[string]any{"trials": trials})
}

// dataClients answers GET /__sandbox/data/clients: the clients that exist in
// this environment, with roles and environment.
func (a *API) dataClients(w http.ResponseWriter, _ *http.Request) {
	clients := []clientView{}
	for _, c := range a.cfg.Provider.Clients() {
		clients = append(clients, clientView{
			ClientID:    c.ClientID,
			Roles:       orEmpty(c.Roles),
			Resources:   orEmpty(c.Resources),
			Environment: c.EnvironmentOrDefault(),
			Description: c.Description,
		})
	}
	reply.JSON(w, http.StatusOK, map[string]any{"clients": clients})
}

// dataReferrals answers GET /__sandbox/data/referrals?clientId=&cursor=&limit=:
// one page of a partner's referrals, newest first, as the partner would list
// them.
func (a *API) dataReferrals(w http.ResponseWriter, r *http.Request) {
	clientID, page, ok := a.dataQuery(w, r)
	if !ok {
		return
	}
	items, next, err := a.backend.Records.ListReferrals(request.StoreContext(r), clientID, page)
	if err != nil {
		a.reply.Fail(w, r, request.ListError(err))
		return
	}
	rows := make([]referralRow, 0, len(items))
	for _, ref := range items {
		view, err := a.adminReferral(ref)
		if err != nil {
			a.reply.Fail(w, r, err)
			return
		}
		rows = append(rows, referralRow{adminReferral: view, NextStatuses: orEmpty(referrals.NextStatuses(ref.Status))})
	}
	reply.JSON(w, http.StatusOK, map[string]any{"referrals": rows, "nextCursor": request.NextCursor(next)})
}

// dataQualified answers GET /__sandbox/data/qualified?clientId=&cursor=&limit=,
// like dataReferrals.
//
// The listing passes no viewed entry to the store: the audit trail records
// what partners did with a record (and the service's processing), and the
// conformance report and partners' tests read it as such. A QA engineer
// browsing the console is neither, so looking must not change the trail.
func (a *API) dataQualified(w http.ResponseWriter, r *http.Request) {
	clientID, page, ok := a.dataQuery(w, r)
	if !ok {
		return
	}
	items, next, err := a.backend.Records.ListQualified(request.StoreContext(r), clientID, page, nil)
	if err == nil {
		items, err = a.lifecycle.SettleAll(request.StoreContext(r), items, reply.RequestID(r))
	}
	if err != nil {
		a.reply.Fail(w, r, request.ListError(err))
		return
	}
	rows := make([]qualifiedRow, 0, len(items))
	for _, q := range items {
		view, err := a.adminQualified(q)
		if err != nil {
			a.reply.Fail(w, r, err)
			return
		}
		rows = append(rows, qualifiedRow{adminQualified: view, NextStatuses: orEmpty(referrals.NextStatuses(q.Status))})
	}
	reply.JSON(w, http.StatusOK, map[string]any{"qualifiedReferrals": rows, "nextCursor": request.NextCursor(next)})
}

// dataQuery reads the required ?clientId= (records are stored per partner)
// and the page, answering the problem itself when one is wrong.
func (a *API) dataQuery(w http.ResponseWriter, r *http.Request) (string, store.Page, bool) {
	clientID := r.URL.Query().Get("clientId")
	if clientID == "" {
		a.reply.Fail(w, r, request.BadQuery("clientId", "name the partner whose records to list, e.g. sandbox-partner (see /__sandbox/data/clients)"))
		return "", store.Page{}, false
	}
	page, err := request.Page(r)
	if err != nil {
		a.reply.Fail(w, r, err)
		return "", store.Page{}, false
	}
	return clientID, page, true
}

// orEmpty returns s, or an empty slice for nil, so JSON shows [] not null.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
