package sandbox

import (
	"errors"
	"net/http"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

func (s *Server) listRules(w http.ResponseWriter, r *http.Request) {
	rules, err := s.backend.Rules.Rules(r.Context())
	if err != nil {
		s.reply.Fail(w, r, err)
		return
	}
	active, err := s.backend.Rules.Active(r.Context())
	if err != nil {
		s.reply.Fail(w, r, err)
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

func (s *Server) addRule(w http.ResponseWriter, r *http.Request) {
	var rule scenarios.Rule
	if err := decodeAdminBody(r, &rule); err != nil {
		s.reply.Fail(w, r, err)
		return
	}
	added, err := s.backend.Rules.Add(r.Context(), rule)
	if errors.Is(err, scenarios.ErrUnavailable) {
		s.reply.Fail(w, r, err)
		return
	}
	if err != nil {
		s.reply.Problem(w, r, ruleProblem(err))
		return
	}
	w.Header().Set("Location", "/__sandbox/scenarios/"+added.ID)
	reply.JSON(w, http.StatusCreated, added)
}

// ruleProblem turns a rule's validation error into a 422 naming the field,
// or a 409 for an id already in use.
func ruleProblem(err error) Problem {
	if errors.Is(err, scenarios.ErrDuplicateID) {
		return reply.New(http.StatusConflict, err.Error())
	}
	if errors.Is(err, scenarios.ErrTooManyRules) {
		return reply.New(http.StatusUnprocessableEntity, err.Error())
	}
	var fe *scenarios.FieldError
	if errors.As(err, &fe) {
		return reply.Validation([]FieldError{{Field: fe.Field, Message: fe.Message}})
	}
	return reply.New(http.StatusUnprocessableEntity, err.Error())
}

func (s *Server) clearRules(w http.ResponseWriter, r *http.Request) {
	if err := s.backend.Rules.Clear(r.Context()); err != nil {
		s.reply.Fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) getRule(w http.ResponseWriter, r *http.Request) {
	status, err := s.backend.Rules.Get(r.Context(), pathVars(r)["id"])
	if errors.Is(err, scenarios.ErrNotFound) {
		s.reply.Problem(w, r, reply.New(http.StatusNotFound, "no active rule with that id (a rule whose times ran out is retired)"))
		return
	}
	if err != nil {
		s.reply.Fail(w, r, err)
		return
	}
	reply.JSON(w, http.StatusOK, status)
}

func (s *Server) deleteRule(w http.ResponseWriter, r *http.Request) {
	err := s.backend.Rules.Remove(r.Context(), pathVars(r)["id"])
	if errors.Is(err, scenarios.ErrNotFound) {
		s.reply.Problem(w, r, reply.New(http.StatusNotFound, "no active rule with that id"))
		return
	}
	if err != nil {
		s.reply.Fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) listLibrary(w http.ResponseWriter, r *http.Request) {
	active, err := s.backend.Rules.Active(r.Context())
	if err != nil {
		s.reply.Fail(w, r, err)
		return
	}
	all, err := s.backend.Library.Scenarios(r.Context())
	if err != nil {
		s.reply.Fail(w, r, err)
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

func (s *Server) getScenario(w http.ResponseWriter, r *http.Request) {
	name := pathVars(r)["name"]
	sc, ok, err := s.backend.Library.Get(r.Context(), name)
	switch {
	case err != nil:
		s.reply.Fail(w, r, err)
	case !ok:
		s.unknownScenario(w, r, name)
	default:
		reply.JSON(w, http.StatusOK, sc)
	}
}

// activation is the optional body of POST /__sandbox/library/{name}.
type activation struct {
	ClientID string `json:"clientId"`
}

func (s *Server) activateScenario(w http.ResponseWriter, r *http.Request) {
	var body activation
	if err := decodeAdminBody(r, &body); err != nil {
		s.reply.Fail(w, r, err)
		return
	}
	if err := scenarios.ValidateClientID(body.ClientID); err != nil {
		s.reply.Problem(w, r, ruleProblem(err))
		return
	}
	name := pathVars(r)["name"]
	rules, err := s.backend.Rules.Activate(r.Context(), name, body.ClientID)
	if errors.Is(err, scenarios.ErrUnknownScenario) {
		s.unknownScenario(w, r, name)
		return
	}
	if errors.Is(err, scenarios.ErrTooManyRules) {
		s.reply.Problem(w, r, ruleProblem(err))
		return
	}
	if err != nil {
		s.reply.Fail(w, r, err)
		return
	}
	reply.JSON(w, http.StatusCreated, map[string]any{"scenario": name, "clientId": body.ClientID, "rules": rules})
}

// deactivateScenario removes one activation: ?clientId= names the client it
// was bound to; without it every activation of the scenario goes.
func (s *Server) deactivateScenario(w http.ResponseWriter, r *http.Request) {
	name := pathVars(r)["name"]
	if _, ok, err := s.backend.Library.Get(r.Context(), name); err != nil || !ok {
		if err != nil {
			s.reply.Fail(w, r, err)
		} else {
			s.unknownScenario(w, r, name)
		}
		return
	}
	err := s.backend.Rules.Deactivate(r.Context(), name, r.URL.Query().Get("clientId"))
	if errors.Is(err, scenarios.ErrNotFound) {
		s.reply.Problem(w, r, reply.New(http.StatusNotFound, "scenario "+name+" is not active"+forClient(r.URL.Query().Get("clientId"))))
		return
	}
	if err != nil {
		s.reply.Fail(w, r, err)
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
func (s *Server) unknownScenario(w http.ResponseWriter, r *http.Request, name string) {
	names, err := s.backend.Library.Names(r.Context())
	if err != nil {
		s.reply.Fail(w, r, err)
		return
	}
	s.reply.Problem(w, r, reply.New(http.StatusNotFound, "no scenario named "+name+"; known: "+strings.Join(names, ", ")))
}
