package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// recordThroughProxy serves a "real service" (a sandbox whose fixtures
// add the trial TRIAL-REAL-9) behind a recording proxy, sends a partner's
// calls through the proxy and returns the proxy's root URL and the real
// service's patient names, which must not leave the recording. keep is
// the proxy's --upstream-keep.
func recordThroughProxy(t *testing.T, keep ...string) (proxyURL string, realNames []string) {
	t.Helper()
	set, err := fixtures.Default()
	if err != nil {
		t.Fatal(err)
	}
	// The real service's patients bear names no fake-value generator
	// makes, so one found in an import leaked: the embedded fixtures'
	// names are common ones an import's fake names may equal by chance.
	for i := range set.Referrals {
		set.Referrals[i].Patient.LastName = "Realpatient" + strings.Repeat("q", i%7+1) + "x"
	}
	set.Trials = append(set.Trials, referrals.Trial{TrialID: "TRIAL-REAL-9", AltTrialID: "NCT09999999", VersionID: "v1", Name: "Recorded Trial", Active: true, AcceptingReferrals: true})
	dir := t.TempDir()
	if err := fixtures.WriteDir(set, dir); err != nil {
		t.Fatal(err)
	}
	real := startSandbox(t, sandbox.Config{FixturesDir: dir, RateLimit: sandbox.DefaultRateLimit, RateBurst: sandbox.DefaultRateBurst})
	proxy := startSandbox(t, sandbox.Config{Upstream: &sandbox.UpstreamConfig{RootURL: real, AuthURL: real + "/" + idp.DefaultTenant, Keep: keep}})

	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"sandbox-partner"}, "client_secret": {"sandbox-partner-secret"}, "scope": {"api://referrals-sandbox/.default"}}
	resp, err := http.PostForm(proxy+"/"+idp.DefaultTenant+"/oauth2/v2.0/token", form)
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	err = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if err != nil || tok.AccessToken == "" {
		t.Fatalf("token through the proxy: %d %v", resp.StatusCode, err)
	}
	for _, path := range []string{"/health/ping", "/api/v1/referrals/trials", "/api/v1/referrals/", "/api/v1/referrals/qualified"} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, proxy+path, nil)
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s through the proxy: %d", path, resp.StatusCode)
		}
	}
	for _, r := range set.Referrals {
		if r.ClientID == "sandbox-partner" {
			realNames = append(realNames, r.Patient.LastName)
		}
	}
	return proxy, realNames
}

func TestFixturesImportFromARecordingLoadsInTheSandbox(t *testing.T) {
	// A team whose code names trials by id keeps their ids in recordings;
	// every other value is a placeholder, and fake once imported.
	proxy, realNames := recordThroughProxy(t, "trialId", "altTrialId")
	dir := filepath.Join(t.TempDir(), "imported")
	r := runCLI(t, nil, "fixtures", "import", "--from-journal", proxy, dir)
	if r.code != 0 || !strings.Contains(r.stdout, "wrote 4 trials") {
		t.Fatalf("import: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	raw, err := os.ReadFile(filepath.Join(dir, fixtures.ReferralsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range realNames {
		if strings.Contains(string(raw), `"`+name+`"`) {
			t.Errorf("the imported referrals hold the real name %q", name)
		}
	}
	// An import is repeatable: the same recording gives the same files.
	again := filepath.Join(t.TempDir(), "again")
	if r := runCLI(t, nil, "fixtures", "import", "--from-journal", proxy, again); r.code != 0 {
		t.Fatalf("import again: %s", r.stderr)
	}
	for _, name := range []string{fixtures.TrialsFile, fixtures.ReferralsFile, fixtures.QualifiedReferralsFile} {
		first, _ := os.ReadFile(filepath.Join(dir, name))
		second, err := os.ReadFile(filepath.Join(again, name))
		if err != nil || string(first) != string(second) {
			t.Errorf("%s differs between two imports of one recording", name)
		}
	}
	// The sandbox loads the directory (--fixtures DIR) and serves the
	// recorded trials list.
	imported := startSandbox(t, sandbox.Config{FixturesDir: dir})
	set, err := fixtures.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Referrals) == 0 || len(set.QualifiedReferrals) == 0 {
		t.Errorf("imported %d referrals and %d qualified referrals, want the recorded ones", len(set.Referrals), len(set.QualifiedReferrals))
	}
	r = runCLI(t, nil, "token", "--url", imported)
	if r.code != 0 {
		t.Fatalf("token from the imported sandbox: %s", r.stderr)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, imported+"/api/v1/referrals/trials", nil)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(r.stdout))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "TRIAL-REAL-9") || strings.Contains(string(body), "Recorded Trial") {
		t.Errorf("trials of the imported sandbox: %d %s", resp.StatusCode, body)
	}
}

func TestDriftFromARecording(t *testing.T) {
	proxy, _ := recordThroughProxy(t)
	r := runCLI(t, nil, "requests", "--url", proxy, "--json")
	if r.code != 0 {
		t.Fatalf("requests: %s", r.stderr)
	}
	file := filepath.Join(t.TempDir(), "recording.jsonl")
	if err := os.WriteFile(file, []byte(r.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	// The recording of a sandbox matches the sandbox.
	if r := runCLI(t, nil, "drift", "--recording", file, "--max-rps", "1000"); r.code != 0 {
		t.Fatalf("drift --recording: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// A recording whose trials list names a member otherwise differs.
	entries, err := journal.ReadEntries(strings.NewReader(r.stdout))
	if err != nil {
		t.Fatal(err)
	}
	var changed strings.Builder
	for _, e := range entries {
		if e.Path == "/api/v1/referrals/trials" && e.Upstream != nil {
			e.Upstream.Body = json.RawMessage(strings.ReplaceAll(string(e.Upstream.Body), `"versionId"`, `"version"`))
		}
		line, _ := json.Marshal(e)
		changed.Write(append(line, '\n'))
	}
	if err := os.WriteFile(file, []byte(changed.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, nil, "drift", "--recording", file, "--max-rps", "1000")
	if r.code != 1 || !strings.Contains(r.stdout, "recorded:GET:/api/v1/referrals/trials:200/body:$.trials[].version: upstream present, sandbox absent") {
		t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestRecordingCommandsUsageErrors(t *testing.T) {
	empty := writeFile(t, "")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"fixtures", "import", t.TempDir()}, 2, "--from-journal"},
		{[]string{"fixtures", "import", "--from-journal", empty, t.TempDir()}, 1, "holds no trials list"},
		{[]string{"drift", "--recording", empty, "--upstream", "https://real.example"}, 2, "takes no --upstream"},
		{[]string{"drift", "--recording", empty}, 2, "holds no answer of the real service"},
	} {
		if r := runCLI(t, nil, tc.args...); r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, r.code, r.stderr, tc.code, tc.want)
		}
	}
}
