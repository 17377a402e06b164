package drift_test

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/drift"
)

// want is one difference the stand-in's changes must produce.
type want struct{ key, upstream, sandbox string }

// standInDrift runs drift between a stand-in upstream with deliberate
// differences of every kind and a sandbox, and returns the report.
// Overrides replace or add changes.
func standInDrift(t *testing.T, overrides map[string]func(*http.Response, map[string]any)) (*drift.Report, *standIn, []time.Duration) {
	t.Helper()
	s := newStandIn(t, startSandbox(t))
	rename := func(list, from, to string) func(*http.Response, map[string]any) {
		return func(_ *http.Response, v map[string]any) {
			for _, e := range v[list].([]any) {
				m := e.(map[string]any)
				m[to] = m[from]
				delete(m, from)
			}
		}
	}
	s.mutate = map[string]func(*http.Response, map[string]any){
		"unknown-path": func(r *http.Response, _ map[string]any) { r.StatusCode = http.StatusBadRequest },
		"trials-list": func(r *http.Response, v map[string]any) {
			r.Header.Set("Content-Type", "application/json; charset=utf-8")
			rename("trials", "versionId", "version")(r, v)
		},
		"trials-list.no-token": func(r *http.Response, _ map[string]any) { r.Header.Del("WWW-Authenticate") },
		"ping.garbled-token":   func(r *http.Response, _ map[string]any) { r.Header.Set("Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT") },
		"ping":                 func(_ *http.Response, v map[string]any) { v["timestamp"] = "2026-11-25T12:23:42.1234567Z" },
		"qualified-read.unknown": func(_ *http.Response, v map[string]any) {
			clear(v)
			v["error"] = map[string]any{"code": "NotFound", "message": "x"}
		},
		"referral-read.unknown": func(_ *http.Response, v map[string]any) { v["traceId"] = "00-4bf92f3577b34da6-01" },
		"referrals-list": func(r *http.Response, v map[string]any) {
			r.Header.Del("RateLimit-Remaining")
			for i, e := range v["referrals"].([]any) {
				p := e.(map[string]any)
				p["patient"].(map[string]any)["dateOfBirth"] = "05/31/1948"
				if i == 0 {
					delete(p, "status")
				}
			}
		},
		"qualified-list": func(_ *http.Response, v map[string]any) {
			for _, e := range v["qualifiedReferrals"].([]any) {
				e.(map[string]any)["auditTrailTotal"] = "2"
			}
		},
		"token.wrong-secret":  func(_ *http.Response, v map[string]any) { delete(v, "error_codes") },
		"token.unknown-scope": func(_ *http.Response, v map[string]any) { v["error"] = "invalid_request" },
	}
	for probe, change := range overrides {
		s.mutate[probe] = change
	}
	s.status429 = "referrals-list.paged"
	up := targetOf(t, "upstream", s.backing)
	up.RootURL, up.AuthURL = s.URL, s.authURL
	cfg := config(up, targetOf(t, "sandbox", startSandbox(t)))
	var waits []time.Duration
	cfg.Wait = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	report, err := drift.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return report, s, waits
}

