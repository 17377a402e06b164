package idp

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gorilla/mux"
)

// maxFormBytes bounds a token request body; real ones are a few hundred bytes.
const maxFormBytes = 64 << 10

// oidcScopes are added by MSAL to every request; they are accepted beside the
// resource scope and ignored, as Entra does for client credentials.
var oidcScopes = map[string]bool{"openid": true, "profile": true, "offline_access": true}

// tokenResponse is the success body (section 2.4, plus Entra's ext_expires_in).
// It has no scope field: MSAL would then require it to echo the request.
type tokenResponse struct {
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	ExtExpiresIn int    `json:"ext_expires_in"`
	AccessToken  string `json:"access_token"`
}

// credentials are the client authentication of one token request.
type credentials struct {
	clientID string
	secret   string
	basic    bool
}

func (p *Provider) serveToken(w http.ResponseWriter, r *http.Request) {
	now := p.cfg.Clock.Now()
	allowCrossOrigin(w, r)
	if r.Method == http.MethodOptions {
		answerPreflight(w, r)
		return
	}
	issued, clientID, terr := p.handleToken(r)
	if terr != nil {
		p.logRefusal(r, clientID, terr)
		WriteTokenError(w, r, now, terr)
		return
	}
	if o := ObservationFrom(r.Context()); o != nil {
		o.ClientID, o.TokenID, o.TokenExpiresAt = clientID, issued.TokenID, issued.ExpiresAt
	}
	p.log.Info("token issued", "client_id", clientID, "uti", issued.TokenID, "expires_in", issued.ExpiresIn)
	setTokenHeaders(w.Header(), "application/json; charset=utf-8", CorrelationID(r))
	_ = json.NewEncoder(w).Encode(tokenResponse{
		TokenType:    "Bearer",
		ExpiresIn:    issued.ExpiresIn,
		ExtExpiresIn: issued.ExpiresIn,
		AccessToken:  issued.AccessToken,
	})
}

// handleToken runs the checks of a token request in Entra's order: method,
// tenant, body, parameters, grant type, client, scope. It returns the client
// id it saw (for logs) even when the request fails.
func (p *Provider) handleToken(r *http.Request) (Issued, string, *TokenError) {
	if r.Method != http.MethodPost {
		return Issued{}, "", errTokenMethod(r.Method)
	}
	tenant, named := mux.Vars(r)["tenant"]
	tenant = p.canonicalTenant(tenant)
	if terr := p.tokenTenantError(tenant); named && terr != nil {
		return Issued{}, "", terr
	}
	if terr := parseTokenForm(r); terr != nil {
		return Issued{}, "", terr
	}
	form := r.PostForm
	creds, terr := readCredentials(r)
	if terr != nil {
		return Issued{}, creds.clientID, terr
	}
	grant := form.Get("grant_type")
	switch {
	case grant == "":
		return Issued{}, creds.clientID, errMissingParameter("grant_type")
	case grant != "client_credentials":
		return Issued{}, creds.clientID, errUnsupportedGrant(p.redactor.Log(grant))
	case creds.clientID == "":
		return Issued{}, "", errMissingParameter("client_id")
	case creds.secret == "":
		return Issued{}, creds.clientID, errMissingSecret()
	case strings.TrimSpace(form.Get("scope")) == "":
		return Issued{}, creds.clientID, errMissingParameter("scope")
	}
	client, ok := p.clients.get(creds.clientID)
	if !ok {
		// Entra names the identifier it did not find; a secret or token
		// sent as client_id must not come back in an error body.
		return Issued{}, creds.clientID, errUnknownClient(p.redactor.Log(creds.clientID), p.cfg.Tenant)
	}
	switch checkSecret(client, creds.secret, p.now(client.ClientID)) {
	case secretWrong:
		return Issued{}, creds.clientID, errWrongSecret(creds.clientID)
	case secretExpired:
		return Issued{}, creds.clientID, errExpiredSecret(creds.clientID)
	}
	if named && tenant == tenantOrganizations {
		return Issued{}, creds.clientID, errSingleTenant(creds.clientID)
	}
	resource, terr := resourceOf(form.Get("scope"), client.Resources, p.redactor.Log)
	if terr != nil {
		return Issued{}, creds.clientID, terr
	}
	issued, err := p.issue(client, resource, p.Issuer(p.BaseURL(r)))
	if err != nil {
		p.log.Error("token signing failed", "client_id", creds.clientID, "err", err)
		return Issued{}, creds.clientID, &TokenError{http.StatusInternalServerError, "server_error", 90100, "The token could not be signed."}
	}
	return issued, creds.clientID, nil
}

// parseTokenForm checks the content type and parses the body once; later
// calls (after RequesterOf) reuse the parsed form. Query parameters are never
// read: credentials do not belong in a URL. A parameter given twice is
// refused (RFC 6749 section 3.2), every time the form is looked at.
func parseTokenForm(r *http.Request) *TokenError {
	if r.PostForm != nil {
		return repeatedParameter(r.PostForm)
	}
	ct := r.Header.Get("Content-Type")
	mediaType, _, err := mime.ParseMediaType(ct)
	if err != nil || mediaType != "application/x-www-form-urlencoded" {
		return errWrongContentType(ct)
	}
	r.Body = http.MaxBytesReader(nil, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		// RequesterOf parses before the handler does: leave the form unparsed
		// and the body failing the same way, so the handler answers it.
		r.PostForm, r.Form = nil, nil
		r.Body = failedBody{err}
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return &TokenError{http.StatusRequestEntityTooLarge, CodeInvalidRequest, 900144, "The request body is larger than the token endpoint accepts."}
		}
		return &TokenError{http.StatusBadRequest, CodeInvalidRequest, 900144, "The request body is not a valid form: " + err.Error()}
	}
	return repeatedParameter(r.PostForm)
}

