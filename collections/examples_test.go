package collections_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/collections"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi"
)

// savedExample is what the test reads of a Postman request's saved
// response.
type savedExample struct {
	Code            int                           `json:"code"`
	Status          string                        `json:"status"`
	Header          []struct{ Key, Value string } `json:"header"`
	Body            string                        `json:"body"`
	OriginalRequest *struct {
		Method string `json:"method"`
		URL    string `json:"url"`
	} `json:"originalRequest"`
}

// TestPostmanSavedExamples: every operation's request carries a saved
// example of its success answer, which Postman's documentation and mock
// servers show: the status the request asserts, the content type, and a
// JSON body with the fields the document describes.
func TestPostmanSavedExamples(t *testing.T) {
	g, err := collections.Generate(openapi.Document(), vars)
	if err != nil {
		t.Fatal(err)
	}
	var c postmanCollection
	if err := json.Unmarshal(g.Postman, &c); err != nil {
		t.Fatal(err)
	}
	withExample, bodies := 0, map[string]map[string]any{}
	for _, folder := range c.Item {
		if folder.Name == collections.Drills {
			continue
		}
		for _, item := range folder.Item {
			if item.Request == nil {
				t.Errorf("%s: no request", item.Name)
				continue
			}
			if len(item.Response) != 1 {
				t.Errorf("%s %s (%s): %d saved examples, want 1", item.Request.Method, item.Request.URL, item.Name, len(item.Response))
				continue
			}
			withExample++
			ex := item.Response[0]
			if ex.Code < 200 || ex.Code > 299 || ex.Status == "" {
				t.Errorf("%s: saved example %d %q, want the success answer", item.Name, ex.Code, ex.Status)
			}
			asserted := false
			for _, e := range item.Event {
				asserted = asserted || (e.Listen == "test" && strings.Contains(strings.Join(e.Script.Exec, "\n"), "to.have.status("+strconv.Itoa(ex.Code)+")"))
			}
			if !asserted {
				t.Errorf("%s: the saved example's status %d is not the one the request asserts", item.Name, ex.Code)
			}
			if ex.OriginalRequest == nil || ex.OriginalRequest.Method != item.Request.Method || ex.OriginalRequest.URL != item.Request.URL {
				t.Errorf("%s: the saved example's original request %+v is not the request", item.Name, ex.OriginalRequest)
			}
			if ex.Code == 204 {
				continue
			}
			contentType := ""
			for _, h := range ex.Header {
				if h.Key == "Content-Type" {
					contentType = h.Value
				}
			}
			if contentType != "application/json" {
				t.Errorf("%s: saved example Content-Type %q", item.Name, contentType)
				continue
			}
			var body map[string]any
			if err := json.Unmarshal([]byte(ex.Body), &body); err != nil || len(body) == 0 {
				t.Errorf("%s: saved example body is not a JSON object with fields: %v %q", item.Name, err, ex.Body)
			}
			bodies[item.Request.Method+" "+item.Request.URL] = body
		}
	}
	if want := documentOperations(t); withExample != want {
		t.Errorf("%d requests with a saved example, want one for each of the document's %d operations", withExample, want)
	}
	// The document's own examples where it has them, the schema's fields
	// where it has none.
	for key, fields := range map[string][]string{
		"POST {{auth_url}}/oauth2/v2.0/token": {"access_token", "token_type", "expires_in"},
		"GET {{base_url}}/referrals/trials":   nil,
	} {
		body, ok := bodies[key]
		if !ok {
			t.Errorf("no saved example for %s", key)
			continue
		}
		for _, f := range fields {
			if _, ok := body[f]; !ok {
				t.Errorf("%s: saved example lacks %s: %v", key, f, body)
			}
		}
	}
}
