package idp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
)

// entraTimestampLayout is how Entra writes timestamps in error bodies.
const entraTimestampLayout = "2006-01-02 15:04:05Z"

// Error codes of the token endpoint's error bodies (the `error` field).
const (
	CodeInvalidRequest         = "invalid_request"
	CodeInvalidClient          = "invalid_client"
	CodeInvalidScope           = "invalid_scope"
	CodeInvalidGrant           = "invalid_grant"
	CodeTemporarilyUnavailable = "temporarily_unavailable"
	// CodeInvalidTenant is Entra's own error for an unknown tenant; the
	// interface names no error for it.
	CodeInvalidTenant = "invalid_tenant"
)

// TokenError is one failure of a token request: the HTTP status, the OAuth
// error code, Entra's AADSTS number and its message.
type TokenError struct {
	Status  int
	Code    string
	AADSTS  int
	Message string
}

// Error renders the error as Entra's first description line.
func (e *TokenError) Error() string { return fmt.Sprintf("AADSTS%d: %s", e.AADSTS, e.Message) }

// The failures of section 7.1 of the interface document, plus Entra's own
// codes for the rows the document leaves to Entra.
func errMissingParameter(name string) *TokenError {
	return &TokenError{http.StatusBadRequest, CodeInvalidRequest, 900144,
		fmt.Sprintf("The request body must contain the following parameter: '%s'.", name)}
}

func errWrongContentType(got string) *TokenError {
	return &TokenError{http.StatusBadRequest, CodeInvalidRequest, 900144,
		fmt.Sprintf("The request body must be application/x-www-form-urlencoded, not '%s', and must contain the following parameter: 'grant_type'.", got)}
}

// errRepeatedParameter answers a parameter given more than once as Entra
// does: AADSTS9000411 naming the parameter (Azure/azure-sdk-for-java#31191,
// #31733). The name is the caller's, so it is cut.
func errRepeatedParameter(name string) *TokenError {
	return &TokenError{http.StatusBadRequest, CodeInvalidRequest, 9000411,
		fmt.Sprintf("The request is not properly formatted. The parameter '%s' is duplicated.", cut(name, 64))}
}

// errMissingSecret is Entra's answer to client credentials without a
// secret (or assertion): AADSTS7000216 (MicrosoftDocs/azure-docs#30777).
// Its error field is in no capture; the same message under its earlier
// code AADSTS90014 came as 400 invalid_request, which the sandbox keeps.
func errMissingSecret() *TokenError {
	return &TokenError{http.StatusBadRequest, CodeInvalidRequest, 7000216,
		"'client_assertion', 'client_secret' or 'request' is required for the 'client_credentials' grant type."}
}

// cut shortens a caller's value quoted in an error description.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// errUnknownTenant is current Entra's answer to a tenant it does not know:
// invalid_tenant AADSTS90002 (captures of 2023 and 2025 in
// microsoftgraph/windowsupdates-webapplication-sample#6 and
// james-gould/azure-keyvault-emulator#324; a 2020 one said invalid_request).
func errUnknownTenant(tenant string) *TokenError {
	return &TokenError{http.StatusBadRequest, CodeInvalidTenant, 90002,
		fmt.Sprintf("Tenant '%s' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud.", tenant)}
}

// errCommonEndpoint is Entra's answer to client credentials on /common or
// /consumers, which name no tenant to issue an app-only token in.
func errCommonEndpoint() *TokenError {
	return &TokenError{http.StatusBadRequest, CodeInvalidRequest, 9001023,
		"The grant type is not supported over the /common or /consumers endpoints. Please use the /organizations or tenant-specific endpoint."}
}

// errSingleTenant is Entra's answer to /organizations for an application
// registered in one tenant only, as every sandbox client is.
func errSingleTenant(clientID string) *TokenError {
	return &TokenError{http.StatusBadRequest, CodeInvalidRequest, 50194,
		fmt.Sprintf("Application '%s' is not configured as a multi-tenant application. Usage of the /organizations endpoint is not supported for such applications. Use a tenant-specific endpoint or configure the application to be multi-tenant.", clientID)}
}

// errTokenMethod is Entra's answer to a method other than POST or OPTIONS
// on the token endpoint: 400, not 405 (NunoFilipeMota/PublicScripts#5).
func errTokenMethod(method string) *TokenError {
	return &TokenError{http.StatusBadRequest, CodeInvalidRequest, 900561,
		fmt.Sprintf("The endpoint only accepts POST, OPTIONS requests. Received a %s request.", cut(method, 16))}
}

