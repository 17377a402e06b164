package scenarios

import (
	"context"
	"encoding/json"
	"testing"
)

// FuzzParseScenario parses arbitrary scenario files: a file is either
// refused with an error naming the file, or every rule in it validates and
// can be activated.
func FuzzParseScenario(f *testing.F) {
	f.Add([]byte(`{"name":"x","description":"d","rules":[{"endpoint":"api","status":503,"times":3,"retryAfterSeconds":2}]}`))
	f.Add([]byte(`{"name":"y","description":"d","rules":[{"delay":{"median":"200ms","sigma":0.5,"max":"5s"}},{"fault":"reset","probability":0.3,"seed":7}]}`))
	f.Add([]byte(`{"name":"z","description":"d","rules":[{"path":"/a/*/b","method":"GET","clientId":"c","error":"invalid_client","endpoint":"token","perClient":true,"times":1}]}`))
	f.Add([]byte(`{"name":"","rules":[{"status":418,"delay":{"fixed":"-1s"}}]}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := parseScenario("fuzz.json", data)
		if err != nil {
			return
		}
		for _, r := range sc.Rules {
			if err := r.Validate(); err != nil {
				t.Fatalf("parsed scenario holds an invalid rule: %v", err)
			}
		}
		lib := NewLibrary()
		if err := lib.add([]Scenario{sc}); err != nil {
			t.Fatalf("add parsed scenario: %v", err)
		}
		e := New(Config{Library: lib})
		if _, err := e.Activate(context.Background(), sc.Name, "c"); err != nil {
			t.Fatalf("activate parsed scenario: %v", err)
		}
		e.Decide(context.Background(), Request{Method: "GET", Path: "/a/x/b", ClientID: "c", Endpoint: EndpointAPI})
	})
}

// FuzzRuleJSON decodes arbitrary rule bodies as the admin API does and adds
// them: Add either refuses with a field error or accepts a rule that Decide
// can evaluate.
func FuzzRuleJSON(f *testing.F) {
	f.Add([]byte(`{"endpoint":"api","status":429,"retryAfterSeconds":3,"after":2}`))
	f.Add([]byte(`{"delay":{"min":"100ms","max":"50ms"}}`))
	f.Add([]byte(`{"probability":1.5,"status":500}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var r Rule
		if err := json.Unmarshal(data, &r); err != nil {
			return
		}
		e := New(Config{})
		if _, err := e.Add(context.Background(), r); err != nil {
			return
		}
		e.Decide(context.Background(), Request{Method: "POST", Path: "/api/v1/referrals/", ClientID: "c", Endpoint: EndpointAPI})
		e.Decide(context.Background(), Request{Method: "POST", Path: "/oauth2/v2.0/token", ClientID: "c", Endpoint: EndpointToken})
	})
}
