package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// envLines reads KEY=VALUE lines.
func envLines(t *testing.T, out string) map[string]string {
	t.Helper()
	vars := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			t.Fatalf("line %q is not KEY=VALUE", sc.Text())
		}
		vars[k] = v
	}
	return vars
}

func TestClientCreateListDelete(t *testing.T) {
	root := startSandbox(t, sandbox.Config{})
	res := runCLI(t, map[string]string{"SANDBOX_URL": root}, "client", "create", "--roles", "Trials.Read", "--ttl", "1h")
	if res.code != 0 {
		t.Fatalf("create: exit %d, stderr %q", res.code, res.stderr)
	}
	vars := envLines(t, res.stdout)
	for _, k := range []string{"REFERRALS_CLIENT_ID", "REFERRALS_CLIENT_SECRET", "REFERRALS_SCOPE", "REFERRALS_AUTH_URL", "REFERRALS_TOKEN_URL", "REFERRALS_BASE_URL", "REFERRALS_ROOT_URL"} {
		if vars[k] == "" {
			t.Errorf("%s missing from:\n%s", k, res.stdout)
		}
	}
	if vars["REFERRALS_ROOT_URL"] != root || vars["REFERRALS_BASE_URL"] != root+"/api/v1" {
		t.Errorf("addresses %q %q, want the sandbox's", vars["REFERRALS_ROOT_URL"], vars["REFERRALS_BASE_URL"])
	}
	// The printed credentials work, exactly as printed.
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {vars["REFERRALS_CLIENT_ID"]},
		"client_secret": {vars["REFERRALS_CLIENT_SECRET"]}, "scope": {vars["REFERRALS_SCOPE"]}}
	resp, err := http.PostForm(vars["REFERRALS_TOKEN_URL"], form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("token with the printed credentials: %s", resp.Status)
	}

	list := runCLI(t, map[string]string{"SANDBOX_URL": root}, "client", "list")
	if list.code != 0 || !strings.Contains(list.stdout, vars["REFERRALS_CLIENT_ID"]+" ") || !strings.Contains(list.stdout, "runtime") || strings.Contains(list.stdout, vars["REFERRALS_CLIENT_SECRET"]) {
		t.Errorf("list: exit %d:\n%s", list.code, list.stdout)
	}
	del := runCLI(t, nil, "client", "delete", vars["REFERRALS_CLIENT_ID"], "--url", root)
	if del.code != 0 {
		t.Fatalf("delete: exit %d, stderr %q", del.code, del.stderr)
	}
	again := runCLI(t, nil, "client", "delete", "--url", root, vars["REFERRALS_CLIENT_ID"])
	if again.code != 1 || !strings.Contains(again.stderr, "404") {
		t.Errorf("delete twice: exit %d, stderr %q", again.code, again.stderr)
	}
}

func TestClientCreateJSON(t *testing.T) {
	root := startSandbox(t, sandbox.Config{})
	res := runCLI(t, nil, "client", "create", "--url", root, "--format", "json", "--client-id", "job-7")
	var got struct {
		ClientID     string `json:"clientId"`
		ClientSecret string `json:"clientSecret"`
	}
	if res.code != 0 || json.Unmarshal([]byte(res.stdout), &got) != nil || got.ClientID != "job-7" || got.ClientSecret == "" {
		t.Errorf("exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
	if bad := runCLI(t, nil, "client", "create", "--url", root, "--format", "yaml"); bad.code != 2 {
		t.Errorf("--format yaml: exit %d", bad.code)
	}
}