// errTwoAuthMethods refuses a secret sent both in HTTP Basic and in the
// form. No capture shows Entra's answer; AADSTS9002313 is the code whose
// documented meaning fits ("Invalid request. Request is malformed or
// invalid.").
func errTwoAuthMethods() *TokenError {
	return &TokenError{http.StatusBadRequest, CodeInvalidRequest, 9002313,
		"Invalid request. Request is malformed or invalid: send the client secret either in HTTP Basic or in the form, not both (RFC 6749 section 2.3)."}
}

// errMalformedBasic refuses an Authorization header that is not valid
// HTTP Basic credentials: invalid_client 401, as RFC 6749 5.2 asks when
// the header was used. No capture shows Entra's code; AADSTS9002313
// ("Request is malformed or invalid") is the one whose meaning fits.
func errMalformedBasic() *TokenError {
	return &TokenError{http.StatusUnauthorized, CodeInvalidClient, 9002313,
		"Invalid request. Request is malformed or invalid: the Authorization header does not hold valid HTTP Basic client credentials."}
}

func errUnsupportedGrant(grant string) *TokenError {
	return &TokenError{http.StatusBadRequest, CodeInvalidGrant, 70003,
		fmt.Sprintf("The app requested an unsupported grant type '%s'. Only 'client_credentials' is supported.", grant)}
}

func errUnknownClient(clientID, tenant string) *TokenError {
	return &TokenError{http.StatusUnauthorized, CodeInvalidClient, 700016,
		fmt.Sprintf("Application with identifier '%s' was not found in the directory '%s'. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant. You may have sent your authentication request to the wrong tenant.", clientID, tenant)}
}

func errWrongSecret(clientID string) *TokenError {
	return &TokenError{http.StatusUnauthorized, CodeInvalidClient, 7000215,
		fmt.Sprintf("Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '%s'.", clientID)}
}

// errExpiredSecret is Entra's answer to a secret that matches but whose end
// date has passed.
func errExpiredSecret(clientID string) *TokenError {
	return &TokenError{http.StatusUnauthorized, CodeInvalidClient, 7000222,
		fmt.Sprintf("The provided client secret keys for app '%s' are expired. Visit the Azure portal to create new keys for your app: https://aka.ms/NewClientSecret, or consider using certificate credentials for added security: https://aka.ms/certCreds.", clientID)}
}

// errInvalidScope refuses a scope the client may not have: a resource
// that is not the client's, or two resources. invalid_scope 400 is the
// interface's; AADSTS70011 is Entra's code for a scope it cannot grant.
func errInvalidScope(scope string) *TokenError {
	return &TokenError{http.StatusBadRequest, CodeInvalidScope, 70011,
		fmt.Sprintf("The provided request must include a 'scope' input parameter. The provided value for the input parameter 'scope' is not valid. The scope %s is not valid.", scope)}
}

// errScopeNotDefault refuses a scope without a "<resource>/.default"
// (a permission, a bare resource, only OIDC scopes) as Entra does for
// client credentials: AADSTS1002012 (microsoft/CollectServiceFabricData#139,
// databricks/databricks-sql-nodejs#226, ctron/oidc-cli#7), under the
// interface's invalid_scope.
func errScopeNotDefault(scope string) *TokenError {
	return &TokenError{http.StatusBadRequest, CodeInvalidScope, 1002012,
		fmt.Sprintf("The provided value for scope %s is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier (application ID URI).", scope)}
}

// errMultipleResources refuses scopes of more than one resource as Entra
// does: AADSTS700022 (InvalidMultipleResourcesScope in Entra's error code
// reference), under the interface's invalid_scope.
func errMultipleResources(scope string) *TokenError {
	return &TokenError{http.StatusBadRequest, CodeInvalidScope, 700022,
		fmt.Sprintf("The provided value for the input parameter scope isn't valid because it contains more than one resource. Scope %s is not valid.", scope)}
}

// Unavailable is Entra's temporarily_unavailable (AADSTS90033): the
// sandbox cannot serve a token request now (its shared state is
// unreachable, or a scenario forces the outage); the caller sets
// Retry-After.
func Unavailable() *TokenError {
	return &TokenError{http.StatusServiceUnavailable, CodeTemporarilyUnavailable, 90033,
		"A transient error has occurred. Please try again."}
}

