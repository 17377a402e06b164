package idp_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// verifyIndependently checks raw with golang-jwt (not the sandbox's own JOSE
// library) against the keys served as the JWKS, at the sandbox's fixed time.
func verifyIndependently(t *testing.T, s *sandbox, raw, audience, iss string) jwt.MapClaims {
	t.Helper()
	keys := s.fetchPublicKeys(t)
	parser := jwt.NewParser(
		jwt.WithValidMethods([]string{"RS256"}),
		jwt.WithTimeFunc(fixedTime),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithAudience(audience),
		jwt.WithIssuer(iss),
	)
	claims := jwt.MapClaims{}
	tok, err := parser.ParseWithClaims(raw, claims, func(tok *jwt.Token) (any, error) {
		kid, _ := tok.Header["kid"].(string)
		key, ok := keys[kid]
		if !ok {
			return nil, fmt.Errorf("kid %q is not in the served JWKS", kid)
		}
		return key, nil
	})
	if err != nil {
		t.Fatalf("golang-jwt refuses the token: %v", err)
	}
	if tok.Header["typ"] != "JWT" || tok.Header["alg"] != "RS256" || tok.Header["kid"] != s.keys.KeyID() {
		t.Errorf("header %v, want typ JWT, alg RS256, kid %s", tok.Header, s.keys.KeyID())
	}
	return claims
}

// tokenFormats are Entra's two access-token formats, with what each
// writes where they differ (entra-docs access-token-claims-reference.md
// and access-tokens.md): iss, aud (the API's application id in v2.0, the
// App ID URI asked for in v1.0), the client as azp or appid, and ver.
var tokenFormats = []struct {
	version     idp.TokenVersion
	issuer      func(base string) string
	audience    func(resource string) string
	client      [2]string // the client id claim and its authentication claim
	absent      []string  // the other format's claims
	ver         string
	description string
}{
	{idp.TokenV2, func(base string) string { return base + "/" + idp.DefaultTenant + "/v2.0" }, idp.ApplicationID,
		[2]string{"azp", "azpacr"}, []string{"appid", "appidacr"}, "2.0", "v2.0 (default)"},
	{idp.TokenV1, func(base string) string { return base + "/" + idp.DefaultTenant + "/" }, func(r string) string { return r },
		[2]string{"appid", "appidacr"}, []string{"azp", "azpacr"}, "1.0", "v1.0"},
}

