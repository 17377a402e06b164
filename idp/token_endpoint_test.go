package idp_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// Clients whose credentials exercise encoding, environments and lifetimes.
const (
	oddID     = "odd client+id:50%&x"
	oddSecret = "s3cr:t +%&=?/é"
)

func oddClient() referrals.Client {
	return referrals.Client{ClientID: oddID, ClientSecret: oddSecret, Roles: []string{"Trials.Read"}, Resources: []string{idp.DefaultResource}}
}

func productionClient() referrals.Client {
	return referrals.Client{ClientID: "prod-partner", ClientSecret: "prod-partner-secret", Roles: []string{"Trials.Read"},
		Resources: []string{idp.DefaultResource}, Environment: referrals.EnvironmentProduction}
}

// without returns form minus the named parameters.
func without(form url.Values, names ...string) url.Values {
	out := url.Values{}
	for k, v := range form {
		out[k] = v
	}
	for _, n := range names {
		out.Del(n)
	}
	return out
}

// with returns form with name set to value.
func with(form url.Values, name, value string) url.Values {
	out := without(form)
	out.Set(name, value)
	return out
}

func TestTokenEndpointSucceeds(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, withClients(oddClient()))
	basicForm := url.Values{"grant_type": {"client_credentials"}, "scope": {defaultScope}}
	tests := []struct {
		name string
		req  tokenRequest
	}{
		{"client_secret_post on the tenant path", tokenRequest{form: postForm(partnerID, partnerSecret, defaultScope)}},
		{"client_secret_post on the tenant-less path", tokenRequest{path: "/oauth2/v2.0/token", form: postForm(partnerID, partnerSecret, defaultScope)}},
		{"client_secret_basic", tokenRequest{form: basicForm, authorization: basicAuth(partnerID, partnerSecret)}},
		{"client_secret_basic on the tenant-less path", tokenRequest{path: "/oauth2/v2.0/token", form: basicForm, authorization: basicAuth(partnerID, partnerSecret)}},
		{"basic with the same client_id also in the form", tokenRequest{form: with(basicForm, "client_id", partnerID), authorization: basicAuth(partnerID, partnerSecret)}},
		{"OIDC scopes beside the resource are ignored", tokenRequest{form: postForm(partnerID, partnerSecret, "openid "+defaultScope+" profile offline_access")}},
		{"content type with charset", tokenRequest{contentType: formContentType + "; charset=utf-8", form: postForm(partnerID, partnerSecret, defaultScope)}},
		{"other API client for its own resource", tokenRequest{form: postForm(otherAPIID, otherAPISecret, otherAPIScope)}},
		{"odd id and secret in the form", tokenRequest{form: postForm(oddID, oddSecret, defaultScope)}},
		{"odd id and secret in Basic, form-url-encoded", tokenRequest{form: basicForm, authorization: basicAuth(oddID, oddSecret)}},
		{"client-request-id that is not a GUID does not matter", tokenRequest{form: postForm(partnerID, partnerSecret, defaultScope), header: map[string]string{"client-request-id": "x"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := requireToken(t, s.do(t, tc.req))
			if b.ExpiresIn != 3599 || b.ExtExpiresIn != 3599 {
				t.Errorf("expires_in %d ext_expires_in %d, want 3599", b.ExpiresIn, b.ExtExpiresIn)
			}
			if got := strings.Count(b.AccessToken, "."); got != 2 {
				t.Errorf("access_token %q is not a compact JWT", b.AccessToken)
			}
		})
	}
}