func TestEveryKindOfDifferenceIsReported(t *testing.T) {
	report, _, waits := standInDrift(t, nil)
	wants := []want{
		{"unknown-path/status", "400", "404"},
		{"trials-list/header:Content-Type", "application/json; charset", "application/json"},
		{"trials-list.no-token/header:WWW-Authenticate", "absent", "bearer; error, error_description, realm"},
		{"ping.garbled-token/header:Retry-After", "HTTP date", "absent"},
		{"referrals-list/header:Ratelimit-Remaining", "absent", "integer"},
		{"token/header:Cache-Control", "no-store", "no-cache, no-store"},
		{"trials-list/body:$.trials[].version", "present", "absent"},
		{"trials-list/body:$.trials[].versionId", "absent", "present"},
		{"qualified-list/body:$.qualifiedReferrals[].auditTrailTotal", "string", "integer"},
		{"ping/body:$.timestamp", "date-time (T separator, Z, 7 fraction digits)", "date-time (T separator, ±hh:mm, 6 fraction digits)"},
		{"referrals-list/body:$.referrals[].patient.dateOfBirth", "string", "date"},
		{"referral-read.unknown/body:$.traceId", "string", "uuid"},
		{"referrals-list/body:$.referrals[].status", "optional", "always present"},
		{"token/token:token_type", "bearer", "Bearer"},
		{"token/token:expires_in", "5399 s", "3599 s"},
		{"token/jwt-header:kid", "absent", "present"},
		{"token/claim:appid", "present", "absent"},
		{"token.wrong-secret/body:$.error_codes", "absent", "present"},
		{"token.unknown-scope/token-error:error", "invalid_request", "invalid_scope"},
		{"qualified-read.unknown/body:$.error", "present", "absent"},
		{"qualified-read.unknown/body:$.title", "absent", "present"},
	}
	got := map[string]drift.Difference{}
	for _, d := range report.Differences {
		got[d.Key] = d
		if d.Key != d.Probe+"/"+d.Aspect {
			t.Errorf("key %q is not probe/aspect (%s, %s)", d.Key, d.Probe, d.Aspect)
		}
	}
	for _, w := range wants {
		d, ok := got[w.key]
		if !ok {
			t.Errorf("no difference %s", w.key)
			continue
		}
		if d.Upstream != w.upstream || d.Sandbox != w.sandbox {
			t.Errorf("%s: upstream %q, sandbox %q; want %q, %q", w.key, d.Upstream, d.Sandbox, w.upstream, w.sandbox)
		}
		delete(got, w.key)
	}
	// The stand-in changed nothing else, so nothing else may differ but
	// the rest of the problem shape the error object replaced.
	var extra []string
	for k := range got {
		if !strings.HasPrefix(k, "qualified-read.unknown/body:$.") {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("differences the stand-in did not make: %s", strings.Join(extra, ", "))
	}
	// The 429 was waited out (Retry-After: 1) and the probe sent again,
	// so it is no difference.
	if report.Requests[0].Retried != 1 || !containsDuration(waits, time.Second) {
		t.Errorf("upstream summary %+v, waits %v: want one retry after waiting 1s", report.Requests[0], waits)
	}
}

func containsDuration(list []time.Duration, d time.Duration) bool {
	for _, x := range list {
		if x > d-100*time.Millisecond && x <= d {
			return true
		}
	}
	return false
}

// Data an upstream uses as a member name (a patient's name, a date of
// birth) never reaches a report: such a name stands for its form.
func TestMemberNamesThatAreDataStayOutOfReports(t *testing.T) {
	report, _, _ := standInDrift(t, map[string]func(*http.Response, map[string]any){
		"ping": func(_ *http.Response, v map[string]any) {
			v["Marguerite Okonkwo"] = map[string]any{"1961-03-14": true}
			v["nhsNumber"] = 9434765919
		},
	})
	var out strings.Builder
	for _, format := range []string{"text", "json", "markdown", "junit"} {
		if err := report.Write(&out, format); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Contains(out.String(), "Marguerite") || strings.Contains(out.String(), "1961-03-14") {
		t.Errorf("a report holds data used as a member name:\n%s", out.String())
	}
	keys := map[string]bool{}
	for _, d := range report.Differences {
		keys[d.Key] = true
	}
	if !keys["ping/body:$[a string name of 18 characters]"] || !keys["ping/body:$.nhsNumber"] {
		t.Errorf("the members only the upstream sends are not reported by form: %v", keys)
	}
}

// TestEntraAnswersAreCompared: where the interface is silent the sandbox
// answers as Entra does, and drift compares those answers, AADSTS code
// included, so a difference from the real identity provider shows.
func TestEntraAnswersAreCompared(t *testing.T) {
	report, _, _ := standInDrift(t, map[string]func(*http.Response, map[string]any){
		// As the sandbox answered a repeated parameter before it followed
		// Entra (AADSTS9002313), and a GET with 405.
		"token.repeated-scope": func(_ *http.Response, v map[string]any) { v["error_codes"] = []any{9002313} },
		"token.get":            func(r *http.Response, _ map[string]any) { r.StatusCode = http.StatusMethodNotAllowed },
	})
	got := map[string]drift.Difference{}
	probes := map[string]bool{}
	for _, d := range report.Differences {
		got[d.Key] = d
	}
	for _, p := range report.Probes {
		probes[p.Name] = true
	}
	for _, name := range []string{"token.missing-client-secret", "token.scope-without-default", "token.scope-openid",
		"token.repeated-scope", "token.unknown-tenant", "token.get", "token.preflight"} {
		if !probes[name] {
			t.Errorf("probe %s did not run", name)
		}
	}
	for key, want := range map[string][2]string{
		"token.repeated-scope/token-error:error_codes": {"9002313", "9000411"},
		"token.get/status": {"405", "400"},
	} {
		if d, ok := got[key]; !ok || d.Upstream != want[0] || d.Sandbox != want[1] {
			t.Errorf("%s: %+v, want upstream %s, sandbox %s", key, d, want[0], want[1])
		}
	}
}
