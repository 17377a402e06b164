package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/backend"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
)

// clockView is the body of GET /__sandbox/clock: the sandbox-wide clock, or
// with ?clientId= one client's.
type clockView struct {
	Now    string `json:"now"`
	Offset string `json:"offset"`
	Real   bool   `json:"real"`
	// ClientID names the client whose clock this is; absent for the
	// sandbox-wide clock.
	ClientID string `json:"clientId,omitempty"`
	// OwnClock says the client's time was moved apart from the sandbox's.
	OwnClock bool `json:"ownClock,omitempty"`
}

// clockMove is the body of POST /__sandbox/clock: exactly one of advance (a
// Go duration, e.g. 3600s or 1h) or set (RFC 3339), or reset: true; with
// clientId, for that client alone. Pointers tell a field given empty
// ("set": "") from one left out: an empty value is a mistake to report, not
// a move to drop silently.
type clockMove struct {
	ClientID *string `json:"clientId"`
	Advance  *string `json:"advance"`
	Set      *string `json:"set"`
	Reset    bool    `json:"reset"`
}

func (a *API) clockView(clientID string) clockView {
	global := a.clocks.Global().Offset()
	v := clockView{Now: a.clocks.Now(clientID).Format(referrals.TimestampLayout), Offset: global.String(), Real: global == 0}
	if clientID != "" {
		own, ok := a.clocks.Offset(clientID)
		v.ClientID, v.OwnClock = clientID, ok
		v.Offset, v.Real = (global + own).String(), global+own == 0
	}
	return v
}

func (a *API) getClock(w http.ResponseWriter, r *http.Request) {
	clientID := r.URL.Query().Get("clientId")
	if clientID != "" && !a.clientExists(w, r, clientID) {
		return
	}
	reply.JSON(w, http.StatusOK, a.clockView(clientID))
}

// clientExists answers 404 for a client that does not exist now.
func (a *API) clientExists(w http.ResponseWriter, r *http.Request, clientID string) bool {
	if _, ok := a.cfg.Provider.Client(clientID); !ok {
		a.reply.Problem(w, r, reply.New(http.StatusNotFound, fmt.Sprintf("no client %q in this sandbox (see GET /__sandbox/clients)", clientID)))
		return false
	}
	return true
}

func (a *API) moveClock(w http.ResponseWriter, r *http.Request) {
	var m clockMove
	if err := a.decodeAdminBody(r, &m); err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	if errs := emptyGiven(map[string]*string{"clientId": m.ClientID}); len(errs) > 0 {
		a.reply.Problem(w, r, reply.Validation(errs))
		return
	}
	clientID := value(m.ClientID)
	if clientID != "" && !a.clientExists(w, r, clientID) {
		return
	}
	given := 0
	for _, set := range []bool{m.Advance != nil, m.Set != nil, m.Reset} {
		if set {
			given++
		}
	}
	if given != 1 {
		a.reply.Problem(w, r, reply.Validation([]reply.FieldError{{Field: "advance", Message: `give exactly one of "advance" (e.g. "3600s"), "set" (RFC 3339) or "reset": true`}}))
		return
	}
	var d time.Duration
	var at time.Time
	var err error
	switch {
	case m.Advance != nil:
		if d, err = time.ParseDuration(*m.Advance); err != nil {
			a.reply.Problem(w, r, reply.Validation([]reply.FieldError{{Field: "advance", Message: fmt.Sprintf("not a duration such as 3600s or 90m: %q", *m.Advance)}}))
			return
		}
	case m.Set != nil:
		if at, err = time.Parse(time.RFC3339Nano, *m.Set); err != nil {
			a.reply.Problem(w, r, reply.Validation([]reply.FieldError{{Field: "set", Message: fmt.Sprintf("not an RFC 3339 time such as 2026-01-02T15:04:05Z: %q", *m.Set)}}))
			return
		}
	}
	// A client whose ttl has run out is deleted before the clock moves, so
	// that moving the clock back cannot bring it back.
	if err := a.forgetExpiredClients(r); err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	err = a.applyClockMove(r.Context(), clientID, m, d, at)
	if errors.Is(err, clock.ErrOutOfRange) {
		field := "set"
		if m.Advance != nil {
			field = "advance"
		}
		a.reply.Problem(w, r, reply.Validation([]reply.FieldError{{Field: field, Message: err.Error()}}))
		return
	}
	if err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	v := a.clockView(clientID)
	a.log.Info("sandbox clock moved", "client_id", clientID, "now", v.Now, "offset", v.Offset)
	reply.JSON(w, http.StatusOK, v)
}

// applyClockMove moves the sandbox-wide clock, or one client's, and returns
// once no replica can still use the clock from before the move. A move out
// of range is clock.ErrOutOfRange; any other failure is the shared state's
// (503), and a move that failed was not made.
func (a *API) applyClockMove(ctx context.Context, clientID string, m clockMove, d time.Duration, at time.Time) error {
	var err error
	switch {
	case m.Advance != nil:
		err = a.backend.Clocks.Advance(ctx, clientID, d)
	case m.Set != nil:
		err = a.backend.Clocks.Set(ctx, clientID, at)
	default:
		err = a.backend.Clocks.Reset(ctx, clientID)
	}
	if err != nil && !errors.Is(err, clock.ErrOutOfRange) {
		return backend.Unavailable("move the clock", err)
	}
	a.backend.Settle()
	return err
}
