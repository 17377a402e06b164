package sandbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// personaBody is a qualified submission whose patient is the named persona.
func personaBody(externalSourceID, persona string) map[string]any {
	p := validPatient()
	p["firstName"], p["lastName"] = persona, "Persona"
	return map[string]any{"externalSourceId": externalSourceID, "patient": p}
}

// submitPersona submits a persona referral and fails unless it is stored
// as received.
func (s *testSandbox) submitPersona(token, externalSourceID, persona string) {
	s.t.Helper()
	r := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/qualified", token: token, body: personaBody(externalSourceID, persona)})
	var q referrals.QualifiedReferral
	if r.Status != http.StatusCreated {
		s.t.Fatalf("submit persona %s: %d %s", persona, r.Status, r.Body)
	}
	if r.decode(s.t, &q); q.Status != referrals.StatusReceived {
		s.t.Fatalf("persona %s submitted as %q, want received", persona, q.Status)
	}
}

// advanceClient moves one client's clock.
func (s *testSandbox) advanceClient(clientID string, d time.Duration) {
	s.t.Helper()
	s.moveClock(map[string]string{"advance": d.String(), "clientId": clientID})
}

// readQualified is GET of one qualified referral as clientID, with a token
// fresh on its clock (a clock move expires the last one), which must answer
// 200.
func (s *testSandbox) readQualified(clientID, externalSourceID string) referrals.QualifiedReferral {
	s.t.Helper()
	r := s.do(request{path: "/api/v1/referrals/qualified/" + url.PathEscape(externalSourceID), token: s.token(clientID)})
	if r.Status != http.StatusOK {
		s.t.Fatalf("read %s: %d %s", externalSourceID, r.Status, r.Body)
	}
	var q referrals.QualifiedReferral
	r.decode(s.t, &q)
	return q
}

// statusMoves returns the status-changed entries of the record's whole
// audit trail, oldest first.
func (s *testSandbox) statusMoves(clientID, externalSourceID string) []referrals.AuditEntry {
	s.t.Helper()
	r := s.do(request{path: "/api/v1/referrals/qualified/" + url.PathEscape(externalSourceID) + "/audit-trail?limit=500", token: s.token(clientID)})
	var page struct {
		AuditTrail []referrals.AuditEntry `json:"auditTrail"`
		NextCursor *string                `json:"nextCursor"`
	}
	if r.Status != http.StatusOK {
		s.t.Fatalf("audit trail of %s: %d %s", externalSourceID, r.Status, r.Body)
	}
	if r.decode(s.t, &page); page.NextCursor != nil {
		s.t.Fatalf("audit trail of %s longer than one page", externalSourceID)
	}
	var moves []referrals.AuditEntry
	for _, e := range page.AuditTrail {
		if e.Action == referrals.AuditStatusChanged {
			moves = append(moves, e)
		}
	}
	return moves
}

// personaMove is a status a persona must reach after a time since
// submission.
type personaMove struct {
	after  time.Duration
	status string
}

// The lifecycles the issue and docs/personas.md promise, written out here
// rather than read from fixtures.Lifecycles, so a change there fails.
var personaLifecycles = []struct {
	persona string
	moves   []personaMove
	reason  bool
}{
	{"Accepted", []personaMove{{time.Hour, "reviewing"}, {24 * time.Hour, "accepted"}}, false},
	{"Declined", []personaMove{{2 * time.Hour, "rejected"}}, true},
	{"Stalled", []personaMove{{time.Hour, "reviewing"}}, false},
	{"Enrolled", []personaMove{{time.Hour, "reviewing"}, {24 * time.Hour, "accepted"}, {72 * time.Hour, "enrolled"}}, false},
}

// TestPersonaLifecycles: each persona's referral stays put until a move is
// due on its client's clock, moves exactly then with no admin call, shows
// each move in its audit trail as sandbox-persona (a rejection with its
// reason), and ends where its lifecycle ends however far the clock goes.
func TestPersonaLifecycles(t *testing.T) {
	t.Parallel()
	for _, tc := range personaLifecycles {
		t.Run(tc.persona, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t)
			tok := s.token(partner)
			id := "persona-" + tc.persona
			s.submitPersona(tok, id, tc.persona)
			status, elapsed := "received", time.Duration(0)
			for _, m := range tc.moves {
				// A minute early: real time moves too, but never a minute
				// during one step of a test.
				s.advanceClient(partner, m.after-time.Minute-elapsed)
				if got := s.readQualified(partner, id).Status; got != status {
					t.Fatalf("a minute before %s: status %q, want %q", m.after, got, status)
				}
				s.advanceClient(partner, time.Minute)
				elapsed = m.after
				status = m.status
				if got := s.readQualified(partner, id).Status; got != status {
					t.Fatalf("at %s: status %q, want %q", m.after, got, status)
				}
			}
			s.advanceClient(partner, 1000*time.Hour)
			if got := s.readQualified(partner, id).Status; got != status {
				t.Fatalf("1000 hours on: status %q, want it to stay %q", got, status)
			}
			moves := s.statusMoves(partner, id)
			if len(moves) != len(tc.moves) {
				t.Fatalf("audit trail has %d status moves %+v, want %d", len(moves), moves, len(tc.moves))
			}
			from := "received"
			for i, e := range moves {
				if e.FromStatus != from || e.ToStatus != tc.moves[i].status || e.Actor != "sandbox-persona" || e.RequestID == "" {
					t.Errorf("move %d: %+v, want %s -> %s by sandbox-persona with a request id", i, e, from, tc.moves[i].status)
				}
				if (e.Reason != "") != tc.reason {
					t.Errorf("move %d reason %q, want one: %v", i, e.Reason, tc.reason)
				}
				from = e.ToStatus
			}
		})
	}
}

