package idp_test

import (
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
)

func TestJWKSIsTheSandboxPublicKey(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	keys := s.fetchPublicKeys(t)
	var priv rsa.PrivateKey
	if err := sandboxKey(t, "").Raw(&priv); err != nil {
		t.Fatalf("raw key: %v", err)
	}
	got, ok := keys[s.keys.KeyID()]
	if len(keys) != 1 || !ok {
		t.Fatalf("JWKS has %d keys, want exactly kid %s", len(keys), s.keys.KeyID())
	}
	if !got.Equal(&priv.PublicKey) {
		t.Error("JWKS n/e are not the default signing key's public key")
	}
	rep := s.get(t, "/"+idp.DefaultTenant+"/discovery/v2.0/keys")
	for _, private := range []string{`"d"`, `"p"`, `"q"`, `"dp"`, `"dq"`, `"qi"`} {
		if strings.Contains(string(rep.body), private+":") {
			t.Errorf("JWKS publishes private member %s", private)
		}
	}
}

// TestJWKSCarriesTheCertificate: Entra publishes each signing key with its
// certificate (x5c) and the certificate's SHA-1 thumbprint (x5t)
// (entra-docs access-tokens.md; shared notes). The sandbox's is a
// self-signed certificate of the signing key, the same on every start.
func TestJWKSCarriesTheCertificate(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	var set struct {
		Keys []struct {
			Kid string   `json:"kid"`
			X5t string   `json:"x5t"`
			X5c []string `json:"x5c"`
		} `json:"keys"`
	}
	mustJSON(t, s.get(t, "/"+idp.DefaultTenant+"/discovery/v2.0/keys").body, &set)
	if len(set.Keys) != 1 || len(set.Keys[0].X5c) != 1 {
		t.Fatalf("JWKS %+v, want one key with one certificate in x5c", set)
	}
	key := set.Keys[0]
	der, err := base64.StdEncoding.DecodeString(key.X5c[0])
	if err != nil {
		t.Fatalf("x5c is not standard base64: %v", err)
	}
	certificate, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("x5c: %v", err)
	}
	if err := certificate.CheckSignature(certificate.SignatureAlgorithm, certificate.RawTBSCertificate, certificate.Signature); err != nil {
		t.Errorf("the certificate is not self-signed by the signing key: %v", err)
	}
	if pub, ok := certificate.PublicKey.(*rsa.PublicKey); !ok || !pub.Equal(s.fetchPublicKeys(t)[key.Kid]) {
		t.Error("the certificate's key is not the key's n and e")
	}
	thumb := sha1.Sum(der)
	if key.X5t != base64.RawURLEncoding.EncodeToString(thumb[:]) {
		t.Errorf("x5t %q is not the base64url SHA-1 thumbprint of x5c[0]", key.X5t)
	}
	if other := newSandbox(t); string(other.get(t, "/"+idp.DefaultTenant+"/discovery/v2.0/keys").body) != string(s.get(t, "/"+idp.DefaultTenant+"/discovery/v2.0/keys").body) {
		t.Error("a restarted sandbox publishes another JWKS for the same key")
	}
}

func TestOpenIDConfiguration(t *testing.T) {
	t.Parallel()
	for _, publicURL := range []string{"", "https://sandbox.example.test"} {
		t.Run("public URL "+publicURL, func(t *testing.T) {
			s := newSandbox(t, func(c *idp.Config) { c.PublicURL = publicURL })
			base := s.server.URL
			if publicURL != "" {
				base = publicURL
			}
			rep := s.get(t, "/"+idp.DefaultTenant+"/v2.0/.well-known/openid-configuration")
			if rep.status != http.StatusOK {
				t.Fatalf("status %d: %s", rep.status, rep.body)
			}
			var doc struct {
				Issuer                 string   `json:"issuer"`
				TokenEndpoint          string   `json:"token_endpoint"`
				JWKSURI                string   `json:"jwks_uri"`
				AuthorizationEndpoint  string   `json:"authorization_endpoint"`
				AuthMethods            []string `json:"token_endpoint_auth_methods_supported"`
				SigningAlgs            []string `json:"id_token_signing_alg_values_supported"`
				ResponseTypesSupported []string `json:"response_types_supported"`
				SubjectTypesSupported  []string `json:"subject_types_supported"`
			}
			mustJSON(t, rep.body, &doc)
			authURL := base + "/" + idp.DefaultTenant
			if doc.Issuer != issuer(base) || doc.TokenEndpoint != authURL+"/oauth2/v2.0/token" ||
				doc.JWKSURI != authURL+"/discovery/v2.0/keys" || doc.AuthorizationEndpoint != authURL+"/oauth2/v2.0/authorize" {
				t.Errorf("endpoints %+v, want them under %s", doc, authURL)
			}
			if !slices.Contains(doc.AuthMethods, "client_secret_post") || !slices.Contains(doc.AuthMethods, "client_secret_basic") {
				t.Errorf("token_endpoint_auth_methods_supported %q", doc.AuthMethods)
			}
			if !slices.Equal(doc.SigningAlgs, []string{"RS256"}) || len(doc.ResponseTypesSupported) == 0 || len(doc.SubjectTypesSupported) == 0 {
				t.Errorf("algs %q response types %q subject types %q", doc.SigningAlgs, doc.ResponseTypesSupported, doc.SubjectTypesSupported)
			}
			if publicURL != "" {
				return
			}
			// The advertised endpoints work, and tokens carry the advertised issuer.
			tokenURL, _ := url.Parse(doc.TokenEndpoint)
			raw := requireToken(t, s.do(t, tokenRequest{path: tokenURL.Path, form: postForm(partnerID, partnerSecret, defaultScope)})).AccessToken
			verifyIndependently(t, s, raw, idp.ApplicationID(idp.DefaultResource), doc.Issuer)
			jwksURL, _ := url.Parse(doc.JWKSURI)
			if rep := s.get(t, jwksURL.Path); rep.status != http.StatusOK {
				t.Errorf("jwks_uri status %d", rep.status)
			}
		})
	}
}