// repeatedParameter refuses a form that gives any parameter more than
// once: taking the first value would silently ignore what a client meant.
// The first repeated name in sorted order is named.
func repeatedParameter(form url.Values) *TokenError {
	var repeated []string
	for name, values := range form {
		if len(values) > 1 {
			repeated = append(repeated, name)
		}
	}
	if len(repeated) == 0 {
		return nil
	}
	slices.Sort(repeated)
	return errRepeatedParameter(repeated[0])
}

// failedBody is a request body whose reading already failed with err.
type failedBody struct{ err error }

func (b failedBody) Read([]byte) (int, error) { return 0, b.err }
func (b failedBody) Close() error             { return nil }

// readCredentials takes the client credentials from HTTP Basic
// (client_secret_basic) or the form (client_secret_post), never both.
func readCredentials(r *http.Request) (credentials, *TokenError) {
	form := r.PostForm
	formCreds := credentials{clientID: form.Get("client_id"), secret: form.Get("client_secret")}
	if r.Header.Get("Authorization") == "" {
		return formCreds, nil
	}
	user, pass, ok := r.BasicAuth()
	if !ok {
		return formCreds, errMalformedBasic()
	}
	// RFC 6749 2.3.1: both parts are form-url-encoded before base64.
	id, err1 := url.QueryUnescape(user)
	secret, err2 := url.QueryUnescape(pass)
	if err1 != nil || err2 != nil {
		return formCreds, errMalformedBasic()
	}
	if formCreds.secret != "" {
		return credentials{clientID: id}, errTwoAuthMethods()
	}
	if formCreds.clientID != "" && formCreds.clientID != id {
		return credentials{clientID: id}, errTwoAuthMethods()
	}
	return credentials{clientID: id, secret: secret, basic: true}, nil
}

// secretsEqual compares in constant time; hashing first hides the length.
func secretsEqual(want, got string) bool {
	a := sha256.Sum256([]byte(want))
	b := sha256.Sum256([]byte(got))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// resourceOf finds the one resource a scope string asks for: exactly one
// "<resource>/.default" among the OIDC scopes MSAL adds, for a resource the
// client may use, named by its App ID URI or by its application id (Entra
// takes either). Like Entra, a scope that is not "<resource>/.default"
// (a permission, a bare resource, only OIDC scopes) is AADSTS1002012 and
// two resources AADSTS700022; a resource the client may not use is
// AADSTS70011. All are the interface's invalid_scope. An error echoes the
// scope through echo, which hides a credential pasted into it: error
// bodies never carry one.
func resourceOf(scope string, allowed []string, echo func(string) string) (requestedResource, *TokenError) {
	var resources []string
	for _, s := range strings.Fields(scope) {
		if oidcScopes[s] {
			continue
		}
		resource, ok := strings.CutSuffix(s, "/.default")
		if !ok || resource == "" {
			return requestedResource{}, errScopeNotDefault(echo(s))
		}
		resources = append(resources, resource)
	}
	switch len(resources) {
	case 0:
		return requestedResource{}, errScopeNotDefault(echo(scope))
	case 1:
	default:
		return requestedResource{}, errMultipleResources(echo(scope))
	}
	for _, a := range allowed {
		if a == resources[0] || ApplicationID(a) == resources[0] {
			return requestedResource{appIDURI: a, named: resources[0]}, nil
		}
	}
	return requestedResource{}, errInvalidScope(echo(resources[0] + "/.default"))
}

// requestedResource is the API a token request asks for: its App ID URI,
// and how the scope named it (the App ID URI or the application id), which
// a v1.0 token's aud repeats.
type requestedResource struct {
	appIDURI, named string
}

// TokenRequester is who a token request says it comes from, read before
// the token endpoint answers: scenario rules bound to a client and the
// request journal need it.
type TokenRequester struct {
	// ClientID is the client id the form or HTTP Basic names, checked or
	// not; "" when the request carries none or is not a valid form.
	ClientID string
	// Registered says ClientID is a client of this environment.
	Registered bool
	// Authenticated says the secret sent is that client's: only then may
	// the request be counted as the client's own.
	Authenticated bool
}

// RequesterOf reads the credentials of a token request without answering
// it. The body is parsed once and left for the token endpoint.
func (p *Provider) RequesterOf(r *http.Request) TokenRequester {
	if r.Method != http.MethodPost || parseTokenForm(r) != nil {
		return TokenRequester{}
	}
	creds, terr := readCredentials(r)
	if creds.clientID == "" {
		return TokenRequester{}
	}
	client, registered := p.clients.get(creds.clientID)
	return TokenRequester{
		ClientID:   creds.clientID,
		Registered: registered,
		Authenticated: registered && terr == nil && creds.secret != "" &&
			checkSecret(client, creds.secret, p.now(client.ClientID)) == secretOK,
	}
}
