package scenarios

import (
	"net/http"
	"slices"
)

// Endpoint is the kind of sandbox endpoint a request went to. Rules use it to
// target a kind of call without spelling out paths, and it decides which
// statuses a rule may force (the real service and its identity provider fail
// in different ways).
type Endpoint string

// Endpoint kinds. A Request carries one of EndpointToken, EndpointAPI or
// EndpointPing; EndpointAny (or an empty endpoint) in a Rule matches all,
// and EndpointService matches the service's two (an outage of the service
// takes its ping down with its API, while its identity provider, another
// system, stays up).
const (
	EndpointToken   Endpoint = "token"   // POST {auth_url}/oauth2/v2.0/token
	EndpointAPI     Endpoint = "api"     // everything under {base_url}
	EndpointPing    Endpoint = "ping"    // GET {root_url}/health/ping
	EndpointService Endpoint = "service" // rules only: api and ping
	EndpointAny     Endpoint = "any"     // rules only: every kind
)

// Token endpoint error codes a rule can force, as listed in the interface
// document (7.1).
const (
	ErrorInvalidClient = "invalid_client"
	ErrorInvalidScope  = "invalid_scope"
	ErrorInvalidGrant  = "invalid_grant"
)

// valid reports whether e is a known endpoint kind; empty counts as "any".
func (e Endpoint) valid() bool {
	switch e {
	case "", EndpointToken, EndpointAPI, EndpointPing, EndpointService, EndpointAny:
		return true
	}
	return false
}

// matches reports whether a rule targeting e applies to a request to got.
func (e Endpoint) matches(got Endpoint) bool {
	if e == EndpointService {
		return got == EndpointAPI || got == EndpointPing
	}
	return e == "" || e == EndpointAny || e == got
}

// ForcibleStatuses lists the HTTP statuses a rule may force on endpoint kind
// e, ascending. The service documents 401, 403, 429, 500 and 503 for its API
// and ping; the identity provider's non-error failures are 429 (Entra
// throttles a client that asks for tokens too often) and 503 (its other
// failures are the error codes of ForcibleErrors). For EndpointAny (or
// empty) it returns the API list: such a rule simply does not apply to
// token requests when its status cannot be forced there, and its 429 stays
// off the token endpoint (see appliesTo).
func ForcibleStatuses(e Endpoint) []int {
	switch e {
	case EndpointToken:
		return []int{http.StatusTooManyRequests, http.StatusServiceUnavailable}
	case "", EndpointAny, EndpointAPI, EndpointPing, EndpointService:
		return []int{
			http.StatusUnauthorized,
			http.StatusForbidden,
			http.StatusTooManyRequests,
			http.StatusInternalServerError,
			http.StatusServiceUnavailable,
		}
	}
	return nil
}

// appliesTo reports whether a rule for endpoint kind rule forcing status
// applies to a request to got. A 429 reaches the token endpoint only from
// a rule that names it: the API's rate-limit scenarios ("any" endpoint)
// were written for the API and ping, and throttling the token endpoint
// too would change what they rehearse.
func appliesTo(rule Endpoint, status int, got Endpoint) bool {
	if !canForce(got, status) {
		return false
	}
	return status != http.StatusTooManyRequests || got != EndpointToken || rule == EndpointToken
}

// ForcibleErrors lists the OAuth error codes a rule may force on endpoint kind
// e, sorted. Only the token endpoint has any.
func ForcibleErrors(e Endpoint) []string {
	if e == EndpointToken {
		return []string{ErrorInvalidClient, ErrorInvalidGrant, ErrorInvalidScope}
	}
	return nil
}

// ErrorStatus is the HTTP status the identity provider answers with for a
// token error code (interface document 7.1), or 0 for an unknown code.
func ErrorStatus(code string) int {
	switch code {
	case ErrorInvalidClient:
		return http.StatusUnauthorized
	case ErrorInvalidScope, ErrorInvalidGrant:
		return http.StatusBadRequest
	}
	return 0
}

// canForce reports whether status may be forced on a request to e.
func canForce(e Endpoint, status int) bool {
	return slices.Contains(ForcibleStatuses(e), status)
}