// TestPersonaOnItsClientsClock: a persona moves on the submitting client's
// clock only, and shows its moves in the listing and in the console's data
// view as well as in a read.
func TestPersonaOnItsClientsClock(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tok := s.token(partner)
	s.submitPersona(tok, "persona-own-clock", "accepted") // names ignore case
	s.advanceClient(partner2, 48*time.Hour)
	if got := s.readQualified(partner, "persona-own-clock").Status; got != "received" {
		t.Fatalf("after another client's clock moved: %q, want received", got)
	}
	s.advanceClient(partner, 2*time.Hour)
	var data struct {
		QualifiedReferrals []referrals.QualifiedReferral `json:"qualifiedReferrals"`
	}
	s.admin(http.MethodGet, "/__sandbox/data/qualified?clientId="+partner, nil).decode(t, &data)
	if got := statusOf(data.QualifiedReferrals, "persona-own-clock"); got != "reviewing" {
		t.Fatalf("console data view after 2h: %q, want reviewing", got)
	}
	s.advanceClient(partner, 24*time.Hour)
	var list struct {
		QualifiedReferrals []referrals.QualifiedReferral `json:"qualifiedReferrals"`
	}
	s.do(request{path: "/api/v1/referrals/qualified", token: s.token(partner)}).decode(t, &list)
	if got := statusOf(list.QualifiedReferrals, "persona-own-clock"); got != "accepted" {
		t.Fatalf("listing after 26h: %q, want accepted", got)
	}
	if moves := s.statusMoves(partner, "persona-own-clock"); len(moves) != 2 {
		t.Fatalf("status moves %+v, want 2", moves)
	}
}

// statusOf finds a record's status in a listing ("" when missing).
func statusOf(list []referrals.QualifiedReferral, externalSourceID string) string {
	for _, q := range list {
		if q.ExternalSourceID == externalSourceID {
			return q.Status
		}
	}
	return ""
}

// TestPersonaStopsWhereAnAdminMovedIt: an admin move the lifecycle did not
// make ends the lifecycle: it never moves the record out of a status the
// processing order makes final, nor from one it did not lead to.
func TestPersonaStopsWhereAnAdminMovedIt(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tok := s.token(partner)
	s.submitPersona(tok, "persona-withdrawn", "Enrolled")
	r := s.admin(http.MethodPost, "/__sandbox/qualified/persona-withdrawn/status", map[string]string{"status": "withdrawn", "clientId": partner})
	if r.Status != http.StatusOK {
		t.Fatalf("admin withdraw: %d %s", r.Status, r.Body)
	}
	s.advanceClient(partner, 100*time.Hour)
	if got := s.readQualified(partner, "persona-withdrawn").Status; got != "withdrawn" {
		t.Fatalf("after 100h: %q, want withdrawn", got)
	}
	moves := s.statusMoves(partner, "persona-withdrawn")
	if len(moves) != 1 || moves[0].Actor != "sandbox-admin" {
		t.Fatalf("status moves %+v, want only the admin's", moves)
	}
}

