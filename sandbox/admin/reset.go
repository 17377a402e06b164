package admin

import (
	"fmt"
	"net/http"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/backend"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/request"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// resetRequest is the optional body of POST /__sandbox/reset.
type resetRequest struct {
	ClientID *string `json:"clientId"`
}

// reset puts the sandbox back as it started: store back to the fixtures,
// runtime clients gone, rules cleared, journal cleared, real time, rate
// limits refilled. With {"clientId": ...} it does so for that client alone:
// its records back to its fixtures (none for a runtime client), its rules,
// scenario bindings, journal entries, rate limit and clock; nothing of any
// other client changes.
func (a *API) reset(w http.ResponseWriter, r *http.Request) {
	var req resetRequest
	if err := a.decodeAdminBody(r, &req); err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	if errs := emptyGiven(map[string]*string{"clientId": req.ClientID}); len(errs) > 0 {
		a.reply.Problem(w, r, reply.Validation(errs))
		return
	}
	if req.ClientID != nil {
		a.resetClient(w, r, *req.ClientID)
		return
	}
	if err := store.ResetFrom(request.StoreContext(r), a.backend.Records, a.cfg.Records); err != nil {
		a.reply.Fail(w, r, a.backend.Failure("reset store", err))
		return
	}
	err := a.cfg.Provider.ResetClients(r.Context())
	a.backend.Settle()
	if err != nil {
		a.reply.Fail(w, r, fmt.Errorf("reset runtime clients: %w", err))
		return
	}
	if err := a.backend.Rules.Clear(r.Context()); err != nil { // rules and activations
		a.reply.Fail(w, r, fmt.Errorf("clear the rules: %w", err))
		return
	}
	if err := a.backend.Journal.Clear(r.Context()); err != nil {
		a.reply.Fail(w, r, fmt.Errorf("clear the journal: %w", err))
		return
	}
	if err := a.backend.Clocks.ResetAll(r.Context()); err != nil {
		a.reply.Fail(w, r, backend.Unavailable("reset the clocks", err))
		return
	}
	a.backend.Settle()
	if err := a.cfg.RateLimits.Reset(r.Context()); err != nil {
		a.reply.Fail(w, r, fmt.Errorf("refill the rate limits: %w", err))
		return
	}
	a.log.Info("sandbox reset")
	reply.JSON(w, http.StatusOK, map[string]string{"status": "reset"})
}

func (a *API) resetClient(w http.ResponseWriter, r *http.Request, clientID string) {
	if !a.clientExists(w, r, clientID) {
		return
	}
	if err := store.ResetClientFrom(request.StoreContext(r), a.backend.Records, clientID, a.cfg.Records); err != nil {
		a.reply.Fail(w, r, a.backend.Failure("reset the records of "+clientID, err))
		return
	}
	if err := a.forgetClientState(r.Context(), clientID); err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	a.log.Info("client reset", "client_id", clientID)
	reply.JSON(w, http.StatusOK, map[string]string{"status": "reset", "clientId": clientID})
}
