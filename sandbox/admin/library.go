package admin

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/request"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// savedScenario is the body of POST /__sandbox/library: a scenario as GET
// /__sandbox/library/{name} shows it (to move one from another sandbox),
// or a name and a journal window to build its timeline from.
type savedScenario struct {
	Name        string           `json:"name"`
	Description string           `json:"description"`
	Rules       []scenarios.Rule `json:"rules"`
	FromJournal *journalWindow   `json:"fromJournal"`
}

// deleteSavedScenario answers DELETE /__sandbox/library/saved/{name}: it
// deactivates the scenario everywhere, then removes it from the saved
// ones. Deactivating first means no activation is left behind whose
// scenario no longer exists (and so could not be switched off by name).
func (a *API) deleteSavedScenario(w http.ResponseWriter, r *http.Request) {
	name := request.PathVars(r)["name"]
	sc, ok, err := a.backend.Library.Get(r.Context(), name)
	switch {
	case err != nil:
		a.reply.Fail(w, r, err)
		return
	case !ok:
		a.reply.Problem(w, r, reply.New(http.StatusNotFound, "no saved scenario named "+name))
		return
	case !sc.Saved():
		a.reply.Problem(w, r, reply.New(http.StatusConflict, "scenario "+name+" comes with the sandbox, not from POST /__sandbox/library: "+scenarios.ErrNotSaved.Error()))
		return
	}
	if err := a.backend.Rules.Deactivate(r.Context(), name, ""); err != nil && !errors.Is(err, scenarios.ErrNotFound) {
		a.reply.Fail(w, r, err)
		return
	}
	err = a.backend.Library.Delete(r.Context(), name)
	switch {
	case errors.Is(err, scenarios.ErrNotFound):
		// Another caller deleted it between the read and now.
		a.reply.Problem(w, r, reply.New(http.StatusNotFound, "no saved scenario named "+name))
	case err != nil:
		a.reply.Fail(w, r, err)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// journalWindow selects the journaled answers a timeline replays.
type journalWindow struct {
	Since    string `json:"since"`
	Until    string `json:"until"`
	ClientID string `json:"clientId"`
}

// saveScenario answers POST /__sandbox/library: it adds a scenario to this
// sandbox's library (in shared mode, to the one every replica reads), 201
// with the scenario and its Location.
func (a *API) saveScenario(w http.ResponseWriter, r *http.Request) {
	var body savedScenario
	if err := a.decodeAdminBody(r, &body); err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	sc := scenarios.Scenario{Name: body.Name, Description: body.Description, Rules: body.Rules}
	if body.FromJournal != nil {
		if body.Rules != nil {
			a.reply.Problem(w, r, reply.Validation([]reply.FieldError{{Field: "rules", Message: "give rules or fromJournal, not both"}}))
			return
		}
		var err error
		sc, err = a.replayJournal(r, body)
		if err != nil {
			a.saveFailed(w, r, err)
			return
		}
	}
	saved, err := a.backend.Library.Save(r.Context(), sc)
	if err != nil {
		a.saveFailed(w, r, err)
		return
	}
	w.Header().Set("Location", "/__sandbox/library/"+sc.Name)
	reply.JSON(w, http.StatusCreated, saved)
}

// saveFailed answers a scenario that could not be saved: 409 for a taken
// name, 422 naming the field otherwise, and a failure of the journal or
// of the saved scenarios' store (Redis) as the 503 it is.
func (a *API) saveFailed(w http.ResponseWriter, r *http.Request, err error) {
	var fe *scenarios.FieldError
	switch {
	case errors.Is(err, scenarios.ErrScenarioExists):
		a.reply.Problem(w, r, reply.New(http.StatusConflict, err.Error()+"; choose another name"))
	case errors.Is(err, scenarios.ErrLibraryFull):
		a.reply.Problem(w, r, reply.New(http.StatusUnprocessableEntity, err.Error()))
	case errors.As(err, &fe):
		a.reply.Problem(w, r, reply.Validation([]reply.FieldError{{Field: fe.Field, Message: fe.Message}}))
	default:
		a.reply.Fail(w, r, err)
	}
}

// replayJournal builds the timeline that replays the answers the journal
// holds for body's window.
func (a *API) replayJournal(r *http.Request, body savedScenario) (scenarios.Scenario, error) {
	win := body.FromJournal
	since, err1 := time.Parse(time.RFC3339Nano, win.Since)
	until, err2 := time.Parse(time.RFC3339Nano, win.Until)
	switch {
	case err1 != nil:
		return scenarios.Scenario{}, &scenarios.FieldError{Field: "fromJournal.since", Message: "must be an RFC 3339 time such as 2026-11-21T14:00:00Z"}
	case err2 != nil:
		return scenarios.Scenario{}, &scenarios.FieldError{Field: "fromJournal.until", Message: "must be an RFC 3339 time such as 2026-11-21T14:30:00Z"}
	case !until.After(since):
		return scenarios.Scenario{}, &scenarios.FieldError{Field: "fromJournal.until", Message: "must be after since"}
	case until.Sub(since) > scenarios.MaxPhaseDuration:
		return scenarios.Scenario{}, &scenarios.FieldError{Field: "fromJournal.until", Message: fmt.Sprintf("the window may last at most %s", scenarios.MaxPhaseDuration)}
	}
	entries, err := a.backend.Journal.Find(r.Context(), journal.Filter{ClientID: win.ClientID, Since: since})
	if err != nil {
		return scenarios.Scenario{}, err // the journal failed: never an empty window
	}
	answers := make([]scenarios.Answer, 0, len(entries))
	for _, e := range entries {
		at, err := time.Parse(time.RFC3339Nano, e.At)
		if err != nil {
			continue // an entry without a time cannot be placed in a timeline
		}
		// What slowed an answer on purpose: a rule's delay, or the real
		// service's own time behind the recording proxy. The sandbox's
		// own time (a loaded host, Redis round trips) is not replayed.
		slowed := e.DelayMs
		if e.Upstream != nil {
			slowed = e.DurationMs
		}
		answers = append(answers, scenarios.Answer{
			At: at, Endpoint: scenarios.Endpoint(e.Endpoint), Status: e.Status, RetryAfterSeconds: e.RetryAfterSeconds,
			Slowed: time.Duration(slowed * float64(time.Millisecond)), Fault: scenarios.Fault(e.Fault),
		})
	}
	description := body.Description
	if description == "" {
		who := "every client"
		if win.ClientID != "" {
			who = win.ClientID
		}
		description = fmt.Sprintf("Replays the answers %s got from %s to %s (%d journaled requests), with their timing.",
			who, since.UTC().Format(referrals.TimestampLayout), until.UTC().Format(referrals.TimestampLayout), len(answers))
	}
	return scenarios.ReplayTimeline(body.Name, description, answers, since, until)
}