// TestPersonaOnceAcrossReplicas: two replicas on one Redis store reading a
// persona at once after a clock move write each move once.
func TestPersonaOnceAcrossReplicas(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	open := func() store.Store {
		st, err := store.OpenRedis(srv.NewClient(t))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	rs := []*testSandbox{
		newSandbox(t, useRedis(srv.NewClient(t)), useStore(open())),
		newSandbox(t, useRedis(srv.NewClient(t)), useStore(open())),
	}
	tok := rs[0].token(partner)
	rs[0].submitPersona(tok, "persona-replicas", "Enrolled")
	rs[1].advanceClient(partner, 80*time.Hour)
	tok = rs[0].token(partner)
	const reads = 8
	statuses := make([]string, reads)
	var wg sync.WaitGroup
	for i := range reads {
		wg.Go(func() {
			r, err := rs[i%2].send(nil, balanced(rs[0], request{path: "/api/v1/referrals/qualified/persona-replicas", token: tok}))
			var q referrals.QualifiedReferral
			if err == nil && r.Status == http.StatusOK && json.Unmarshal(r.Body, &q) == nil {
				statuses[i] = q.Status
			}
		})
	}
	wg.Wait()
	for i, st := range statuses {
		if st != "enrolled" {
			t.Errorf("read %d through replica %d: %q, want enrolled", i, i%2, st)
		}
	}
	moves := rs[0].statusMoves(partner, "persona-replicas")
	want := []string{"reviewing", "accepted", "enrolled"}
	if len(moves) != len(want) {
		t.Fatalf("status moves %+v, want one each to %v", moves, want)
	}
	for i, e := range moves {
		if e.ToStatus != want[i] {
			t.Errorf("move %d to %q, want %q", i, e.ToStatus, want[i])
		}
	}
}

// failingUpdates is a store whose updates of qualified referrals fail, as
// a Redis that stopped answering would, while fail is set.
type failingUpdates struct {
	store.Store
	fail atomic.Bool
}

func (f *failingUpdates) UpdateQualified(ctx context.Context, clientID, id string, fn func(*referrals.QualifiedReferral) error) (referrals.QualifiedReferral, error) {
	if f.fail.Load() {
		return referrals.QualifiedReferral{}, fmt.Errorf("update: %w", store.ErrUnavailable)
	}
	return f.Store.UpdateQualified(ctx, clientID, id, fn)
}

// TestPersonaMoveFailureIsNoSuccess: when a due move cannot be stored, the
// read and the listing fail (503) rather than answer the old status as if
// nothing were due, and the move is made by the next read that can.
func TestPersonaMoveFailureIsNoSuccess(t *testing.T) {
	t.Parallel()
	st, err := store.Open(store.MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	failing := &failingUpdates{Store: st}
	s := newSandbox(t, useStore(failing))
	s.submitPersona(s.token(partner), "persona-failing", "Stalled")
	s.advanceClient(partner, 2*time.Hour)
	failing.fail.Store(true)
	tok := s.token(partner)
	for _, path := range []string{"/api/v1/referrals/qualified/persona-failing", "/api/v1/referrals/qualified"} {
		if r := s.do(request{path: path, token: tok}); r.Status != http.StatusServiceUnavailable {
			t.Errorf("GET %s while the move cannot be stored: %d %s, want 503", path, r.Status, r.Body)
		}
	}
	failing.fail.Store(false)
	if got := s.readQualified(partner, "persona-failing").Status; got != "reviewing" {
		t.Fatalf("once the store answers: %q, want reviewing", got)
	}
	if moves := s.statusMoves(partner, "persona-failing"); len(moves) != 1 {
		t.Fatalf("status moves %+v, want 1", moves)
	}
}

// listedPersona is a persona as GET /__sandbox/personas lists it.
type listedPersona struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Patient *struct {
		FirstName string `json:"firstName"`
		LastName  string `json:"lastName"`
	} `json:"patient"`
	Steps []struct {
		After  string `json:"after"`
		Status string `json:"status"`
		Reason string `json:"reason"`
	} `json:"steps"`
	ClientIDPrefix       string `json:"clientIdPrefix"`
	TokenLifetimeSeconds int    `json:"tokenLifetimeSeconds"`
}

// TestPersonasEndpointListsWhatTheSandboxDoes: GET /__sandbox/personas
// lists each lifecycle with the patient name and the steps the lifecycle
// tests drive, and the token persona with the prefix and lifetime the
// token endpoint gives.
func TestPersonasEndpointListsWhatTheSandboxDoes(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	var body struct {
		Personas []listedPersona `json:"personas"`
	}
	r := s.admin(http.MethodGet, "/__sandbox/personas", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET /__sandbox/personas: %d %s", r.Status, r.Body)
	}
	r.decode(t, &body)
	if len(body.Personas) != len(personaLifecycles)+1 {
		t.Fatalf("listed %d personas, want %d lifecycles and the token persona: %+v", len(body.Personas), len(personaLifecycles), body.Personas)
	}
	for i, tc := range personaLifecycles {
		p := body.Personas[i]
		if p.Kind != "lifecycle" || p.Patient == nil || p.Patient.FirstName != tc.persona || p.Patient.LastName != "Persona" || len(p.Steps) != len(tc.moves) {
			t.Errorf("persona %d: %+v, want lifecycle %s with %d steps", i, p, tc.persona, len(tc.moves))
			continue
		}
		for j, step := range p.Steps {
			after, err := time.ParseDuration(step.After)
			if err != nil || after != tc.moves[j].after || step.Status != tc.moves[j].status || (step.Reason != "") != tc.reason {
				t.Errorf("%s step %d: %+v, want %s after %s", tc.persona, j, step, tc.moves[j].status, tc.moves[j].after)
			}
		}
	}
	tokenPersona := body.Personas[len(personaLifecycles)]
	if tokenPersona.Kind != "token" || tokenPersona.ClientIDPrefix != "short-token-" || tokenPersona.TokenLifetimeSeconds != 360 {
		t.Errorf("token persona %+v, want short-token- with 360 s tokens", tokenPersona)
	}
}
