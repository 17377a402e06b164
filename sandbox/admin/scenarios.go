package admin

import (
	"errors"
	"net/http"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/request"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

func (a *API) listRules(w http.ResponseWriter, r *http.Request) {
	rules, err := a.backend.Rules.Rules(r.Context())
	if err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	active, err := a.backend.Rules.Active(r.Context())
	if err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	on, ended := splitEnded(active)
	reply.JSON(w, http.StatusOK, map[string]any{"rules": rules, "active": on, "ended": ended})
}

// splitEnded parts activations into those still in effect and those whose
// rules can no longer fire: an incident that is over leaves "active" but
// stays visible (and can still be deactivated) until someone clears it.
func splitEnded(acts []scenarios.Activation) (on, ended []scenarios.Activation) {
	on, ended = []scenarios.Activation{}, []scenarios.Activation{}
	for _, a := range acts {
		if a.Ended {
			ended = append(ended, a)
		} else {
			on = append(on, a)
		}
	}
	return on, ended
}

func (a *API) addRule(w http.ResponseWriter, r *http.Request) {
	var rule scenarios.Rule
	if err := a.decodeAdminBody(r, &rule); err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	added, err := a.backend.Rules.Add(r.Context(), rule)
	if errors.Is(err, scenarios.ErrUnavailable) {
		a.reply.Fail(w, r, err)
		return
	}
	if err != nil {
		a.reply.Problem(w, r, ruleProblem(err))
		return
	}
	w.Header().Set("Location", "/__sandbox/scenarios/"+added.ID)
	reply.JSON(w, http.StatusCreated, added)
}

// ruleProblem turns a rule's validation error into a 422 naming the field,
// or a 409 for an id already in use.
func ruleProblem(err error) reply.Problem {
	if errors.Is(err, scenarios.ErrDuplicateID) {
		return reply.New(http.StatusConflict, err.Error())
	}
	if errors.Is(err, scenarios.ErrTooManyRules) {
		return reply.New(http.StatusUnprocessableEntity, err.Error())
	}
	var fe *scenarios.FieldError
	if errors.As(err, &fe) {
		return reply.Validation([]reply.FieldError{{Field: fe.Field, Message: fe.Message}})
	}
	return reply.New(http.StatusUnprocessableEntity, err.Error())
}

func (a *API) clearRules(w http.ResponseWriter, r *http.Request) {
	if err := a.backend.Rules.Clear(r.Context()); err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *API) getRule(w http.ResponseWriter, r *http.Request) {
	status, err := a.backend.Rules.Get(r.Context(), request.PathVars(r)["id"])
	if errors.Is(err, scenarios.ErrNotFound) {
		a.reply.Problem(w, r, reply.New(http.StatusNotFound, "no active rule with that id (a rule whose times ran out is retired)"))
		return
	}
	if err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	reply.JSON(w, http.StatusOK, status)
}

func (a *API) deleteRule(w http.ResponseWriter, r *http.Request) {
	err := a.backend.Rules.Remove(r.Context(), request.PathVars(r)["id"])
	if errors.Is(err, scenarios.ErrNotFound) {
		a.reply.Problem(w, r, reply.New(http.StatusNotFound, "no active rule with that id"))
		return
	}
	if err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *API) listLibrary(w http.ResponseWriter, r *http.Request) {
	active, err := a.backend.Rules.Active(r.Context())
	if err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	all, err := a.backend.Library.Scenarios(r.Context())
	if err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	on, ended := splitEnded(active)
	saved := []string{}
	for _, sc := range all {
		if sc.Saved() {
			saved = append(saved, sc.Name)
		}
	}
	reply.JSON(w, http.StatusOK, map[string]any{"scenarios": all, "active": on, "ended": ended, "saved": saved})
}

func (a *API) getScenario(w http.ResponseWriter, r *http.Request) {
	name := request.PathVars(r)["name"]
	sc, ok, err := a.backend.Library.Get(r.Context(), name)
	switch {
	case err != nil:
		a.reply.Fail(w, r, err)
	case !ok:
		a.unknownScenario(w, r, name)
	default:
		reply.JSON(w, http.StatusOK, sc)
	}
}

// activation is the optional body of POST /__sandbox/library/{name}.
type activation struct {
	ClientID string `json:"clientId"`
}

func (a *API) activateScenario(w http.ResponseWriter, r *http.Request) {
	var body activation
	if err := a.decodeAdminBody(r, &body); err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	if err := scenarios.ValidateClientID(body.ClientID); err != nil {
		a.reply.Problem(w, r, ruleProblem(err))
		return
	}
	name := request.PathVars(r)["name"]
	rules, err := a.backend.Rules.Activate(r.Context(), name, body.ClientID)
	if errors.Is(err, scenarios.ErrUnknownScenario) {
		a.unknownScenario(w, r, name)
		return
	}
	if errors.Is(err, scenarios.ErrTooManyRules) {
		a.reply.Problem(w, r, ruleProblem(err))
		return
	}
	if err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	reply.JSON(w, http.StatusCreated, map[string]any{"scenario": name, "clientId": body.ClientID, "rules": rules})
}

// deactivateScenario removes one activation: ?clientId= names the client it
// was bound to; without it every activation of the scenario goes.
func (a *API) deactivateScenario(w http.ResponseWriter, r *http.Request) {
	name := request.PathVars(r)["name"]
	if _, ok, err := a.backend.Library.Get(r.Context(), name); err != nil || !ok {
		if err != nil {
			a.reply.Fail(w, r, err)
		} else {
			a.unknownScenario(w, r, name)
		}
		return
	}
	err := a.backend.Rules.Deactivate(r.Context(), name, r.URL.Query().Get("clientId"))
	if errors.Is(err, scenarios.ErrNotFound) {
		a.reply.Problem(w, r, reply.New(http.StatusNotFound, "scenario "+name+" is not active"+forClient(r.URL.Query().Get("clientId"))))
		return
	}
	if err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func forClient(id string) string {
	if id == "" {
		return ""
	}
	return " for client " + id
}

// unknownScenario answers a name the library does not hold: 404 listing
// the known ones, or 503 when the saved ones cannot be read.
func (a *API) unknownScenario(w http.ResponseWriter, r *http.Request, name string) {
	names, err := a.backend.Library.Names(r.Context())
	if err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	a.reply.Problem(w, r, reply.New(http.StatusNotFound, "no scenario named "+name+"; known: "+strings.Join(names, ", ")))
}
