package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/conformance"
)

// TestMSALFromTheFirstCommand starts the binary as the README does (no
// --tls: the port answers HTTP and HTTPS), and runs MSAL for Python and
// msal-node with nothing but the authority URL, https://localhost:PORT/
// <tenant>, and the README's trust step in its per-process form: the
// variable naming the CA file the sandbox keeps in the user's
// configuration directory. Each library's example runs whole (token,
// calls, wrong secret, 401 after a clock move, recovery), then a careful
// and a naive program of each are judged by the conformance report: the
// careful ones pass every check they exercise, the naive ones fail
// reuses-tokens and stops-on-403 and nothing else, and MSAL's discovery
// requests form no program.
func TestMSALFromTheFirstCommand(t *testing.T) {
	python := pythonInterpreter()
	type program struct {
		name, dir string
		command   []string
		available func() string
	}
	node := func(args ...string) program {
		return program{"node " + strings.Join(args, " "), "node", append([]string{"node"}, args...), nodeAvailable}
	}
	py := func(args ...string) program {
		return program{"python " + strings.Join(args, " "), "python", append([]string{python}, args...),
			func() string { return pythonAvailable(python, "msal", "python3-msal") }}
	}
	// The judged programs first: the examples' wrong-secret requests are
	// rightly reported as requests without a client id.
	programs := []program{
		node("msal-report.js", "careful"), node("msal-report.js", "naive"),
		py("msal_report_client.py", "careful"), py("msal_report_client.py", "naive"),
		node("msal-node.js"), py("msal_client.py"),
	}
	var runnable []program
	for _, p := range programs {
		if runsHere(t, p.name, p.available()) {
			runnable = append(runnable, p)
		}
	}
	if len(runnable) == 0 {
		t.Skip("neither MSAL for Python nor msal-node is installed")
	}

	sb, authorityHost, caFile := launchForMSAL(t)
	if !strings.Contains(sb.stderr.String(), caFile) {
		t.Fatalf("the ready line does not name the CA %s:\n%s", caFile, sb.stderr)
	}
	var report conformance.Report
	for i, p := range runnable {
		clientID := "sandbox-readonly" // its writes get 403
		if !strings.Contains(p.name, "report") {
			clientID = "sandbox-partner"
			if report.Clients == nil {
				report = fetchReport(t, authorityHost, caFile)
			}
		}
		ctx, cancel := context.WithTimeout(t.Context(), programWait)
		cmd := exec.CommandContext(ctx, p.command[0], p.command[1:]...)
		cmd.Dir = filepath.Join("..", "examples", "clients", p.dir)
		cmd.Env = append(os.Environ(),
			"SANDBOX_URL="+authorityHost,
			"SANDBOX_TENANT=5f0a9c4e-3b1d-4e8a-9c27-0d1e2f3a4b5c",
			"SANDBOX_CLIENT_ID="+clientID,
			"SANDBOX_CLIENT_SECRET="+clientID+"-secret",
			"NODE_EXTRA_CA_CERTS="+caFile,
			"REQUESTS_CA_BUNDLE="+caFile,
			"NO_PROXY=localhost,127.0.0.1", "no_proxy=localhost,127.0.0.1",
		)
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("%s: %v\n%s", p.name, err, out)
		}
		t.Logf("%s:\n%s", p.name, out)
		if i == len(runnable)-1 && report.Clients == nil {
			report = fetchReport(t, authorityHost, caFile)
		}
	}

	judged := map[string]bool{}
	for _, cr := range report.Clients {
		if cr.ClientID == conformance.Unidentified {
			t.Errorf("requests without a client id judged as a program (MSAL's discovery?): %+v", cr)
		}
		if cr.ClientID != "sandbox-readonly" || cr.Program.Run == "" {
			continue
		}
		judged[cr.Program.Run] = true
		naive := strings.HasSuffix(cr.Program.Run, "-naive")
		for _, c := range cr.Checks {
			wantFail := naive && (c.ID == conformance.CheckReusesTokens || c.ID == conformance.CheckStopsOn403)
			switch {
			case wantFail && c.Result != conformance.Fail:
				t.Errorf("%s: %s %s (%s), want fail", cr.Program.Run, c.ID, c.Result, c.Explanation)
			case !wantFail && c.Result != conformance.Pass && c.Result != conformance.NotExercised:
				t.Errorf("%s: %s %s (%s) %v, want pass or not-exercised", cr.Program.Run, c.ID, c.Result, c.Explanation, c.Evidence)
			case !naive && (c.ID == conformance.CheckReusesTokens || c.ID == conformance.CheckStopsOn403 || c.ID == conformance.CheckHTTPSOnly) && c.Result != conformance.Pass:
				t.Errorf("%s: %s %s (%s), want pass", cr.Program.Run, c.ID, c.Result, c.Explanation)
			}
		}
	}
	for _, p := range runnable {
		if len(p.command) == 3 { // a report program: its mode is its last argument
			run := map[string]string{"node": "node-msal-", "python": "python-msal-"}[p.dir] + p.command[2]
			if !judged[run] {
				t.Errorf("the report has no program %s: %+v", run, report.Clients)
			}
		}
	}
}