func TestTokenEndpointErrors(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, withClients(oddClient(), productionClient()))
	good := postForm(partnerID, partnerSecret, defaultScope)
	basicForm := url.Values{"grant_type": {"client_credentials"}, "scope": {defaultScope}}
	var (
		badRequest = func(aadsts int) wantError { return wantError{http.StatusBadRequest, idp.CodeInvalidRequest, aadsts} }
		badClient  = func(aadsts int) wantError { return wantError{http.StatusUnauthorized, idp.CodeInvalidClient, aadsts} }
		badScope   = wantError{http.StatusBadRequest, idp.CodeInvalidScope, 70011}
		notDefault = wantError{http.StatusBadRequest, idp.CodeInvalidScope, 1002012}
		badGrant   = wantError{http.StatusBadRequest, idp.CodeInvalidGrant, 70003}
		badTenant  = wantError{http.StatusBadRequest, idp.CodeInvalidTenant, 90002}
	)
	// Where each expected answer comes from: the interface's three errors,
	// or Entra's own answer where the interface is silent (the threads and
	// pages named here; docs/identity-provider.md lists them).
	const (
		ifaceEntra    = "interface 7.1 (error), Entra's code"
		tenantSource  = "Entra: microsoftgraph/windowsupdates-webapplication-sample#6, james-gould/azure-keyvault-emulator#324"
		defaultSource = "Entra: microsoft/CollectServiceFabricData#139, databricks/databricks-sql-nodejs#226, ctron/oidc-cli#7"
		twoResources  = "Entra: reference-error-codes.md AADSTS700022"
		missingParam  = "Entra: MicrosoftDocs/azure-docs#43780, openid/AppAuth-iOS#671"
		missingSecret = "Entra: MicrosoftDocs/azure-docs#30777, microsoftgraph/microsoft-graph-docs#6060"
		duplicated    = "Entra: Azure/azure-sdk-for-java#31191, #31733"
		malformed     = "no Entra capture: AADSTS9002313 'Request is malformed or invalid'"
		sandboxBound  = "sandbox bound (docs/security.md)"
	)
	tests := []struct {
		name   string
		req    tokenRequest
		want   wantError
		source string
	}{
		{"unknown tenant GUID", tokenRequest{path: "/00000000-1111-2222-3333-444444444444/oauth2/v2.0/token", form: good}, badTenant, tenantSource},
		{"unknown tenant name", tokenRequest{path: "/contoso.onmicrosoft.com/oauth2/v2.0/token", form: good}, badTenant, tenantSource},
		{"unknown client in the form", tokenRequest{form: postForm("nobody", "x", defaultScope)}, badClient(700016), ifaceEntra},
		{"unknown client in Basic", tokenRequest{form: basicForm, authorization: basicAuth("nobody", "x")}, badClient(700016), ifaceEntra},
		{"wrong secret in the form", tokenRequest{form: postForm(partnerID, "wrong", defaultScope)}, badClient(7000215), ifaceEntra},
		{"wrong secret in Basic", tokenRequest{form: basicForm, authorization: basicAuth(partnerID, "wrong")}, badClient(7000215), ifaceEntra},
		{"secret of another client", tokenRequest{form: postForm(partnerID, otherAPISecret, defaultScope)}, badClient(7000215), ifaceEntra},
		{"secret differing by case", tokenRequest{form: postForm(partnerID, strings.ToUpper(partnerSecret), defaultScope)}, badClient(7000215), ifaceEntra},
		{"secret with a suffix", tokenRequest{form: postForm(partnerID, partnerSecret+"x", defaultScope)}, badClient(7000215), ifaceEntra},
		{"odd secret in Basic not url-encoded ('+' reads as space)", tokenRequest{form: basicForm,
			authorization: "Basic " + b64(url.QueryEscape(oddID)+":"+strings.ReplaceAll(url.QueryEscape(oddSecret), "%2B", "+"))}, badClient(7000215), ifaceEntra},
		{"client of the other environment", tokenRequest{form: postForm("prod-partner", "prod-partner-secret", defaultScope)}, badClient(700016), ifaceEntra},
		{"Authorization that is not Basic", tokenRequest{form: good, authorization: "Bearer abc"}, badClient(9002313), malformed},
		{"both Basic and form secret", tokenRequest{form: good, authorization: basicAuth(partnerID, partnerSecret)}, badRequest(9002313), malformed},
		{"Basic and a different form client_id", tokenRequest{form: with(basicForm, "client_id", otherAPIID), authorization: basicAuth(partnerID, partnerSecret)}, badRequest(9002313), malformed},
		{"resource the client may not use", tokenRequest{form: postForm(otherAPIID, otherAPISecret, defaultScope)}, badScope, ifaceEntra},
		{"other resource for the partner", tokenRequest{form: postForm(partnerID, partnerSecret, otherAPIScope)}, badScope, ifaceEntra},
		{"unknown resource", tokenRequest{form: postForm(partnerID, partnerSecret, "api://nowhere/.default")}, badScope, ifaceEntra},
		{"application id of another API", tokenRequest{form: postForm(partnerID, partnerSecret, idp.ApplicationID("api://other-api")+"/.default")}, badScope, ifaceEntra},
		{"scope without /.default", tokenRequest{form: postForm(partnerID, partnerSecret, idp.DefaultResource+"/Trials.Read")}, notDefault, defaultSource},
		{"bare resource", tokenRequest{form: postForm(partnerID, partnerSecret, idp.DefaultResource)}, notDefault, defaultSource},
		{"only OIDC scopes", tokenRequest{form: postForm(partnerID, partnerSecret, "openid profile offline_access")}, notDefault, defaultSource},
		{"two resources", tokenRequest{form: postForm(partnerID, partnerSecret, defaultScope+" "+otherAPIScope)}, wantError{http.StatusBadRequest, idp.CodeInvalidScope, 700022}, twoResources},
		{"a permission beside the resource", tokenRequest{form: postForm(partnerID, partnerSecret, defaultScope+" Trials.Read")}, notDefault, defaultSource},
		{"grant_type password", tokenRequest{form: with(good, "grant_type", "password")}, badGrant, ifaceEntra},
		{"grant_type authorization_code", tokenRequest{form: with(good, "grant_type", "authorization_code")}, badGrant, ifaceEntra},
		{"grant_type refresh_token", tokenRequest{form: with(good, "grant_type", "refresh_token")}, badGrant, ifaceEntra},
		{"missing grant_type", tokenRequest{form: without(good, "grant_type")}, badRequest(900144), missingParam},
		{"missing client_id", tokenRequest{form: without(good, "client_id")}, badRequest(900144), missingParam},
		{"missing client_secret", tokenRequest{form: without(good, "client_secret")}, badRequest(7000216), missingSecret},
		{"missing scope", tokenRequest{form: without(good, "scope")}, badRequest(900144), missingParam},
		{"blank scope", tokenRequest{form: with(good, "scope", "  ")}, badRequest(900144), missingParam},
		{"empty body", tokenRequest{}, badRequest(900144), missingParam},
		{"credentials in the query string only", tokenRequest{path: tokenPath() + "?" + good.Encode(), form: url.Values{"grant_type": {"client_credentials"}, "scope": {defaultScope}}}, badRequest(900144), missingParam},
		{"JSON body", tokenRequest{contentType: "application/json", body: `{"grant_type":"client_credentials","client_id":"sandbox-partner","client_secret":"sandbox-partner-secret","scope":"api://referrals-sandbox/.default"}`}, badRequest(900144), missingParam},
		{"no content type", tokenRequest{contentType: "none", form: good}, badRequest(900144), missingParam},
		{"multipart body", tokenRequest{contentType: "multipart/form-data; boundary=x", body: "--x--"}, badRequest(900144), missingParam},
		{"text/plain body", tokenRequest{contentType: "text/plain", form: good}, badRequest(900144), missingParam},
		{"repeated scope", tokenRequest{body: good.Encode() + "&scope=" + url.QueryEscape(otherAPIScope)}, badRequest(9000411), duplicated},
		{"repeated client_id", tokenRequest{body: good.Encode() + "&client_id=" + otherAPIID}, badRequest(9000411), duplicated},
		{"repeated client_secret, same value", tokenRequest{body: good.Encode() + "&client_secret=" + partnerSecret}, badRequest(9000411), duplicated},
		{"repeated grant_type", tokenRequest{body: good.Encode() + "&grant_type=client_credentials"}, badRequest(9000411), duplicated},
		{"repeated client_id beside Basic", tokenRequest{body: basicForm.Encode() + "&client_id=" + partnerID + "&client_id=" + partnerID, authorization: basicAuth(partnerID, partnerSecret)}, badRequest(9000411), duplicated},
		{"body over the size limit", tokenRequest{body: good.Encode() + "&pad=" + strings.Repeat("a", 70<<10)}, wantError{http.StatusRequestEntityTooLarge, idp.CodeInvalidRequest, 0}, sandboxBound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("the expected answer's source: %s", tc.source)
				}
			})
			rep := s.do(t, tc.req)
			checkTokenError(t, rep, tc.want, fixedTime())
			// Entra sends no challenge, even after HTTP Basic; one would make
			// openid-client raise a challenge error hiding invalid_client.
			if challenge := rep.header.Get("WWW-Authenticate"); challenge != "" {
				t.Errorf("token error with WWW-Authenticate %q; Entra sends none", challenge)
			}
		})
	}
}