// InvalidRequest is a token request the sandbox refuses before the identity
// provider sees it (a bad X-Sandbox-* header value, plain HTTP to a --tls
// sandbox), in Entra's shape: invalid_request with AADSTS90023, Entra's
// "invalid request" code, so a client parsing token errors always can.
func InvalidRequest(message string) *TokenError {
	return &TokenError{http.StatusBadRequest, CodeInvalidRequest, 90023, message}
}

// ForcedTokenError returns the token error a failure scenario forces, by its
// OAuth error code (invalid_client, invalid_scope, invalid_grant) or by
// status 503. ok is false for anything else.
func ForcedTokenError(code string, status int) (e *TokenError, ok bool) {
	switch {
	case code == CodeInvalidClient:
		return &TokenError{http.StatusUnauthorized, CodeInvalidClient, 7000215, "Invalid client secret provided (forced by a sandbox scenario)."}, true
	case code == CodeInvalidScope:
		return &TokenError{http.StatusBadRequest, CodeInvalidScope, 70011, "The provided value for the input parameter 'scope' is not valid (forced by a sandbox scenario)."}, true
	case code == CodeInvalidGrant:
		return &TokenError{http.StatusBadRequest, CodeInvalidGrant, 70003, "The app requested an unsupported grant type (forced by a sandbox scenario)."}, true
	case code == "" && status == http.StatusServiceUnavailable, code == CodeTemporarilyUnavailable:
		return Unavailable(), true
	}
	return nil, false
}

// WriteThrottled answers a token request as Entra does when it throttles a
// client-credentials client: 429 with the body "Too Many Requests" in plain
// text, not an OAuth error body (AzureAD/microsoft-authentication-library-
// for-dotnet#2855; MSAL.NET's throttling guide). The caller sets
// Retry-After, which MSAL honours on 429 and 5xx alike.
func WriteThrottled(w http.ResponseWriter, r *http.Request) {
	allowCrossOrigin(w, r)
	setTokenHeaders(w.Header(), "text/plain; charset=utf-8", CorrelationID(r))
	w.Header().Set("x-ms-request-id", uuid.NewString())
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write([]byte(throttledBody)) // the client has gone if this fails
}

// throttledBody is the whole body of Entra's 429 on the token endpoint.
const throttledBody = "Too Many Requests"

// ErrorBody is Entra's token error body, as the identity provider writes
// it and as clients (and tests) read it. error_uri is left out: it would
// point at Microsoft's site, which knows nothing of sandbox errors.
type ErrorBody struct {
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
	ErrorCodes       []int  `json:"error_codes"`
	Timestamp        string `json:"timestamp"`
	TraceID          string `json:"trace_id"`
	CorrelationID    string `json:"correlation_id"`
}

// WriteTokenError writes e as Entra does: JSON with the description lines
// joined by CRLF, the error code list, a timestamp, a new trace id, and the
// caller's client-request-id as the correlation id.
func WriteTokenError(w http.ResponseWriter, r *http.Request, now time.Time, e *TokenError) {
	if o := ObservationFrom(r.Context()); o != nil {
		o.TokenError = e.Code
	}
	traceID := uuid.NewString()
	correlationID := CorrelationID(r)
	stamp := now.UTC().Format(entraTimestampLayout)
	body := ErrorBody{
		Error: e.Code,
		ErrorDescription: strings.Join([]string{
			e.Error(),
			"Trace ID: " + traceID,
			"Correlation ID: " + correlationID,
			"Timestamp: " + stamp,
		}, "\r\n"),
		ErrorCodes:    []int{e.AADSTS},
		Timestamp:     stamp,
		TraceID:       traceID,
		CorrelationID: correlationID,
	}
	allowCrossOrigin(w, r)
	setTokenHeaders(w.Header(), "application/json; charset=utf-8", correlationID)
	w.Header().Set("x-ms-request-id", traceID)
	// No WWW-Authenticate, even after HTTP Basic: RFC 6749 5.2 asks for one,
	// but Entra sends none, and clients built on the RFC (openid-client)
	// then raise a challenge error that hides invalid_client.
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(body) // the client has gone if this fails; nothing to do
}

// CorrelationID is the request's client-request-id when it is a GUID, else
// a new GUID. MSAL for Go and Python send it as a header, MSAL for
// JavaScript (and @azure/identity) as a query parameter; the header wins
// when both are there. Only a GUID is echoed so that arbitrary text never
// lands in a response.
func CorrelationID(r *http.Request) string {
	for _, v := range []string{r.Header.Get("client-request-id"), r.URL.Query().Get("client-request-id")} {
		if id, err := uuid.Parse(v); err == nil {
			return id.String()
		}
	}
	return uuid.NewString()
}