func TestInstanceDiscovery(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	host := strings.TrimPrefix(s.server.URL, "http://")
	tests := []struct {
		name      string
		query     string
		wantBase  string
		wantAlias string
	}{
		{"without an authority", "?api-version=1.1", s.server.URL, host},
		{"MSAL's authority on the sandbox", "?api-version=1.1&authorization_endpoint=" +
			url.QueryEscape(s.server.URL+"/"+idp.DefaultTenant+"/oauth2/v2.0/authorize"), s.server.URL, host},
		{"authority routed to the sandbox", "?api-version=1.1&authorization_endpoint=" +
			url.QueryEscape("https://login.microsoftonline.com/"+idp.DefaultTenant+"/oauth2/v2.0/authorize"), "https://login.microsoftonline.com", "login.microsoftonline.com"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := s.get(t, "/common/discovery/instance"+tc.query)
			if rep.status != http.StatusOK {
				t.Fatalf("status %d: %s", rep.status, rep.body)
			}
			var doc struct {
				TenantDiscoveryEndpoint string `json:"tenant_discovery_endpoint"`
				APIVersion              string `json:"api-version"`
				Metadata                []struct {
					PreferredNetwork string   `json:"preferred_network"`
					PreferredCache   string   `json:"preferred_cache"`
					Aliases          []string `json:"aliases"`
				} `json:"metadata"`
			}
			mustJSON(t, rep.body, &doc)
			want := tc.wantBase + "/" + idp.DefaultTenant + "/v2.0/.well-known/openid-configuration"
			if doc.TenantDiscoveryEndpoint != want || doc.APIVersion != "1.1" {
				t.Errorf("tenant_discovery_endpoint %q api-version %q, want %q 1.1", doc.TenantDiscoveryEndpoint, doc.APIVersion, want)
			}
			if len(doc.Metadata) != 1 || doc.Metadata[0].PreferredNetwork != tc.wantAlias ||
				doc.Metadata[0].PreferredCache != tc.wantAlias || !slices.Contains(doc.Metadata[0].Aliases, tc.wantAlias) {
				t.Errorf("metadata %+v, want %s as network, cache and alias", doc.Metadata, tc.wantAlias)
			}
		})
	}
}

func TestDiscoveryRefusals(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	paths := map[string]string{
		"keys":                 "/%s/discovery/v2.0/keys",
		"openid-configuration": "/%s/v2.0/.well-known/openid-configuration",
	}
	for name, pattern := range paths {
		t.Run(name+" unknown tenant", func(t *testing.T) {
			rep := s.get(t, strings.Replace(pattern, "%s", "00000000-1111-2222-3333-444444444444", 1))
			checkTokenError(t, rep, wantError{http.StatusBadRequest, idp.CodeInvalidTenant, 90002}, fixedTime())
		})
		t.Run(name+" POST", func(t *testing.T) {
			rep := s.do(t, tokenRequest{path: strings.Replace(pattern, "%s", idp.DefaultTenant, 1)})
			checkTokenError(t, rep, wantError{http.StatusMethodNotAllowed, idp.CodeInvalidRequest, 0}, fixedTime())
			allow := rep.header.Get("Allow")
			if !strings.Contains(allow, http.MethodGet) {
				t.Errorf("Allow %q, want GET, HEAD", allow)
			}
		})
	}
}

// TestSigningCertificateMadeWhenFirstAsked: the signing certificate is
// made by whichever asks for it first, a v1.0 token or the JWKS, and both
// name the same one. Both ask at once, so that -race sees the once that
// makes it.
func TestSigningCertificateMadeWhenFirstAsked(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, func(c *idp.Config) { c.TokenVersion = idp.TokenV1 })
	h := s.provider.Handler()
	tokenRec, keysRec := httptest.NewRecorder(), httptest.NewRecorder()
	var wg sync.WaitGroup
	wg.Go(func() {
		r := httptest.NewRequest(http.MethodPost, tokenPath(), strings.NewReader(postForm(partnerID, partnerSecret, defaultScope).Encode()))
		r.Header.Set("Content-Type", formContentType)
		h.ServeHTTP(tokenRec, r)
	})
	wg.Go(func() {
		h.ServeHTTP(keysRec, httptest.NewRequest(http.MethodGet, "/"+idp.DefaultTenant+"/discovery/v2.0/keys", nil))
	})
	wg.Wait()
	if tokenRec.Code != http.StatusOK || keysRec.Code != http.StatusOK {
		t.Fatalf("token %d %s, JWKS %d %s; want 200 for both", tokenRec.Code, tokenRec.Body, keysRec.Code, keysRec.Body)
	}
	var token struct {
		AccessToken string `json:"access_token"`
	}
	mustJSON(t, tokenRec.Body.Bytes(), &token)
	var set struct {
		Keys []struct {
			X5t string `json:"x5t"`
		} `json:"keys"`
	}
	mustJSON(t, keysRec.Body.Bytes(), &set)
	var x5t string
	mustJSON(t, segment(t, token.AccessToken, 0)["x5t"], &x5t)
	if len(set.Keys) != 1 || set.Keys[0].X5t == "" || set.Keys[0].X5t != x5t {
		t.Errorf("v1.0 token x5t %q, JWKS %+v: want one key of that x5t", x5t, set)
	}
}