// b64 is standard base64, for Basic headers built by hand.
func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// TestTokenEndpointWrongMethod: Entra answers any method but POST and
// OPTIONS with 400 invalid_request AADSTS900561, not 405
// (NunoFilipeMota/PublicScripts#5).
func TestTokenEndpointWrongMethod(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	for _, method := range []string{http.MethodGet, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodHead} {
		for _, path := range []string{tokenPath(), "/oauth2/v2.0/token"} {
			t.Run(method+" "+path, func(t *testing.T) {
				rep := s.do(t, tokenRequest{method: method, path: path, form: postForm(partnerID, partnerSecret, defaultScope)})
				if method == http.MethodHead {
					if rep.status != http.StatusBadRequest {
						t.Errorf("status %d, want 400", rep.status)
					}
					return
				}
				b := checkTokenError(t, rep, wantError{http.StatusBadRequest, idp.CodeInvalidRequest, 900561}, fixedTime())
				want := "AADSTS900561: The endpoint only accepts POST, OPTIONS requests. Received a " + method + " request."
				if first := strings.Split(b.ErrorDescription, "\r\n")[0]; first != want {
					t.Errorf("first description line %q, want %q", first, want)
				}
			})
		}
	}
}

// TestTokenEndpointPreflight: Entra's token endpoint accepts OPTIONS (its
// GET answer says so), so a browser's CORS preflight gets the methods and
// the headers it asked for, and the POST that follows may be read.
func TestTokenEndpointPreflight(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	const asked = "content-type, client-request-id, x-client-sku"
	tests := []struct {
		name        string
		askHeaders  string
		wantHeaders string
	}{
		{"headers asked for are allowed", asked, asked},
		{"no headers asked for", "", ""},
		{"a list that is not header names is not echoed", "content-type, x(y)", ""},
		{"an overlong list is not echoed", strings.Repeat("x-a,", 300) + "x-a", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			header := map[string]string{"Origin": "https://app.example.test", "Access-Control-Request-Method": "POST"}
			if tc.askHeaders != "" {
				header["Access-Control-Request-Headers"] = tc.askHeaders
			}
			rep := s.do(t, tokenRequest{method: http.MethodOptions, contentType: "none", header: header})
			if rep.status != http.StatusOK || len(rep.body) != 0 {
				t.Fatalf("preflight: %d %q, want 200 with no body", rep.status, rep.body)
			}
			for name, want := range map[string]string{
				"Access-Control-Allow-Origin":  "*",
				"Access-Control-Allow-Methods": "POST, OPTIONS",
				"Access-Control-Allow-Headers": tc.wantHeaders,
				"Access-Control-Max-Age":       "86400",
			} {
				if got := rep.header.Get(name); got != want {
					t.Errorf("%s %q, want %q", name, got, want)
				}
			}
		})
	}
	t.Run("the POST after it may be read", func(t *testing.T) {
		rep := s.do(t, tokenRequest{form: postForm(partnerID, partnerSecret, defaultScope), header: map[string]string{"Origin": "https://app.example.test"}})
		requireToken(t, rep)
		if got := rep.header.Get("Access-Control-Allow-Origin"); got != "*" {
			t.Errorf("Access-Control-Allow-Origin %q, want *", got)
		}
	})
}

