package collections_test

import (
	"context"
	"encoding/json"
	"path"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/collections"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

var vars = collections.Vars{
	AuthURL: "http://sandbox.test/tenant", BaseURL: "http://sandbox.test/api/v1", RootURL: "http://sandbox.test",
	ClientID: "sandbox-partner", ClientSecret: "sandbox-partner-secret", Scope: "api://referrals-sandbox/.default",
}

type postmanItem struct {
	Name  string        `json:"name"`
	Item  []postmanItem `json:"item"`
	Event []struct {
		Listen string `json:"listen"`
		Script struct {
			Exec []string `json:"exec"`
		} `json:"script"`
	} `json:"event"`
	Request *struct {
		Method string `json:"method"`
		URL    string `json:"url"`
		Header []struct{ Key, Value string }
		Auth   *struct {
			Type string `json:"type"`
		} `json:"auth"`
	} `json:"request"`
	Response []savedExample `json:"response"`
}

type postmanCollection struct {
	Info struct {
		Schema string `json:"schema"`
	} `json:"info"`
	Auth struct {
		Type   string                        `json:"type"`
		OAuth2 []struct{ Key, Value string } `json:"oauth2"`
	} `json:"auth"`
	Variable []struct{ Key, Value string } `json:"variable"`
	Item     []postmanItem                 `json:"item"`
}

// documentOperations counts the operations of the API's OpenAPI document.
func documentOperations(t *testing.T) int {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openapi.Document(), &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, item := range doc.Paths {
		for m := range item {
			switch m {
			case "get", "put", "post", "delete", "options", "head", "patch", "trace":
				n++
			}
		}
	}
	return n
}

// Every operation of the document is in both collections once, with a
// status to assert, and the drills use headers and scenarios the sandbox
// has; the auth goes through the collection variables.
func TestCollectionsCoverTheDocument(t *testing.T) {
	g, err := collections.Generate(openapi.Document(), vars)
	if err != nil {
		t.Fatal(err)
	}
	var c postmanCollection
	if err := json.Unmarshal(g.Postman, &c); err != nil {
		t.Fatal(err)
	}
	if c.Info.Schema != collections.PostmanSchema || c.Auth.Type != "oauth2" {
		t.Errorf("schema %q auth %q", c.Info.Schema, c.Auth.Type)
	}
	oauth := map[string]string{}
	for _, kv := range c.Auth.OAuth2 {
		oauth[kv.Key] = kv.Value
	}
	for k, want := range map[string]string{"grant_type": "client_credentials", "accessTokenUrl": "{{auth_url}}/oauth2/v2.0/token",
		"clientId": "{{client_id}}", "clientSecret": "{{client_secret}}", "scope": "{{scope}}"} {
		if oauth[k] != want {
			t.Errorf("oauth2 %s = %q, want %q", k, oauth[k], want)
		}
	}
	names := map[string]string{}
	for _, v := range c.Variable {
		names[v.Key] = v.Value
	}
	for k, want := range map[string]string{"auth_url": vars.AuthURL, "base_url": vars.BaseURL, "client_id": vars.ClientID,
		"client_secret": vars.ClientSecret, "scope": vars.Scope} {
		if names[k] != want {
			t.Errorf("variable %s = %q, want %q", k, names[k], want)
		}
	}

	lib, err := scenarios.LoadLibrary()
	if err != nil {
		t.Fatal(err)
	}
	all, err := lib.Names(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, n := range all {
		known[n] = true
	}
	operations, drills := 0, 0
	for _, folder := range c.Item {
		for _, it := range folder.Item {
			if it.Request == nil {
				t.Fatalf("%s/%s has no request", folder.Name, it.Name)
			}
			if !strings.HasPrefix(it.Request.URL, "{{") {
				t.Errorf("%s: URL %q does not start with a collection variable", it.Name, it.Request.URL)
			}
			var tests string
			for _, e := range it.Event {
				if e.Listen == "test" {
					tests = strings.Join(e.Script.Exec, "\n")
				}
			}
			if !strings.Contains(tests, "pm.response.to.have.status(") {
				t.Errorf("%s asserts no status", it.Name)
			}
			if folder.Name != collections.Drills {
				operations++
				continue
			}
			drills++
			for _, h := range it.Request.Header {
				if h.Key == "X-Sandbox-Scenario" && h.Value != "no-such-scenario" && !known[h.Value] {
					t.Errorf("drill %s names scenario %q, which the library does not have", it.Name, h.Value)
				}
			}
		}
	}
	if want := documentOperations(t); operations != want {
		t.Errorf("Postman: %d operation requests, the document has %d operations", operations, want)
	}
	if drills < 5 {
		t.Errorf("%d failure drills, want at least 5", drills)
	}

	bruRequests, bruDrills := 0, 0
	for name, content := range g.Bruno {
		if path.Ext(name) != ".bru" || path.Base(name) == "folder.bru" || name == "collection.bru" {
			continue
		}
		if !strings.Contains(string(content), "res.status: eq ") {
			t.Errorf("Bruno %s asserts no status", name)
		}
		if strings.HasPrefix(name, collections.Drills+"/") {
			bruDrills++
		} else {
			bruRequests++
		}
	}
	if bruRequests != operations || bruDrills != drills {
		t.Errorf("Bruno: %d requests and %d drills, Postman %d and %d", bruRequests, bruDrills, operations, drills)
	}
	coll := string(g.Bruno["collection.bru"])
	for _, want := range []string{"mode: oauth2", "grant_type: client_credentials", "access_token_url: {{auth_url}}/oauth2/v2.0/token",
		"auto_refresh_token: true", "base_url: " + vars.BaseURL} {
		if !strings.Contains(coll, want) {
			t.Errorf("collection.bru lacks %q:\n%s", want, coll)
		}
	}
}