// fetchReport reads the conformance report over HTTPS, trusting caFile,
// so that https-only is judged too.
func fetchReport(t *testing.T, base, caFile string) conformance.Report {
	t.Helper()
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := client.Get(base + "/__sandbox/report")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r conformance.Report
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&r) != nil {
		t.Fatalf("report: %d", resp.StatusCode)
	}
	return r
}

// TestMSALRenewsWithTheShortTokenPersona: a cache-first MSAL program
// (Python and Node, side by side) of the short-token- persona calls every
// 5 seconds for 70 seconds of real time, since MSAL judges expiry on the
// process's own clock. Its 6-minute tokens have 5 minutes left after one,
// when MSAL renews: the report judges that renewal and the reuse before it
// as passes. With 2-minute tokens it fetched a token for every call and
// failed reuses-tokens.
func TestMSALRenewsWithTheShortTokenPersona(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 70 s of real time; skipped with -short")
	}
	python := pythonInterpreter()
	type program struct {
		lang, dir, clientID string
		command             []string
		why                 string
	}
	candidates := []program{
		{"node", "node", "short-token-node", []string{"node", "msal-report.js", "renewal"}, nodeAvailable()},
		{"python", "python", "short-token-python", []string{python, "msal_report_client.py", "renewal"}, pythonAvailable(python, "msal", "python3-msal")},
	}
	var programs []program
	for _, p := range candidates {
		if runsHere(t, p.lang, p.why) {
			programs = append(programs, p)
		}
	}
	if len(programs) == 0 {
		t.Skip("neither MSAL for Python nor msal-node is installed")
	}
	sb, authorityHost, caFile := launchForMSAL(t)
	errs := make(chan error, len(programs))
	for _, p := range programs {
		secret := createClient(t, sb.base, p.clientID)
		go func() {
			// The program's 70 s of calls come on top of what any example takes.
			ctx, cancel := context.WithTimeout(t.Context(), programWait+70*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, p.command[0], p.command[1:]...)
			cmd.Dir = filepath.Join("..", "examples", "clients", p.dir)
			cmd.Env = append(os.Environ(),
				"SANDBOX_URL="+authorityHost,
				"SANDBOX_TENANT=5f0a9c4e-3b1d-4e8a-9c27-0d1e2f3a4b5c",
				"SANDBOX_CLIENT_ID="+p.clientID,
				"SANDBOX_CLIENT_SECRET="+secret,
				"NODE_EXTRA_CA_CERTS="+caFile,
				"REQUESTS_CA_BUNDLE="+caFile,
				"NO_PROXY=localhost,127.0.0.1", "no_proxy=localhost,127.0.0.1",
			)
			out, err := cmd.CombinedOutput()
			if err != nil {
				err = fmt.Errorf("%s: %w\n%s", p.lang, err, out)
			}
			errs <- err
		}()
	}
	for range programs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	report := fetchReport(t, authorityHost, caFile)
	for _, p := range programs {
		found := false
		for _, cr := range report.Clients {
			if cr.ClientID != p.clientID {
				continue
			}
			found = true
			for _, c := range cr.Checks {
				mustPass := c.ID == conformance.CheckRenewsBeforeExpiry || c.ID == conformance.CheckReusesTokens || c.ID == conformance.CheckExpiredToken
				if c.Result == conformance.Fail || c.Result == conformance.Warn || (mustPass && c.Result != conformance.Pass) {
					t.Errorf("%s: %s %s (%s) %v", p.clientID, c.ID, c.Result, c.Explanation, c.Evidence)
				}
			}
		}
		if !found {
			t.Errorf("the report has no %s: %+v", p.clientID, report.Clients)
		}
	}
}

// createClient creates a client with id through the admin API, with
// Trials.Read only, and returns its secret.
func createClient(t *testing.T, base, id string) string {
	t.Helper()
	body := strings.NewReader(`{"clientId":"` + id + `","roles":["Trials.Read"]}`)
	resp, err := http.Post(base+"/__sandbox/clients", "application/json", body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var created struct {
		ClientSecret string `json:"clientSecret"`
	}
	if resp.StatusCode != http.StatusCreated || json.NewDecoder(resp.Body).Decode(&created) != nil || created.ClientSecret == "" {
		t.Fatalf("create client %s: %d", id, resp.StatusCode)
	}
	return created.ClientSecret
}

// runsHere reports whether the program named name can run: why says what
// is missing ("" when nothing is). A missing one fails the test under
// REAL_CLIENTS=required, as CI sets it, and is skipped with a log line
// otherwise.
func runsHere(t *testing.T, name, why string) bool {
	t.Helper()
	if why == "" {
		return true
	}
	if os.Getenv("REAL_CLIENTS") == "required" {
		t.Fatalf("REAL_CLIENTS=required but %s", why)
	}
	t.Logf("skipped %s: %s", name, why)
	return false
}

// launchForMSAL starts the binary as the README does and returns it with
// the HTTPS authority host MSAL is given and the kept CA's file (in the
// test's XDG_CONFIG_HOME, see TestMain), the one trust step.
func launchForMSAL(t *testing.T) (sb *sandboxProc, authorityHost, caFile string) {
	t.Helper()
	sb = launch(t, "")
	port := sb.base[strings.LastIndex(sb.base, ":")+1:]
	return sb, "https://localhost:" + port, filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "referrals-sandbox", "ca.pem")
}
