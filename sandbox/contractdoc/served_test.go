package contractdoc_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/contractdoc"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi"
)

// TestServedMergesTheSandboxAdditions: a contract written under a servers
// URL ending in /api/v1 whose component names the built-in document also
// uses is served with its own components untouched, the built-in ones
// under a sandbox. prefix, the identity provider's paths served from the
// root, and every address the sandbox's.
func TestServedMergesTheSandboxAdditions(t *testing.T) {
	c, err := contractdoc.LoadFile(filepath.Join("..", "testdata", "contracts", "birthdate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const base, tokenURL = "http://127.0.0.1:9", "http://127.0.0.1:9/tenant/oauth2/v2.0/token"
	var doc struct {
		Info       struct{ Description string }
		Servers    []struct{ URL string }
		Paths      map[string]map[string]json.RawMessage
		Components struct {
			Schemas         map[string]struct{ Properties map[string]json.RawMessage }
			SecuritySchemes map[string]struct {
				Flows map[string]struct{ TokenURL string }
			}
		}
	}
	served := c.Served(base, tokenURL)
	if err := json.Unmarshal(served, &doc); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(served), "referrals-sandbox.invalid") {
		t.Error("a placeholder address is left in the served document")
	}
	if len(doc.Servers) != 1 || doc.Servers[0].URL != base+"/api/v1" {
		t.Errorf("servers %+v, want %s/api/v1", doc.Servers, base)
	}
	var token []struct{ URL string }
	if err := json.Unmarshal(doc.Paths["/{tenant}/oauth2/v2.0/token"]["servers"], &token); err != nil || len(token) != 1 || token[0].URL != base {
		t.Errorf("the token endpoint's servers %+v (%v), want the root %s", token, err, base)
	}
	if doc.Paths["/referrals/qualified"]["post"] == nil {
		t.Error("the built-in qualified submission is not served under the contract's servers URL")
	}
	if _, ok := doc.Components.Schemas["Patient"].Properties["birthDate"]; !ok {
		t.Error("the contract's own Patient was replaced")
	}
	if _, ok := doc.Components.Schemas["sandbox.Patient"].Properties["dateOfBirth"]; !ok {
		t.Error("the built-in Patient (of the built-in qualified referrals) is not served as sandbox.Patient")
	}
	if got := doc.Components.SecuritySchemes["oauth2"].Flows["clientCredentials"].TokenURL; got != tokenURL {
		t.Errorf("tokenUrl %q, want %q", got, tokenURL)
	}
	if !strings.Contains(doc.Info.Description, "## Served by referrals-sandbox") {
		t.Error("info.description does not list the sandbox's additions")
	}
}

// TestServedBuiltinDocumentAsContract: the document a sandbox serves,
// supplied back as --contract, is served back as it is (its addresses set
// for the sandbox), not merged with itself.
func TestServedBuiltinDocumentAsContract(t *testing.T) {
	const server, token = "http://127.0.0.1:9999", "http://127.0.0.1:9999/t/oauth2/v2.0/token"
	served := openapi.Served("http://198.51.100.7:8080", "http://198.51.100.7:8080/t/oauth2/v2.0/token")
	c, err := contractdoc.Load(served)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Served(server, token), openapi.Served(server, token); !bytes.Equal(got, want) {
		t.Errorf("served back %d bytes, want the built-in document's %d (sandbox.* components: %d)", len(got), len(want), bytes.Count(got, []byte(`"sandbox.`)))
	}
}

// TestServedEditedBuiltinDocumentSharesComponents: a contract started from
// the built-in document and edited keeps one copy of each component and
// parameter it shares with the built-in document.
func TestServedEditedBuiltinDocumentSharesComponents(t *testing.T) {
	served := openapi.Served("http://198.51.100.7:8080", "http://198.51.100.7:8080/t/oauth2/v2.0/token")
	edited := bytes.Replace(served, []byte(`"title": "`), []byte(`"title": "Edited `), 1)
	c, err := contractdoc.Load(edited)
	if err != nil {
		t.Fatal(err)
	}
	var in, out struct {
		Components map[string]map[string]any
		Paths      map[string]map[string]json.RawMessage
	}
	if err := json.Unmarshal(edited, &in); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(c.Served("http://127.0.0.1:9999", "http://127.0.0.1:9999/t/oauth2/v2.0/token"), &out); err != nil {
		t.Fatal(err)
	}
	for section, components := range out.Components {
		for name := range components {
			if _, ok := in.Components[section][name]; !ok {
				t.Errorf("components/%s/%s added: the contract has the built-in one already", section, name)
			}
		}
	}
	params := func(op json.RawMessage) int {
		var o struct{ Parameters []any }
		_ = json.Unmarshal(op, &o)
		return len(o.Parameters)
	}
	for path, item := range in.Paths {
		for method, op := range item {
			if got, want := params(out.Paths[path][method]), params(op); method != "parameters" && got != want {
				t.Errorf("%s %s: %d parameters served, want the %d it declares", method, path, got, want)
			}
		}
	}
}
