package idp_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
)

// TestTenantGUIDIgnoresCase: Entra compares tenant GUIDs without regard to
// case, so a partner who pasted the GUID in upper case gets a token and a
// discovery document, and both name the canonical lower-case GUID, as
// Entra's answers do.
func TestTenantGUIDIgnoresCase(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	upper := strings.ToUpper(idp.DefaultTenant)
	for _, tenant := range []string{upper, strings.ToUpper(idp.DefaultTenant[:8]) + idp.DefaultTenant[8:]} {
		t.Run(tenant, func(t *testing.T) {
			raw := requireToken(t, s.do(t, tokenRequest{path: "/" + tenant + "/oauth2/v2.0/token", form: postForm(partnerID, partnerSecret, defaultScope)})).AccessToken
			verifyIndependently(t, s, raw, idp.ApplicationID(idp.DefaultResource), issuer(s.server.URL))

			rep := s.get(t, "/"+tenant+"/v2.0/.well-known/openid-configuration")
			if rep.status != http.StatusOK {
				t.Fatalf("discovery on %s: status %d: %s", tenant, rep.status, rep.body)
			}
			var doc struct {
				Issuer        string `json:"issuer"`
				TokenEndpoint string `json:"token_endpoint"`
				JWKSURI       string `json:"jwks_uri"`
			}
			mustJSON(t, rep.body, &doc)
			authURL := s.server.URL + "/" + idp.DefaultTenant
			if doc.Issuer != issuer(s.server.URL) || doc.TokenEndpoint != authURL+"/oauth2/v2.0/token" || doc.JWKSURI != authURL+"/discovery/v2.0/keys" {
				t.Errorf("discovery on %s: %+v, want the canonical lower-case tenant %s", tenant, doc, idp.DefaultTenant)
			}
			if rep := s.get(t, "/"+tenant+"/discovery/v2.0/keys"); rep.status != http.StatusOK {
				t.Errorf("keys on %s: status %d: %s", tenant, rep.status, rep.body)
			}
		})
	}
	// Another GUID is still another tenant, whatever its case.
	other := "/00000000-AAAA-2222-3333-444444444444/oauth2/v2.0/token"
	checkTokenError(t, s.do(t, tokenRequest{path: other, form: postForm(partnerID, partnerSecret, defaultScope)}),
		wantError{http.StatusBadRequest, idp.CodeInvalidTenant, 90002}, fixedTime())
}