func TestTokenErrorTimestampFollowsTheClock(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.clock.Advance(49*time.Hour + 7*time.Minute + 500*time.Millisecond)
	rep := s.do(t, tokenRequest{form: postForm(partnerID, "wrong", defaultScope)})
	b := checkTokenError(t, rep, wantError{http.StatusUnauthorized, idp.CodeInvalidClient, 7000215}, s.clock.Now())
	if b.Timestamp != "2026-11-23 15:10:07Z" {
		t.Errorf("timestamp %q, want 2026-11-23 15:10:07Z", b.Timestamp)
	}
}

func TestTokenErrorDescriptionNamesTheProblem(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tests := []struct {
		name     string
		form     url.Values
		want     wantError
		wantLine string
	}{
		{"wrong secret", postForm(partnerID, "wrong", defaultScope), wantError{http.StatusUnauthorized, idp.CodeInvalidClient, 7000215},
			"AADSTS7000215: Invalid client secret provided."},
		{"unknown client", postForm("nobody", "x", defaultScope), wantError{http.StatusUnauthorized, idp.CodeInvalidClient, 700016},
			"AADSTS700016: Application with identifier 'nobody' was not found"},
		{"missing scope", without(postForm(partnerID, partnerSecret, ""), "scope"), wantError{http.StatusBadRequest, idp.CodeInvalidRequest, 900144},
			"AADSTS900144: The request body must contain the following parameter: 'scope'."},
		{"bad grant", with(postForm(partnerID, partnerSecret, defaultScope), "grant_type", "password"), wantError{http.StatusBadRequest, idp.CodeInvalidGrant, 70003},
			"AADSTS70003: "},
		{"bad scope", postForm(partnerID, partnerSecret, otherAPIScope), wantError{http.StatusBadRequest, idp.CodeInvalidScope, 70011},
			"AADSTS70011: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := checkTokenError(t, s.do(t, tokenRequest{form: tc.form}), tc.want, fixedTime())
			if first := strings.Split(b.ErrorDescription, "\r\n")[0]; !strings.HasPrefix(first, tc.wantLine) {
				t.Errorf("first description line %q, want prefix %q", first, tc.wantLine)
			}
		})
	}
}

