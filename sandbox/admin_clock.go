package sandbox

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
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
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

// resetRequest is the optional body of POST /__sandbox/reset.
type resetRequest struct {
	ClientID *string `json:"clientId"`
}

func (s *Server) clockView(clientID string) clockView {
	global := s.clocks.Global().Offset()
	v := clockView{Now: s.clocks.Now(clientID).Format(referrals.TimestampLayout), Offset: global.String(), Real: global == 0}
	if clientID != "" {
		own, ok := s.clocks.Offset(clientID)
		v.ClientID, v.OwnClock = clientID, ok
		v.Offset, v.Real = (global + own).String(), global+own == 0
	}
	return v
}

func (s *Server) getClock(w http.ResponseWriter, r *http.Request) {
	clientID := r.URL.Query().Get("clientId")
	if clientID != "" && !s.clientExists(w, r, clientID) {
		return
	}
	reply.JSON(w, http.StatusOK, s.clockView(clientID))
}

// clientExists answers 404 for a client that does not exist now.
func (s *Server) clientExists(w http.ResponseWriter, r *http.Request, clientID string) bool {
	if _, ok := s.cfg.Provider.Client(clientID); !ok {
		s.reply.Problem(w, r, reply.New(http.StatusNotFound, fmt.Sprintf("no client %q in this sandbox (see GET /__sandbox/clients)", clientID)))
		return false
	}
	return true
}

func (s *Server) moveClock(w http.ResponseWriter, r *http.Request) {
	var m clockMove
	if err := decodeAdminBody(r, &m); err != nil {
		s.reply.Fail(w, r, err)
		return
	}
	if errs := emptyGiven(map[string]*string{"clientId": m.ClientID}); len(errs) > 0 {
		s.reply.Problem(w, r, reply.Validation(errs))
		return
	}
	clientID := value(m.ClientID)
	if clientID != "" && !s.clientExists(w, r, clientID) {
		return
	}
	given := 0
	for _, set := range []bool{m.Advance != nil, m.Set != nil, m.Reset} {
		if set {
			given++
		}
	}
	if given != 1 {
		s.reply.Problem(w, r, reply.Validation([]FieldError{{Field: "advance", Message: `give exactly one of "advance" (e.g. "3600s"), "set" (RFC 3339) or "reset": true`}}))
		return
	}
	var d time.Duration
	var at time.Time
	var err error
	switch {
	case m.Advance != nil:
		if d, err = time.ParseDuration(*m.Advance); err != nil {
			s.reply.Problem(w, r, reply.Validation([]FieldError{{Field: "advance", Message: fmt.Sprintf("not a duration such as 3600s or 90m: %q", *m.Advance)}}))
			return
		}
	case m.Set != nil:
		if at, err = time.Parse(time.RFC3339Nano, *m.Set); err != nil {
			s.reply.Problem(w, r, reply.Validation([]FieldError{{Field: "set", Message: fmt.Sprintf("not an RFC 3339 time such as 2026-01-02T15:04:05Z: %q", *m.Set)}}))
			return
		}
	}
	// A client whose ttl has run out is deleted before the clock moves, so
	// that moving the clock back cannot bring it back.
	if err := s.forgetExpiredClients(r); err != nil {
		s.reply.Fail(w, r, err)
		return
	}
	err = s.applyClockMove(r.Context(), clientID, m, d, at)
	if errors.Is(err, clock.ErrOutOfRange) {
		field := "set"
		if m.Advance != nil {
			field = "advance"
		}
		s.reply.Problem(w, r, reply.Validation([]FieldError{{Field: field, Message: err.Error()}}))
		return
	}
	if err != nil {
		s.reply.Fail(w, r, err)
		return
	}
	v := s.clockView(clientID)
	s.log.Info("sandbox clock moved", "client_id", clientID, "now", v.Now, "offset", v.Offset)
	reply.JSON(w, http.StatusOK, v)
}

// applyClockMove moves the sandbox-wide clock, or one client's, and returns
// once no replica can still use the clock from before the move. A move out
// of range is clock.ErrOutOfRange; any other failure is the shared state's
// (503), and a move that failed was not made.
func (s *Server) applyClockMove(ctx context.Context, clientID string, m clockMove, d time.Duration, at time.Time) error {
	var err error
	switch {
	case m.Advance != nil:
		err = s.backend.Clocks.Advance(ctx, clientID, d)
	case m.Set != nil:
		err = s.backend.Clocks.Set(ctx, clientID, at)
	default:
		err = s.backend.Clocks.Reset(ctx, clientID)
	}
	if err != nil && !errors.Is(err, clock.ErrOutOfRange) {
		return backend.Unavailable("move the clock", err)
	}
	s.backend.Settle()
	return err
}

// reset puts the sandbox back as it started: store back to the fixtures,
// runtime clients gone, rules cleared, journal cleared, real time, rate
// limits refilled. With {"clientId": ...} it does so for that client alone:
// its records back to its fixtures (none for a runtime client), its rules,
// scenario bindings, journal entries, rate limit and clock; nothing of any
// other client changes.
func (s *Server) reset(w http.ResponseWriter, r *http.Request) {
	var req resetRequest
	if err := decodeAdminBody(r, &req); err != nil {
		s.reply.Fail(w, r, err)
		return
	}
	if errs := emptyGiven(map[string]*string{"clientId": req.ClientID}); len(errs) > 0 {
		s.reply.Problem(w, r, reply.Validation(errs))
		return
	}
	if req.ClientID != nil {
		s.resetClient(w, r, *req.ClientID)
		return
	}
	if err := store.ResetFrom(storeContext(r), s.backend.Records, s.records); err != nil {
		s.reply.Fail(w, r, s.backend.Failure("reset store", err))
		return
	}
	err := s.cfg.Provider.ResetClients(r.Context())
	s.backend.Settle()
	if err != nil {
		s.reply.Fail(w, r, fmt.Errorf("reset runtime clients: %w", err))
		return
	}
	if err := s.backend.Rules.Clear(r.Context()); err != nil { // rules and activations
		s.reply.Fail(w, r, fmt.Errorf("clear the rules: %w", err))
		return
	}
	if err := s.backend.Journal.Clear(r.Context()); err != nil {
		s.reply.Fail(w, r, fmt.Errorf("clear the journal: %w", err))
		return
	}
	if err := s.backend.Clocks.ResetAll(r.Context()); err != nil {
		s.reply.Fail(w, r, backend.Unavailable("reset the clocks", err))
		return
	}
	s.backend.Settle()
	if err := s.limiter.reset(r.Context()); err != nil {
		s.reply.Fail(w, r, fmt.Errorf("refill the rate limits: %w", err))
		return
	}
	s.log.Info("sandbox reset")
	reply.JSON(w, http.StatusOK, map[string]string{"status": "reset"})
}

func (s *Server) resetClient(w http.ResponseWriter, r *http.Request, clientID string) {
	if !s.clientExists(w, r, clientID) {
		return
	}
	if err := store.ResetClientFrom(storeContext(r), s.backend.Records, clientID, s.records); err != nil {
		s.reply.Fail(w, r, s.backend.Failure("reset the records of "+clientID, err))
		return
	}
	if err := s.forgetClientState(r.Context(), clientID); err != nil {
		s.reply.Fail(w, r, err)
		return
	}
	s.log.Info("client reset", "client_id", clientID)
	reply.JSON(w, http.StatusOK, map[string]string{"status": "reset", "clientId": clientID})
}
