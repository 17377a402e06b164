package conformance

import (
	"net/http"
	"reflect"
	"testing"
)

// TestEvaluateListsUnknownClientsApart checks that requests naming a client
// id the sandbox does not know are listed apart with what they tried, and
// never judged (so never reported as passing).
func TestEvaluateListsUnknownClientsApart(t *testing.T) {
	s := newSim()
	s.fetchToken()
	s.call()
	s.client = "nobody"
	tried := s.fetchToken(status(http.StatusUnauthorized))
	s.client = "zz-typo"
	for range MaxAttemptsShown + 2 {
		s.call(status(http.StatusUnauthorized))
	}
	known := func(id string) bool { return id == "partner" }
	r := Evaluate(s.entries, Options{TLS: true, Now: s.now, Known: known})

	var judged []string
	for _, c := range r.Clients {
		judged = append(judged, c.ClientID)
	}
	if want := []string{"partner"}; !reflect.DeepEqual(judged, want) {
		t.Errorf("judged clients %v, want %v: an unknown client id is never judged", judged, want)
	}
	if len(r.UnknownClients) != 2 {
		t.Fatalf("unknown clients %+v, want nobody and zz-typo", r.UnknownClients)
	}
	nobody, typo := r.UnknownClients[0], r.UnknownClients[1]
	want := Attempt{At: s.entries[2].At, Method: http.MethodPost, Path: "/tenant/oauth2/v2.0/token", Status: http.StatusUnauthorized, RequestID: tried}
	if nobody.ClientID != "nobody" || nobody.Requests != 1 || !reflect.DeepEqual(nobody.Attempts, []Attempt{want}) {
		t.Errorf("nobody = %+v, want its one token request %+v", nobody, want)
	}
	if typo.ClientID != "zz-typo" || typo.Requests != MaxAttemptsShown+2 || len(typo.Attempts) != MaxAttemptsShown {
		t.Errorf("zz-typo: %d requests, %d attempts shown; want %d and %d", typo.Requests, len(typo.Attempts), MaxAttemptsShown+2, MaxAttemptsShown)
	}

	// Without Known every id is a client, as before (callers that cannot
	// tell).
	if r := Evaluate(s.entries, Options{TLS: true, Now: s.now}); len(r.Clients) != 3 || len(r.UnknownClients) != 0 || r.UnknownClients == nil {
		t.Errorf("without Known: %d clients, unknown %v; want 3 and an empty list", len(r.Clients), r.UnknownClients)
	}
}
