package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// apiStatus calls the trials list with token and returns the status.
func apiStatus(t *testing.T, url, token string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url+"/api/v1/referrals/trials", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// listedRow returns the row of scenario name in scenario list's table.
func listedRow(t *testing.T, table, name string) string {
	t.Helper()
	for _, line := range strings.Split(table, "\n") {
		if fields := strings.Fields(line); len(fields) > 0 && fields[0] == name {
			return line
		}
	}
	t.Fatalf("scenario list has no row for %s:\n%s", name, table)
	return ""
}

// activeColumn is the ACTIVE cell of a row: the text after the name, up to
// the rule count.
func activeColumn(row string) string {
	fields := strings.Fields(row)
	var cell []string
	for _, f := range fields[1:] {
		if f != "" && f[0] >= '0' && f[0] <= '9' {
			break
		}
		cell = append(cell, f)
	}
	return strings.Join(cell, " ")
}

func TestScenarioApplyListClear(t *testing.T) {
	url := startSandbox(t, sandbox.Config{})
	const name = "api-unavailable-then-recovers"
	tok := runCLI(t, nil, "token", "--url", url)
	if tok.code != 0 {
		t.Fatalf("token: exit %d, %s", tok.code, tok.stderr)
	}
	token := strings.TrimSpace(tok.stdout)

	list := runCLI(t, nil, "scenario", "list", "--url", url)
	if list.code != 0 {
		t.Fatalf("list: exit %d, %s", list.code, list.stderr)
	}
	if !strings.HasPrefix(list.stdout, "NAME") || !strings.Contains(list.stdout, "DESCRIPTION") {
		t.Errorf("list has no header:\n%s", list.stdout)
	}
	row := listedRow(t, list.stdout, name)
	if got := activeColumn(row); got != "-" {
		t.Errorf("before apply, ACTIVE is %q, want -", got)
	}
	if !strings.Contains(row, "503") {
		t.Errorf("row lacks the description: %q", row)
	}

	apply := runCLI(t, map[string]string{"SANDBOX_URL": url}, "scenario", "apply", name)
	if apply.code != 0 || !strings.Contains(apply.stdout, "applied "+name+" for every client") {
		t.Fatalf("apply: exit %d, stdout %q, stderr %q", apply.code, apply.stdout, apply.stderr)
	}
	if got := apiStatus(t, url, token); got != http.StatusServiceUnavailable {
		t.Errorf("API answered %d after apply, want 503", got)
	}
	list = runCLI(t, nil, "scenario", "list", "--url", url)
	if got := activeColumn(listedRow(t, list.stdout, name)); got != "yes" {
		t.Errorf("after apply, ACTIVE is %q, want yes:\n%s", got, list.stdout)
	}

	clear := runCLI(t, nil, "scenario", "clear", "--url", url)
	if clear.code != 0 {
		t.Fatalf("clear: exit %d, %s", clear.code, clear.stderr)
	}
	if got := apiStatus(t, url, token); got != http.StatusOK {
		t.Errorf("API answered %d after clear, want 200", got)
	}
	list = runCLI(t, nil, "scenario", "list", "--url", url)
	if got := activeColumn(listedRow(t, list.stdout, name)); got != "-" {
		t.Errorf("after clear, ACTIVE is %q, want -", got)
	}
}

func TestScenarioApplyForOneClient(t *testing.T) {
	url := startSandbox(t, sandbox.Config{})
	const name = "api-unavailable-then-recovers"
	tokens := map[string]string{}
	for _, id := range []string{"sandbox-partner", "sandbox-partner-2"} {
		res := runCLI(t, nil, "token", "--url", url, "--client-id", id, "--client-secret", id+"-secret")
		if res.code != 0 {
			t.Fatalf("token for %s: %s", id, res.stderr)
		}
		tokens[id] = strings.TrimSpace(res.stdout)
	}
	res := runCLI(t, nil, "scenario", "apply", name, "--url", url, "--client-id", "sandbox-partner-2")
	if res.code != 0 || !strings.Contains(res.stdout, "for client sandbox-partner-2") {
		t.Fatalf("apply: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
	if got := apiStatus(t, url, tokens["sandbox-partner"]); got != http.StatusOK {
		t.Errorf("other client got %d, want 200", got)
	}
	if got := apiStatus(t, url, tokens["sandbox-partner-2"]); got != http.StatusServiceUnavailable {
		t.Errorf("bound client got %d, want 503", got)
	}
	list := runCLI(t, nil, "scenario", "list", "--url", url)
	if got := activeColumn(listedRow(t, list.stdout, name)); got != "yes (sandbox-partner-2)" {
		t.Errorf("ACTIVE is %q, want yes (sandbox-partner-2)", got)
	}
}

func TestScenarioErrors(t *testing.T) {
	open := startSandbox(t, sandbox.Config{})
	guarded := startSandbox(t, sandbox.Config{AdminToken: "admin-secret"})
	tests := []struct {
		name    string
		environ map[string]string
		args    []string
		want    string
	}{
		{"unknown scenario", nil, []string{"scenario", "apply", "no-such-scenario", "--url", open}, "known: "},
		{"admin token missing", nil, []string{"scenario", "list", "--url", guarded}, "--admin-token"},
		{"admin token wrong", nil, []string{"scenario", "clear", "--url", guarded, "--admin-token", "guess"}, "401"},
		{"not a sandbox", nil, []string{"scenario", "list", "--url", "http://127.0.0.1:" + closedPort(t)}, "GET /__sandbox/library"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := runCLI(t, tc.environ, tc.args...)
			if res.code != 1 || !strings.Contains(res.stderr, tc.want) {
				t.Errorf("exit %d, stderr %q, want 1 and %q", res.code, res.stderr, tc.want)
			}
		})
	}
	// The admin token from the environment, shared with serve, is accepted.
	res := runCLI(t, map[string]string{"SANDBOX_ADMIN_TOKEN": "admin-secret", "SANDBOX_URL": guarded}, "scenario", "list")
	if res.code != 0 {
		t.Errorf("with SANDBOX_ADMIN_TOKEN: exit %d, %s", res.code, res.stderr)
	}
}

func TestActiveLabel(t *testing.T) {
	tests := []struct {
		clients []string
		want    string
	}{
		{nil, "-"},
		{[]string{""}, "yes"},
		{[]string{"a"}, "yes (a)"},
		{[]string{"", "a"}, "yes (all clients, a)"},
	}
	for _, tc := range tests {
		if got := activeLabel(tc.clients); got != tc.want {
			t.Errorf("activeLabel(%q) = %q, want %q", tc.clients, got, tc.want)
		}
	}
}
