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
	const tenant = "00000000-0000-4000-8000-000000000001"
	t.Run("the request's address", func(t *testing.T) {
		in, err := sandbox.Open(sandbox.Options{Tenant: tenant})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = in.Close() })
		ts := httptest.NewServer(in.Server)
		t.Cleanup(ts.Close)
		server, token := servedAddresses(t, ts.URL)
		if server != ts.URL || token != ts.URL+"/"+tenant+"/oauth2/v2.0/token" {
			t.Errorf("served server %q tokenUrl %q, want %s and its tenant's token endpoint", server, token, ts.URL)
		}
	})
	t.Run("--public-url", func(t *testing.T) {
		const public = "https://sandbox.example:9443"
		in, err := sandbox.Open(sandbox.Options{PublicURL: public + "/"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = in.Close() })
		ts := httptest.NewServer(in.Server)
		t.Cleanup(ts.Close)
		server, token := servedAddresses(t, ts.URL)
		if server != public || token != public+"/"+idp.DefaultTenant+"/oauth2/v2.0/token" {
			t.Errorf("served server %q tokenUrl %q, want %s and its token endpoint", server, token, public)
		}
	})
}
