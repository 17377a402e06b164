package sandbox_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// segments is a path of n segments, each seg.
func segments(n int, seg string) string { return strings.Repeat("/"+seg, n) }

// repeated is n copies of s, as a JSON list.
func repeated(n int, s string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// TestAdminFieldsBounded: every free-form admin field and list has a
// documented bound; a request over it is a 422 naming the field and the
// bound, and nothing is added.
func TestAdminFieldsBounded(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	rule := func(change map[string]any) map[string]any {
		r := map[string]any{"endpoint": "ping", "status": 503}
		for k, v := range change {
			r[k] = v
		}
		return r
	}
	tests := []struct {
		name  string
		path  string
		body  map[string]any
		field string
		bound int
	}{
		{"rule description", "/__sandbox/scenarios", rule(map[string]any{"description": strings.Repeat("d", scenarios.MaxDescriptionBytes+1)}), "description", scenarios.MaxDescriptionBytes},
		{"rule path bytes", "/__sandbox/scenarios", rule(map[string]any{"path": "/" + strings.Repeat("p", scenarios.MaxPathBytes)}), "path", scenarios.MaxPathBytes},
		{"rule path segments", "/__sandbox/scenarios", rule(map[string]any{"path": segments(scenarios.MaxPathSegments+1, "a")}), "path", scenarios.MaxPathSegments},
		{"rule path wildcards", "/__sandbox/scenarios", rule(map[string]any{"path": segments(scenarios.MaxPathWildcards+1, "*")}), "path", scenarios.MaxPathWildcards},
		{"rule path of 30,000 wildcards", "/__sandbox/scenarios", rule(map[string]any{"path": segments(30000, "*")}), "path", scenarios.MaxPathBytes},
		{"rule clientId", "/__sandbox/scenarios", rule(map[string]any{"clientId": strings.Repeat("c", scenarios.MaxClientIDBytes+1)}), "clientId", scenarios.MaxClientIDBytes},
		{"rule method", "/__sandbox/scenarios", rule(map[string]any{"method": strings.Repeat("M", scenarios.MaxMethodBytes+1)}), "method", scenarios.MaxMethodBytes},
		{"activation clientId", "/__sandbox/library/flaky", map[string]any{"clientId": strings.Repeat("c", scenarios.MaxClientIDBytes+1)}, "clientId", scenarios.MaxClientIDBytes},
		{"client description", "/__sandbox/clients", map[string]any{"description": strings.Repeat("d", idp.MaxClientDescriptionBytes+1)}, "description", idp.MaxClientDescriptionBytes},
		{"client roles count", "/__sandbox/clients", map[string]any{"roles": repeated(idp.MaxClientRoles+1, "Trials.Read")}, "roles", idp.MaxClientRoles},
		{"client 1,000 roles of 1 KB", "/__sandbox/clients", map[string]any{"roles": repeated(1000, strings.Repeat("r", 1000))}, "roles", idp.MaxClientRoles},
		{"client role length", "/__sandbox/clients", map[string]any{"roles": []string{"Trials.Read", strings.Repeat("r", idp.MaxRoleBytes+1)}}, "roles[1]", idp.MaxRoleBytes},
		{"client resources count", "/__sandbox/clients", map[string]any{"resources": repeated(idp.MaxClientResources+1, "api://referrals-sandbox")}, "resources", idp.MaxClientResources},
		{"client resource length", "/__sandbox/clients", map[string]any{"resources": []string{"api://" + strings.Repeat("x", idp.MaxResourceBytes)}}, "resources[0]", idp.MaxResourceBytes},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := s.adminInvalid(http.MethodPost, tc.path, tc.body)
			p := wantProblem(t, r, http.StatusUnprocessableEntity, sandboxProblemType(t, r))
			wantFieldError(t, p, tc.field, strconv.Itoa(tc.bound))
		})
	}
	var listed struct {
		Rules  []scenarios.RuleStatus `json:"rules"`
		Active []scenarios.Activation `json:"active"`
	}
	s.admin(http.MethodGet, "/__sandbox/scenarios", nil).decode(t, &listed)
	if len(listed.Rules) != 0 || len(listed.Active) != 0 {
		t.Errorf("after the refusals: %d rules, %d activations; want none", len(listed.Rules), len(listed.Active))
	}
	var clients struct {
		Clients []struct {
			Origin string `json:"origin"`
		} `json:"clients"`
	}
	s.admin(http.MethodGet, "/__sandbox/clients", nil).decode(t, &clients)
	for _, c := range clients.Clients {
		if c.Origin == "runtime" {
			t.Errorf("a runtime client was created by a refused request")
		}
	}
}

// sandboxProblemType is the type of r's problem, whatever it is: the test
// checks status and fields, the type is the validation problem's.
func sandboxProblemType(t *testing.T, r *response) string {
	t.Helper()
	return r.problem(t).Type
}

