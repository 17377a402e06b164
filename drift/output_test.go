package drift_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/drift"
)

// outputs writes the report in every format and the summary.
func outputs(t *testing.T, r *drift.Report) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range drift.Formats {
		var b bytes.Buffer
		if err := r.Write(&b, f); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[f] = b.String()
	}
	var b bytes.Buffer
	if err := r.WriteSummary(&b); err != nil {
		t.Fatal(err)
	}
	out["summary"] = b.String()
	return out
}

func TestOutputFormatsParseBack(t *testing.T) {
	report, _, _ := standInDrift(t, nil)
	out := outputs(t, report)

	var doc struct {
		Differences []map[string]string `json:"differences"`
		Probes      []drift.ProbeResult `json:"probes"`
		Skipped     []drift.ProbeResult `json:"skipped"`
		Requests    []drift.RequestSummary
	}
	if err := json.Unmarshal([]byte(out["json"]), &doc); err != nil {
		t.Fatalf("json: %v", err)
	}
	if len(doc.Differences) != len(report.Differences) || len(doc.Differences) == 0 {
		t.Fatalf("json has %d differences, want %d", len(doc.Differences), len(report.Differences))
	}
	for _, field := range []string{"key", "probe", "aspect", "upstream", "sandbox", "detail"} {
		if doc.Differences[0][field] == "" {
			t.Errorf("json difference lacks %s: %v", field, doc.Differences[0])
		}
	}
	if len(doc.Probes) != len(report.Probes) || len(doc.Requests) != 2 || doc.Requests[0].Sent == 0 {
		t.Errorf("json: %d probes, requests %+v", len(doc.Probes), doc.Requests)
	}

	var suites struct {
		Suites []struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Cases    []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(out["junit"]), &suites); err != nil {
		t.Fatalf("junit: %v", err)
	}
	s := suites.Suites[0]
	if s.Tests != len(report.Probes)+len(report.Skipped) || len(s.Cases) != s.Tests {
		t.Errorf("junit: %d tests, %d cases; want one per probe (%d)", s.Tests, len(s.Cases), len(report.Probes)+len(report.Skipped))
	}
	failed := map[string]string{}
	for _, c := range s.Cases {
		if c.Failure != nil {
			failed[c.Name] = c.Failure.Text
		}
	}
	if len(failed) != s.Failures || !strings.Contains(failed["unknown-path"], "unknown-path/status: upstream 400, sandbox 404") {
		t.Errorf("junit failures %d, unknown-path's: %q", s.Failures, failed["unknown-path"])
	}

	if lines := strings.Split(strings.TrimSpace(out["text"]), "\n"); len(lines) != len(report.Differences) {
		t.Errorf("text has %d lines for %d differences", len(lines), len(report.Differences))
	}
	if !strings.Contains(out["markdown"], "| unknown-path | `status` | 400 | 404 |") {
		t.Errorf("markdown lacks the status row:\n%s", out["markdown"])
	}
	if !strings.Contains(out["summary"], "sent ") || !strings.Contains(out["summary"], "1 retried after 429") {
		t.Errorf("summary:\n%s", out["summary"])
	}
}

// The client secret and every token stay out of every output, even when
// the upstream echoes the secret into a value drift prints.
func TestNoSecretOrTokenInAnyOutput(t *testing.T) {
	const secret = "sandbox-partner-secret" // the stand-in's backing sandbox's
	report, s, _ := standInDrift(t, map[string]func(*http.Response, map[string]any){
		"token.unknown-scope": func(r *http.Response, v map[string]any) {
			v["error"] = secret
			r.Header.Set("Content-Type", "application/"+secret+"+json")
		},
	})
	forbidden := []string{secret}
	for rewritten, real := range s.tokens {
		forbidden = append(forbidden, rewritten, real)
	}
	if len(s.tokens) == 0 {
		t.Fatal("the stand-in issued no token")
	}
	echoed := false
	for name, text := range outputs(t, report) {
		for _, f := range forbidden {
			if strings.Contains(text, f) {
				t.Errorf("%s output holds a secret or token %.12s…", name, f)
			}
		}
		echoed = echoed || strings.Contains(text, "[redacted]")
	}
	if !echoed {
		t.Error("the echoed secret was not shown as [redacted]")
	}
}

func TestAllowListMovesDifferencesAside(t *testing.T) {
	allow, err := drift.ParseAllowList(strings.NewReader(`
# the real service answers 400 for unknown paths; partners never call one
unknown-path/status  ticket OPS-12
token/*   the identity provider's token is out of our hands
`))
	if err != nil {
		t.Fatal(err)
	}
	up, sb := newStandIn(t, startSandbox(t)), startSandbox(t)
	up.mutate["unknown-path"] = func(r *http.Response, _ map[string]any) { r.StatusCode = http.StatusBadRequest }
	ut := targetOf(t, "upstream", up.backing)
	ut.RootURL, ut.AuthURL = up.URL, up.authURL
	cfg := config(ut, targetOf(t, "sandbox", sb))
	cfg.Allow = allow
	report, err := drift.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if report.Failed() {
		t.Errorf("differences beyond the allow list: %+v", report.Differences)
	}
	reasons := map[string]string{}
	for _, d := range report.Allowed {
		reasons[d.Key] = d.Allowed
	}
	if reasons["unknown-path/status"] != "ticket OPS-12" || reasons["token/claim:appid"] == "" {
		t.Errorf("allowed: %v", reasons)
	}
}

func TestAllowListRefusesLinesWithoutReason(t *testing.T) {
	for _, text := range []string{"unknown-path/status\n", "not-a-key because\n"} {
		if _, err := drift.ParseAllowList(strings.NewReader(text)); err == nil {
			t.Errorf("%q parsed", text)
		}
	}
}

func TestUnreachableOrRefusingUpstreamIsAnError(t *testing.T) {
	sb := startSandbox(t)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	up := targetOf(t, "upstream", sb)
	up.RootURL, up.AuthURL = closed.URL, closed.URL+"/tenant"
	if _, err := drift.Run(context.Background(), config(up, targetOf(t, "sandbox", sb))); err == nil {
		t.Error("an unreachable upstream gave no error")
	}
	wrong := targetOf(t, "upstream", sb)
	wrong.Credentials.ClientSecret = "not-the-secret"
	_, err := drift.Run(context.Background(), config(wrong, targetOf(t, "sandbox", sb)))
	if !errors.Is(err, drift.ErrRefused) || strings.Contains(err.Error(), "not-the-secret") {
		t.Errorf("refused credentials: %v", err)
	}
}
