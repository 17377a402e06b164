package sandbox_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi/contract"
)

// servedAddresses fetches the OpenAPI document from base through the
// contract checker and returns its server URL and OAuth2 tokenUrl.
func servedAddresses(t *testing.T, base string) (server, tokenURL string) {
	t.Helper()
	resp, err := contract.New(t, base).Client().Get(base + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Servers []struct {
			URL string `json:"url"`
		} `json:"servers"`
		Components struct {
			SecuritySchemes struct {
				OAuth2 struct {
					Flows struct {
						ClientCredentials struct {
							TokenURL string `json:"tokenUrl"`
						} `json:"clientCredentials"`
					} `json:"flows"`
				} `json:"oauth2"`
			} `json:"securitySchemes"`
		} `json:"components"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || resp.StatusCode != http.StatusOK || len(doc.Servers) != 1 {
		t.Fatalf("openapi.json: %d %v, servers %+v", resp.StatusCode, err, doc.Servers)
	}
	return doc.Servers[0].URL, doc.Components.SecuritySchemes.OAuth2.Flows.ClientCredentials.TokenURL
}

// The served document names the address the sandbox was reached at (any
// --addr), its tenant, or --public-url: never the static default.
func TestOpenAPIDocumentNamesTheRealAddresses(t *testing.T) {
	const (
		tenant = "00000000-0000-4000-8000-000000000001"
		public = "https://sandbox.example:9443"
	)
	tests := []struct {
		name string
		opts sandbox.Config
		// base is the expected server URL; "" means the test server's.
		base, tenant string
	}{
		{"the request's address and tenant", sandbox.Config{Tenant: tenant}, "", tenant},
		{"--public-url", sandbox.Config{PublicURL: public + "/"}, public, idp.DefaultTenant},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, err := sandbox.Open(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = in.Close() })
			ts := httptest.NewServer(in.Server)
			t.Cleanup(ts.Close)
			base := tc.base
			if base == "" {
				base = ts.URL
			}
			server, token := servedAddresses(t, ts.URL)
			if server != base || token != base+"/"+tc.tenant+"/oauth2/v2.0/token" {
				t.Errorf("served server %q tokenUrl %q, want %s and tenant %s's token endpoint", server, token, base, tc.tenant)
			}
			if admin := servedAdminServer(t, ts.URL); admin != base {
				t.Errorf("served admin document's server %q, want %s", admin, base)
			}
		})
	}
}

// servedAdminServer fetches the admin OpenAPI document and returns its
// server URL.
func servedAdminServer(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/__sandbox/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Servers []struct {
			URL string `json:"url"`
		} `json:"servers"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || resp.StatusCode != http.StatusOK || len(doc.Servers) == 0 {
		t.Fatalf("admin openapi.json: %d %v", resp.StatusCode, err)
	}
	return doc.Servers[0].URL
}
