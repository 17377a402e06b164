package admin

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
)

// Persona kinds.
const (
	personaLifecycle = "lifecycle"
	personaToken     = "token"
)

// persona is one documented persona as GET /__sandbox/personas lists it
// and docs/personas.md tabulates it: personaList is the one source of
// both, built from the definitions that drive the behaviour
// (fixtures.Lifecycles, idp.ShortTokenPrefix), so neither can drift.
type persona struct {
	Name        string `json:"name"`
	Kind        string `json:"kind"`
	Description string `json:"description"`
	// Patient is the reserved patient name of a lifecycle persona.
	Patient *personaPatient `json:"patient,omitempty"`
	// Steps are a lifecycle persona's status moves.
	Steps []personaStep `json:"steps,omitempty"`
	// ClientIDPrefix selects a token persona.
	ClientIDPrefix string `json:"clientIdPrefix,omitempty"`
	// TokenLifetimeSeconds is a token persona's token lifetime.
	TokenLifetimeSeconds int `json:"tokenLifetimeSeconds,omitempty"`
}

// personaPatient is the patient name a qualified submission carries to be
// a lifecycle persona.
type personaPatient struct {
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
}

// personaStep is one status move of a lifecycle: after is a Go duration
// after submittedAt, on the submitting client's clock.
type personaStep struct {
	After  string `json:"after"`
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// personaList is every persona: the lifecycles, then the token persona.
func personaList() []persona {
	var out []persona
	for _, l := range fixtures.Lifecycles() {
		p := persona{
			Name: strings.ToLower(l.Name), Kind: personaLifecycle, Description: l.Description,
			Patient: &personaPatient{FirstName: l.Name, LastName: fixtures.PersonaLastName},
		}
		for _, s := range l.Steps {
			p.Steps = append(p.Steps, personaStep{After: shortDuration(s.After), Status: s.Status, Reason: s.Reason})
		}
		out = append(out, p)
	}
	return append(out, persona{
		Name: strings.TrimSuffix(idp.ShortTokenPrefix, "-"), Kind: personaToken,
		Description:          "tokens that expire soon (a minute past the 5 minutes before expiry at which MSAL renews), to test renewal without moving the clock; the client's own tokenLifetimeSeconds still wins",
		ClientIDPrefix:       idp.ShortTokenPrefix,
		TokenLifetimeSeconds: int(idp.ShortTokenLifetime.Seconds()),
	})
}

// listPersonas answers GET /__sandbox/personas.
func (a *API) listPersonas(w http.ResponseWriter, _ *http.Request) {
	reply.JSON(w, http.StatusOK, map[string]any{"personas": personaList()})
}

// personaTable renders personaList as the Markdown table docs/personas.md
// holds between its markers.
func personaTable() string {
	var b strings.Builder
	b.WriteString("| Persona | Kind | Select it with | What happens |\n|---|---|---|---|\n")
	for _, p := range personaList() {
		var how, what string
		switch p.Kind {
		case personaLifecycle:
			how = fmt.Sprintf("qualified referral, patient `firstName` `%s`, `lastName` `%s`", p.Patient.FirstName, p.Patient.LastName)
			moves := []string{"received"}
			for _, s := range p.Steps {
				m := fmt.Sprintf("%s after %s", s.Status, s.After)
				if s.Reason != "" {
					m += fmt.Sprintf(" (reason: %q)", s.Reason)
				}
				moves = append(moves, m)
			}
			what = p.Description + ": " + strings.Join(moves, ", then ")
		case personaToken:
			how = fmt.Sprintf("client id starting `%s`", p.ClientIDPrefix)
			what = fmt.Sprintf("%s: `expires_in` %d", p.Description, p.TokenLifetimeSeconds)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", p.Name, p.Kind, how, what)
	}
	return b.String()
}

// shortDuration is d as time.ParseDuration reads it, without the zero
// units time.Duration.String writes: 1h, not 1h0m0s.
func shortDuration(d time.Duration) string {
	out := d.String()
	if strings.HasSuffix(out, "m0s") {
		out = strings.TrimSuffix(out, "0s")
	}
	if strings.HasSuffix(out, "h0m") {
		out = strings.TrimSuffix(out, "0m")
	}
	return out
}