func TestCorrelationID(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	const given = "0b7c2a8e-5d4f-4c3b-9a21-7e6f5d4c3b2a"
	tests := []struct {
		name   string
		header string
		want   string // "" means a fresh GUID, not the header
	}{
		{"GUID is echoed", given, given},
		{"uppercase GUID is echoed (lowercased)", strings.ToUpper(given), given},
		{"not a GUID", "my-request-1", ""},
		{"text that merely contains a GUID", "x" + given, ""},
		{"absent", "", ""},
	}
	for _, tc := range tests {
		for _, fail := range []bool{true, false} {
			name := tc.name + map[bool]string{true: " (error)", false: " (success)"}[fail]
			t.Run(name, func(t *testing.T) {
				secret := partnerSecret
				if fail {
					secret = "wrong"
				}
				req := tokenRequest{form: postForm(partnerID, secret, defaultScope)}
				if tc.header != "" {
					req.header = map[string]string{"client-request-id": tc.header}
				}
				rep := s.do(t, req)
				got := rep.header.Get("client-request-id")
				if fail {
					got = checkTokenError(t, rep, wantError{http.StatusUnauthorized, idp.CodeInvalidClient, 7000215}, fixedTime()).CorrelationID
					if h := rep.header.Get("client-request-id"); h != got {
						t.Errorf("client-request-id header %q differs from correlation_id %q", h, got)
					}
				} else {
					requireToken(t, rep)
				}
				switch {
				case tc.want != "" && got != tc.want:
					t.Errorf("correlation id %q, want %q", got, tc.want)
				case tc.want == "" && (!guidPattern.MatchString(got) || strings.Contains(tc.header, got)):
					t.Errorf("correlation id %q, want a fresh GUID (header %q)", got, tc.header)
				}
			})
		}
	}
}

func TestTraceAndCorrelationIDsAreFreshPerRequest(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	seen := map[string]bool{}
	for range 3 {
		b := checkTokenError(t, s.do(t, tokenRequest{form: postForm(partnerID, "wrong", defaultScope)}),
			wantError{http.StatusUnauthorized, idp.CodeInvalidClient, 7000215}, fixedTime())
		for _, id := range []string{b.TraceID, b.CorrelationID} {
			if seen[id] {
				t.Errorf("id %s repeated across requests", id)
			}
			seen[id] = true
		}
	}
}

func TestTokenLifetime(t *testing.T) {
	t.Parallel()
	short := referrals.Client{ClientID: "short-lived", ClientSecret: "short-secret", Resources: []string{idp.DefaultResource}, TokenLifetimeSeconds: 120}
	tests := []struct {
		name     string
		lifetime time.Duration
		client   string
		secret   string
		want     int
	}{
		{"default", 0, partnerID, partnerSecret, 3599},
		{"global override", 10 * time.Minute, partnerID, partnerSecret, 600},
		{"per-client override", 0, "short-lived", "short-secret", 120},
		{"per-client beats global", 10 * time.Minute, "short-lived", "short-secret", 120},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSandbox(t, withClients(short), func(c *idp.Config) { c.TokenLifetime = tc.lifetime })
			b := requireToken(t, s.do(t, tokenRequest{form: postForm(tc.client, tc.secret, defaultScope)}))
			if b.ExpiresIn != tc.want || b.ExtExpiresIn != tc.want {
				t.Errorf("expires_in %d ext_expires_in %d, want %d", b.ExpiresIn, b.ExtExpiresIn, tc.want)
			}
			claims := segment(t, b.AccessToken, 1)
			var iat, exp int64
			mustJSON(t, claims["iat"], &iat)
			mustJSON(t, claims["exp"], &exp)
			if exp-iat != int64(tc.want) {
				t.Errorf("exp-iat = %d, want %d", exp-iat, tc.want)
			}
		})
	}
}

func TestProductionEnvironmentHidesDevelopmentClients(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, withClients(productionClient()), func(c *idp.Config) { c.Environment = referrals.EnvironmentProduction })
	checkTokenError(t, s.do(t, tokenRequest{form: postForm(partnerID, partnerSecret, defaultScope)}),
		wantError{http.StatusUnauthorized, idp.CodeInvalidClient, 700016}, fixedTime())
	requireToken(t, s.do(t, tokenRequest{form: postForm("prod-partner", "prod-partner-secret", defaultScope)}))
}