// TestAdminFieldsAtTheirBounds: a rule and a client with every field at its
// bound are accepted, the rule still matches, and the client's token (which
// carries every role) stays a few kilobytes and is accepted by the API.
func TestAdminFieldsAtTheirBounds(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	path := segments(scenarios.MaxPathWildcards, "*") + segments(scenarios.MaxPathSegments-scenarios.MaxPathWildcards-1, "seg") + "/"
	path += strings.Repeat("p", scenarios.MaxPathBytes-len(path))
	s.addRule(map[string]any{
		"endpoint": "api", "status": 503, "path": path, "method": strings.Repeat("M", scenarios.MaxMethodBytes),
		"description": strings.Repeat("d", scenarios.MaxDescriptionBytes), "clientId": strings.Repeat("c", scenarios.MaxClientIDBytes),
	})
	if r := s.admin(http.MethodPost, "/__sandbox/library/flaky", map[string]any{"clientId": strings.Repeat("c", scenarios.MaxClientIDBytes)}); r.Status != http.StatusCreated {
		t.Fatalf("activation with the longest clientId: %d %s", r.Status, r.Body)
	}

	roles := []string{sandbox.RoleTrialsRead}
	for i := len(roles); i < idp.MaxClientRoles; i++ {
		roles = append(roles, fmt.Sprintf("%03d.%s", i, strings.Repeat("r", idp.MaxRoleBytes-4)))
	}
	resources := []string{"api://referrals-sandbox"}
	for i := len(resources); i < idp.MaxClientResources; i++ {
		resources = append(resources, fmt.Sprintf("api://%02d.%s", i, strings.Repeat("x", idp.MaxResourceBytes-9)))
	}
	c := s.newClient(map[string]any{"roles": roles, "resources": resources, "description": strings.Repeat("d", idp.MaxClientDescriptionBytes)})
	tok := s.clientToken(c)
	if len(tok) > 16<<10 {
		t.Errorf("a client at every bound got a %d-byte token; docs/security.md promises under 16 KiB", len(tok))
	}
	if r := s.trials(tok); r.Status != http.StatusOK {
		t.Errorf("the API refused the token of a client at every bound: %d %s", r.Status, r.Body)
	}
}

// TestAdminBoundsDocumented: the admin document states each bound the code
// enforces (maxLength, maxItems), so a generated client or a contract check
// refuses what the sandbox would.
func TestAdminBoundsDocumented(t *testing.T) {
	t.Parallel()
	data, err := openapi.AdminDocument()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		t.Fatal(err)
	}
	prop := func(schema, name string) *openapi3.Schema {
		t.Helper()
		s := doc.Components.Schemas[schema]
		if s == nil || s.Value.Properties[name] == nil {
			t.Fatalf("admin document has no %s.%s", schema, name)
		}
		return s.Value.Properties[name].Value
	}
	maxLength := func(s *openapi3.Schema) int {
		if s.MaxLength == nil {
			return -1
		}
		return int(*s.MaxLength)
	}
	maxItems := func(s *openapi3.Schema) int {
		if s.MaxItems == nil {
			return -1
		}
		return int(*s.MaxItems)
	}
	checks := []struct {
		what      string
		got, want int
	}{
		{"Rule.description maxLength", maxLength(prop("Rule", "description")), scenarios.MaxDescriptionBytes},
		{"Rule.path maxLength", maxLength(prop("Rule", "path")), scenarios.MaxPathBytes},
		{"Rule.clientId maxLength", maxLength(prop("Rule", "clientId")), scenarios.MaxClientIDBytes},
		{"Rule.method maxLength", maxLength(prop("Rule", "method")), scenarios.MaxMethodBytes},
		{"ActivationRequest.clientId maxLength", maxLength(prop("ActivationRequest", "clientId")), scenarios.MaxClientIDBytes},
		{"ClientRequest.description maxLength", maxLength(prop("ClientRequest", "description")), idp.MaxClientDescriptionBytes},
		{"ClientRequest.roles maxItems", maxItems(prop("ClientRequest", "roles")), idp.MaxClientRoles},
		{"ClientRequest.roles items maxLength", maxLength(prop("ClientRequest", "roles").Items.Value), idp.MaxRoleBytes},
		{"ClientRequest.resources maxItems", maxItems(prop("ClientRequest", "resources")), idp.MaxClientResources},
		{"ClientRequest.resources items maxLength", maxLength(prop("ClientRequest", "resources").Items.Value), idp.MaxResourceBytes},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s is %d in the admin document, %d in the code", c.what, c.got, c.want)
		}
	}
	for _, seg := range []string{strconv.Itoa(scenarios.MaxPathSegments) + " segments", strconv.Itoa(scenarios.MaxPathWildcards) + " `*` segments"} {
		if !strings.Contains(prop("Rule", "path").Description, seg) {
			t.Errorf("Rule.path's description does not state %q", seg)
		}
	}
}