func TestAccessTokenVerifiesAgainstServedJWKS(t *testing.T) {
	t.Parallel()
	noRoles := referrals.Client{ClientID: "no-roles", ClientSecret: "no-roles-secret", Resources: []string{idp.DefaultResource}}
	allRoles := []string{"Trials.Read", "Referrals.Read", "Referrals.Write", "QualifiedReferrals.Read", "QualifiedReferrals.Write"}
	tests := []struct {
		name      string
		publicURL string
		path      string
		client    string
		secret    string
		scope     string
		resource  string
		wantRoles []string // nil: no roles claim, as Entra leaves out a claim without a value
		byID      bool     // the scope names the API by its application id
	}{
		{"partner", "", tokenPath(), partnerID, partnerSecret, defaultScope, idp.DefaultResource, allRoles, false},
		{"tenant-less path", "", "/oauth2/v2.0/token", partnerID, partnerSecret, defaultScope, idp.DefaultResource, allRoles, false},
		{"other API", "", tokenPath(), otherAPIID, otherAPISecret, otherAPIScope, "api://other-api", []string{"Trials.Read"}, false},
		{"client without roles", "", tokenPath(), "no-roles", "no-roles-secret", defaultScope, idp.DefaultResource, nil, false},
		{"public URL overrides the request's", "https://sandbox.example.test:8443/", tokenPath(), partnerID, partnerSecret, defaultScope, idp.DefaultResource, allRoles, false},
		// Entra takes a resource's application id in place of its App ID
		// URI (entra-docs scopes-oidc.md, "/.default" scope); a v1.0 token's
		// aud then repeats the id.
		{"scope naming the API by its application id", "", tokenPath(), partnerID, partnerSecret, idp.ApplicationID(idp.DefaultResource) + "/.default", idp.DefaultResource, allRoles, true},
	}
	for _, format := range tokenFormats {
		for _, tc := range tests {
			t.Run(format.description+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				s := newSandbox(t, withClients(noRoles), func(c *idp.Config) { c.PublicURL, c.TokenVersion = tc.publicURL, format.version })
				wantIss := format.issuer(s.server.URL)
				if tc.publicURL != "" {
					wantIss = format.issuer("https://sandbox.example.test:8443")
				}
				wantAud := format.audience(tc.resource)
				if tc.byID {
					wantAud = idp.ApplicationID(tc.resource)
				}
				form := postForm(tc.client, tc.secret, tc.scope)
				raw := requireToken(t, s.do(t, tokenRequest{path: tc.path, form: form})).AccessToken
				claims := verifyIndependently(t, s, raw, wantAud, wantIss)

				iat := fixedTime().Truncate(time.Second).Unix()
				wantNumbers := map[string]int64{"iat": iat, "nbf": iat, "exp": iat + 3599}
				for name, want := range wantNumbers {
					if got, ok := claims[name].(float64); !ok || int64(got) != want {
						t.Errorf("%s = %v, want %d", name, claims[name], want)
					}
				}
				wantStrings := map[string]string{
					"aud": wantAud, "iss": wantIss, format.client[0]: tc.client, format.client[1]: "1",
					"tid": idp.DefaultTenant, "ver": format.ver, "idtyp": "app",
				}
				for name, want := range wantStrings {
					if got, ok := claims[name].(string); !ok || got != want {
						t.Errorf("%s = %#v, want the string %q", name, claims[name], want)
					}
				}
				for _, name := range format.absent {
					if v, ok := claims[name]; ok {
						t.Errorf("%s = %#v in a %s token; that format has no such claim", name, v, format.ver)
					}
				}
				// x5t, the key's certificate thumbprint, is a legacy header
				// of v1.0 tokens only.
				if _, x5t := segment(t, raw, 0)["x5t"]; x5t != (format.version == idp.TokenV1) {
					t.Errorf("x5t in the header: %v, want it in v1.0 tokens only", x5t)
				}
				if format.version == idp.TokenV2 && !guidPattern.MatchString(wantAud) {
					t.Errorf("v2.0 aud %q, want the API's application id (a GUID)", wantAud)
				}
				oid, _ := claims["oid"].(string)
				if !guidPattern.MatchString(oid) || claims["sub"] != oid {
					t.Errorf("oid %#v sub %#v, want one GUID in both", claims["oid"], claims["sub"])
				}
				if uti, _ := claims["uti"].(string); uti == "" {
					t.Errorf("uti %#v, want a non-empty string", claims["uti"])
				}
				rolesJSON, present := segment(t, raw, 1)["roles"]
				var roles []string
				switch {
				case tc.wantRoles == nil && present:
					t.Errorf("roles %s, want no roles claim: Entra leaves out a claim without a value", rolesJSON)
				case tc.wantRoles != nil && (json.Unmarshal(rolesJSON, &roles) != nil || !slices.Equal(roles, tc.wantRoles)):
					t.Errorf("roles %s, want %q as a JSON array", rolesJSON, tc.wantRoles)
				}
				// Entra writes aud as a plain string; some resource servers
				// reject an array.
				if aud := segment(t, raw, 1)["aud"]; len(aud) == 0 || aud[0] != '"' {
					t.Errorf("aud is %s in JSON, want a string", aud)
				}
				// The sandbox's own API accepts what it issues.
				if _, err := s.provider.Validate(raw, idp.Expectation{Audience: tc.resource, ApplicationID: idp.ApplicationID(tc.resource),
					Issuers: []string{issuer(s.server.URL)}, AcceptIssuer: s.provider.OwnIssuer}); err != nil && tc.publicURL == "" {
					t.Errorf("Validate: %v", err)
				}
			})
		}
	}
}

// TestDiscoveryNamesTheV2Issuer: the v2.0 discovery document names the
// v2.0 issuer, the iss of the default tokens, so a client verifying tokens
// against discovery (jose) accepts them; with v1.0 tokens it still does, as
// Entra's v2.0 document does, since openid-client requires that issuer to
// be the URL it discovered from.
func TestDiscoveryNamesTheV2Issuer(t *testing.T) {
	t.Parallel()
	for _, format := range tokenFormats {
		t.Run(format.description, func(t *testing.T) {
			s := newSandbox(t, func(c *idp.Config) { c.TokenVersion = format.version })
			var doc struct {
				Issuer string `json:"issuer"`
			}
			mustJSON(t, s.get(t, "/"+idp.DefaultTenant+"/v2.0/.well-known/openid-configuration").body, &doc)
			var iss string
			mustJSON(t, segment(t, s.fetchToken(t, partnerID, partnerSecret, defaultScope), 1)["iss"], &iss)
			if doc.Issuer != issuer(s.server.URL) || iss != format.issuer(s.server.URL) {
				t.Errorf("discovery issuer %q, token iss %q, want %q and %q", doc.Issuer, iss, issuer(s.server.URL), format.issuer(s.server.URL))
			}
		})
	}
}
