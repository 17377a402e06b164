package sandbox

import (
	"fmt"
	"net/http"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
)

// clockView is the body of GET /__sandbox/clock.
type clockView struct {
	Now    string `json:"now"`
	Offset string `json:"offset"`
	Real   bool   `json:"real"`
}

// clockMove is the body of POST /__sandbox/clock: exactly one of advance (a
// Go duration, e.g. 3600s or 1h) or set (RFC 3339), or reset: true.
// Pointers tell a field given empty ("set": "") from one left out: an empty
// value is a mistake to report, not a move to drop silently.
type clockMove struct {
	Advance *string `json:"advance"`
	Set     *string `json:"set"`
	Reset   bool    `json:"reset"`
}

func (s *Server) clockView() clockView {
	offset := s.cfg.Clock.Offset()
	return clockView{
		Now:    s.cfg.Clock.Now().Format(fixtures.TimestampLayout),
		Offset: offset.String(),
		Real:   offset == 0,
	}
}

func (s *Server) getClock(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.clockView())
}

func (s *Server) moveClock(w http.ResponseWriter, r *http.Request) {
	var m clockMove
	if err := decodeAdminBody(r, &m); err != nil {
		s.fail(w, r, err)
		return
	}
	given := 0
	for _, set := range []bool{m.Advance != nil, m.Set != nil, m.Reset} {
		if set {
			given++
		}
	}
	if given != 1 {
		s.problem(w, r, validationProblem([]FieldError{{Field: "advance", Message: `give exactly one of "advance" (e.g. "3600s"), "set" (RFC 3339) or "reset": true`}}))
		return
	}
	switch {
	case m.Advance != nil:
		d, err := time.ParseDuration(*m.Advance)
		if err != nil {
			s.problem(w, r, validationProblem([]FieldError{{Field: "advance", Message: fmt.Sprintf("not a duration such as 3600s or 90m: %q", *m.Advance)}}))
			return
		}
		s.cfg.Clock.Advance(d)
	case m.Set != nil:
		t, err := time.Parse(time.RFC3339Nano, *m.Set)
		if err != nil {
			s.problem(w, r, validationProblem([]FieldError{{Field: "set", Message: fmt.Sprintf("not an RFC 3339 time such as 2026-01-02T15:04:05Z: %q", *m.Set)}}))
			return
		}
		s.cfg.Clock.Set(t)
	default:
		s.cfg.Clock.Reset()
	}
	s.log.Info("sandbox clock moved", "now", s.cfg.Clock.Now().Format(time.RFC3339), "offset", s.cfg.Clock.Offset().String())
	writeJSON(w, http.StatusOK, s.clockView())
}

// reset puts the sandbox back as it started: store back to the fixtures,
// rules cleared, journal cleared, real time, rate limits refilled.
func (s *Server) reset(w http.ResponseWriter, r *http.Request) {
	if err := s.store.Reset(s.cfg.Fixtures); err != nil {
		s.fail(w, r, fmt.Errorf("reset store: %w", err))
		return
	}
	s.scenarios.Clear() // rules and activations
	s.journal.Clear()
	s.cfg.Clock.Reset()
	s.limiter.reset()
	s.log.Info("sandbox reset")
	writeJSON(w, http.StatusOK, map[string]string{"status": "reset"})
}
