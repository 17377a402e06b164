package sandboxtest_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
	"github.com/referrals-sandbox/referrals-sandbox/sandboxtest"
)

func TestStartServesTheSandbox(t *testing.T) {
	tests := []struct {
		name   string
		opts   []sandboxtest.Option
		scheme string
	}{
		{"plain HTTP", nil, "http://127.0.0.1:"},
		{"TLS", []sandboxtest.Option{sandboxtest.WithTLS()}, "https://127.0.0.1:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sb := sandboxtest.Start(t, tc.opts...)
			if !strings.HasPrefix(sb.RootURL, tc.scheme) || sb.URL != sb.RootURL {
				t.Fatalf("RootURL %q, URL %q; want both on %s", sb.RootURL, sb.URL, tc.scheme)
			}
			wantURLs := map[string]string{
				"AuthURL":  sb.RootURL + "/" + sb.Tenant,
				"TokenURL": sb.RootURL + "/" + sb.Tenant + "/oauth2/v2.0/token",
				"BaseURL":  sb.RootURL + "/api/v1",
			}
			for name, got := range map[string]string{"AuthURL": sb.AuthURL, "TokenURL": sb.TokenURL, "BaseURL": sb.BaseURL} {
				if got != wantURLs[name] {
					t.Errorf("%s = %q, want %q", name, got, wantURLs[name])
				}
			}
			if (sb.CACertPEM != nil) != (tc.scheme == "https://127.0.0.1:") {
				t.Errorf("CACertPEM set = %v on %s", sb.CACertPEM != nil, tc.scheme)
			}

			// The sandbox advertises the addresses the helper exposes.
			status, body := call(t, sb, http.MethodGet, sb.AuthURL+"/v2.0/.well-known/openid-configuration", "")
			var discovery struct {
				Issuer        string `json:"issuer"`
				TokenEndpoint string `json:"token_endpoint"`
			}
			if err := json.Unmarshal(body, &discovery); status != http.StatusOK || err != nil {
				t.Fatalf("discovery: %d %s (%v)", status, body, err)
			}
			if discovery.TokenEndpoint != sb.TokenURL || discovery.Issuer != sb.AuthURL+"/v2.0" {
				t.Errorf("discovery says token endpoint %q, issuer %q; helper says %q, %q", discovery.TokenEndpoint, discovery.Issuer, sb.TokenURL, sb.AuthURL+"/v2.0")
			}

			if got := getTrials(t, sb, sb.Token(t, sb.DefaultCredentials)); got != http.StatusOK {
				t.Fatalf("trials with the default credentials: %d, want 200", got)
			}
			entries := sb.Requests(t, sandboxtest.JournalFilter{Path: trialsPath})
			if len(entries) != 1 || entries[0].TLS != (tc.scheme == "https://127.0.0.1:") || entries[0].ClientID != sb.DefaultCredentials.ClientID {
				t.Errorf("journal of the API call: %+v", entries)
			}
		})
	}
}

func TestTLSNeedsTheSandboxCA(t *testing.T) {
	sb := sandboxtest.Start(t, sandboxtest.WithTLS())
	stranger := &http.Client{Transport: &http.Transport{}}
	resp, err := stranger.Get(sb.RootURL + "/__sandbox/health")
	if err == nil {
		resp.Body.Close()
		t.Fatal("a client without the sandbox CA connected")
	}
	var unknownCA *tls.CertificateVerificationError
	if !errors.As(err, &unknownCA) {
		t.Errorf("error %v is not a certificate verification error", err)
	}
}

func TestWithTLSRoutesExtraHostsToTheSandbox(t *testing.T) {
	sb := sandboxtest.Start(t, sandboxtest.WithTLS("referrals.partner.test"))
	status, body := call(t, sb, http.MethodGet, "https://referrals.partner.test/__sandbox/health", "")
	if status != http.StatusOK || !strings.Contains(string(body), "ok") {
		t.Errorf("health at the extra host: %d %s", status, body)
	}
}

func TestClientCredentialsOfEachFixtureClient(t *testing.T) {
	sb := sandboxtest.Start(t)
	tests := []struct {
		clientID string
		want     int
	}{
		{"sandbox-partner", http.StatusOK},
		{"sandbox-readonly", http.StatusOK},
		{"sandbox-noroles", http.StatusForbidden},
		{"sandbox-other-api", http.StatusUnauthorized}, // a token for another API's audience
	}
	for _, tc := range tests {
		t.Run(tc.clientID, func(t *testing.T) {
			creds := sb.Credentials(t, tc.clientID)
			if creds.ClientID != tc.clientID || creds.ClientSecret == "" || !strings.HasSuffix(creds.Scope, "/.default") {
				t.Fatalf("credentials %+v", creds)
			}
			if got := getTrials(t, sb, sb.Token(t, creds)); got != tc.want {
				t.Errorf("trials: %d, want %d", got, tc.want)
			}
		})
	}
	if sb.DefaultCredentials != sb.Credentials(t, "sandbox-partner") {
		t.Errorf("default credentials %+v are not sandbox-partner's", sb.DefaultCredentials)
	}
}

func TestAdminHelpers(t *testing.T) {
	sb := sandboxtest.Start(t)
	token := sb.Token(t, sb.DefaultCredentials)
	other := sb.Token(t, sb.Credentials(t, "sandbox-readonly"))

	rule := sb.AddRule(t, sandboxtest.Rule{Endpoint: sandboxtest.EndpointAPI, Status: http.StatusServiceUnavailable, Times: 1})
	if rule.ID == "" || rule.Remaining == nil || *rule.Remaining != 1 || rule.Hits != 0 {
		t.Fatalf("added rule: %+v", rule)
	}
	for i, want := range []int{http.StatusServiceUnavailable, http.StatusOK} {
		if got := getTrials(t, sb, token); got != want {
			t.Fatalf("call %d after AddRule: %d, want %d", i+1, got, want)
		}
	}
	forced := sb.Requests(t, sandboxtest.JournalFilter{Status: http.StatusServiceUnavailable})
	if len(forced) != 1 || forced[0].RuleID != rule.ID {
		t.Fatalf("journal of forced answers: %+v", forced)
	}

	// A scenario bound to one client leaves the others alone.
	sb.ApplyScenario(t, "token-expired", sb.DefaultCredentials.ClientID)
	if got := getTrials(t, sb, other); got != http.StatusOK {
		t.Errorf("another client under token-expired: %d, want 200", got)
	}
	for i, want := range []int{http.StatusUnauthorized, http.StatusOK} {
		if got := getTrials(t, sb, token); got != want {
			t.Fatalf("call %d under token-expired: %d, want %d", i+1, got, want)
		}
	}

	sb.AdvanceClock(t, 2*time.Hour)
	if got := getTrials(t, sb, token); got != http.StatusUnauthorized {
		t.Errorf("trials two hours on: %d, want 401 (token expired)", got)
	}
	if ahead := time.Until(sb.Now()); ahead < 2*time.Hour-time.Minute || ahead > 2*time.Hour+time.Minute {
		t.Errorf("sandbox time %s ahead of real time after AdvanceClock(2h)", ahead)
	}

	sb.Reset(t)
	if ahead := time.Until(sb.Now()); ahead > time.Minute {
		t.Errorf("sandbox time %s ahead of real time after Reset", ahead)
	}
	if got := getTrials(t, sb, token); got != http.StatusOK {
		t.Errorf("trials after Reset: %d, want 200 (real time again)", got)
	}
	if entries := sb.Requests(t, sandboxtest.JournalFilter{}); len(entries) != 1 {
		t.Errorf("journal after Reset and one call holds %d entries, want 1", len(entries))
	}
}

// TestSaveAndDeleteScenario: a scenario saved through the helper applies
// like a built-in one, and deleting it switches it off and frees its name.
func TestSaveAndDeleteScenario(t *testing.T) {
	sb := sandboxtest.Start(t)
	token := sb.Token(t, sb.DefaultCredentials)
	rules := []sandboxtest.Rule{{Endpoint: sandboxtest.EndpointAPI, Status: http.StatusServiceUnavailable}}
	sb.SaveScenario(t, "job-outage", "A job's own outage.", rules)
	sb.ApplyScenario(t, "job-outage", "")
	if got := getTrials(t, sb, token); got != http.StatusServiceUnavailable {
		t.Fatalf("under the saved scenario: %d, want 503", got)
	}
	sb.DeleteScenario(t, "job-outage")
	if got := getTrials(t, sb, token); got != http.StatusOK {
		t.Errorf("after deleting it: %d, want 200", got)
	}
	if err := sb.DeleteScenarioContext(context.Background(), "job-outage"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("deleting it again: %v, want the 404", err)
	}
	if err := sb.SaveScenarioContext(context.Background(), "job-outage", "Again.", rules); err != nil {
		t.Errorf("saving the freed name: %v", err)
	}
}

func TestOptions(t *testing.T) {
	tests := []struct {
		name  string
		opts  func(t *testing.T) []sandboxtest.Option
		check func(t *testing.T, sb *sandboxtest.Sandbox)
	}{
		{
			name: "WithTokenLifetime",
			opts: func(*testing.T) []sandboxtest.Option {
				return []sandboxtest.Option{sandboxtest.WithTokenLifetime(90 * time.Second)}
			},
			check: func(t *testing.T, sb *sandboxtest.Sandbox) {
				c := testutil.JWTClaims(t, sb.Token(t, sb.DefaultCredentials))
				exp, iat := c["exp"].(float64), c["iat"].(float64)
				if exp-iat != 90 {
					t.Errorf("token lives %vs, want 90s", exp-iat)
				}
			},
		},
		{
			name: "WithRateLimit",
			// Refilling one request per 1000s keeps the count exact however slow the machine.
			opts: func(*testing.T) []sandboxtest.Option {
				return []sandboxtest.Option{sandboxtest.WithRateLimit(0.001, 2)}
			},
			check: func(t *testing.T, sb *sandboxtest.Sandbox) {
				token := sb.Token(t, sb.DefaultCredentials)
				for i, want := range []int{http.StatusOK, http.StatusOK, http.StatusTooManyRequests} {
					if got, _ := call(t, sb, http.MethodGet, sb.RootURL+"/health/ping", token); got != want {
						t.Errorf("ping %d: %d, want %d", i+1, got, want)
					}
				}
			},
		},
		{
			name: "WithScenario",
			opts: func(*testing.T) []sandboxtest.Option {
				return []sandboxtest.Option{sandboxtest.WithScenario("rate-limited")}
			},
			check: func(t *testing.T, sb *sandboxtest.Sandbox) {
				if got := getTrials(t, sb, sb.Token(t, sb.DefaultCredentials)); got != http.StatusTooManyRequests {
					t.Errorf("trials under rate-limited: %d, want 429", got)
				}
			},
		},
		{
			name: "WithFixturesDir",
			opts: func(t *testing.T) []sandboxtest.Option {
				return []sandboxtest.Option{sandboxtest.WithFixturesDir(partnerFixtures(t))}
			},
			check: func(t *testing.T, sb *sandboxtest.Sandbox) {
				if sb.DefaultCredentials.ClientID != "acme-referrals" {
					t.Fatalf("default credentials %+v, want the fixtures' first client", sb.DefaultCredentials)
				}
				if got := getTrials(t, sb, sb.Token(t, sb.DefaultCredentials)); got != http.StatusOK {
					t.Errorf("trials: %d, want 200", got)
				}
			},
		},
		{
			name: "WithTenant and WithAdminToken",
			opts: func(*testing.T) []sandboxtest.Option {
				return []sandboxtest.Option{
					sandboxtest.WithTenant("0b1c2d3e-0000-4000-8000-000000000001"),
					sandboxtest.WithAdminToken("admin-secret"),
				}
			},
			check: func(t *testing.T, sb *sandboxtest.Sandbox) {
				if sb.Tenant != "0b1c2d3e-0000-4000-8000-000000000001" || !strings.HasSuffix(sb.AuthURL, "/"+sb.Tenant) {
					t.Errorf("tenant %q, auth URL %q", sb.Tenant, sb.AuthURL)
				}
				if got, _ := call(t, sb, http.MethodGet, sb.RootURL+"/__sandbox/requests", ""); got != http.StatusUnauthorized {
					t.Errorf("admin API without the admin token: %d, want 401", got)
				}
				sb.Reset(t) // the helpers send the admin token themselves
				if got := sb.Requests(t, sandboxtest.JournalFilter{}); len(got) != 0 {
					t.Errorf("journal after Reset: %+v", got)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, sandboxtest.Start(t, tc.opts(t)...))
		})
	}
}

// partnerFixtures writes a fixtures directory whose only client is
// acme-referrals, with the embedded trials.
func partnerFixtures(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	trials, err := os.ReadFile(filepath.Join("..", "fixtures", "default", "trials.json"))
	if err != nil {
		t.Fatalf("embedded trials: %v", err)
	}
	clients := `[{"clientId": "acme-referrals", "clientSecret": "acme-secret",
		"roles": ["Trials.Read"], "resources": ["api://referrals-sandbox"]}]`
	for name, content := range map[string][]byte{"clients.json": []byte(clients), "trials.json": trials} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o600); err != nil {
			t.Fatalf("write %s: %v", name, err)
		}
	}
	return dir
}

func TestStartServerRefusesBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opt  sandboxtest.Option
		want string
	}{
		{"unknown scenario", sandboxtest.WithScenario("no-such-scenario"), "no-such-scenario"},
		{"missing fixtures", sandboxtest.WithFixturesDir(filepath.Join(t.TempDir(), "absent")), "absent"},
		{"negative rate", sandboxtest.WithRateLimit(-1, 0), "negative"},
		{"short tokens", sandboxtest.WithTokenLifetime(time.Millisecond), "under one second"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sb, err := sandboxtest.StartServer(tc.opt)
			if err == nil {
				sb.Close()
				t.Fatal("started")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

func TestCloseStopsServing(t *testing.T) {
	sb, err := sandboxtest.StartServer()
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := sb.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	resp, err := (&http.Client{Transport: &http.Transport{}}).Get(sb.RootURL + "/__sandbox/health")
	if err == nil {
		resp.Body.Close()
		t.Error("the sandbox still answers after Close")
	}
}

// fatalRecorder stands in for a test to see how a helper fails: it keeps
// the message instead of stopping.
type fatalRecorder struct {
	testing.TB
	message string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	if r.message == "" {
		r.message = fmt.Sprintf(format, args...)
	}
}

func TestHelpersFailTheTestWithTheSandboxReason(t *testing.T) {
	sb := sandboxtest.Start(t)
	tests := []struct {
		name string
		run  func(tb testing.TB)
		want string
	}{
		{"unknown client", func(tb testing.TB) { sb.Credentials(tb, "nobody") }, "known: sandbox-partner"},
		{"wrong secret", func(tb testing.TB) {
			sb.Token(tb, sandboxtest.Credentials{ClientID: "sandbox-partner", ClientSecret: "wrong", Scope: sb.DefaultCredentials.Scope})
		}, "AADSTS7000215"},
		{"invalid rule", func(tb testing.TB) {
			sb.AddRule(tb, sandboxtest.Rule{Endpoint: sandboxtest.EndpointAPI, Status: http.StatusTeapot})
		}, "418 cannot be forced"},
		{"unknown scenario", func(tb testing.TB) { sb.ApplyScenario(tb, "no-such-scenario", "") }, "known: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &fatalRecorder{TB: t}
			tc.run(rec)
			if !strings.Contains(rec.message, tc.want) {
				t.Errorf("failure message %q does not contain %q", rec.message, tc.want)
			}
		})
	}
}

func TestContextFormsReturnTheSandboxReason(t *testing.T) {
	sb := sandboxtest.Start(t)
	ctx := t.Context()
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"unknown client", func() error { _, err := sb.CredentialsContext(ctx, "nobody"); return err }, "known: sandbox-partner"},
		{"wrong secret", func() error {
			_, err := sb.TokenContext(ctx, sandboxtest.Credentials{ClientID: "sandbox-partner", ClientSecret: "wrong", Scope: sb.DefaultCredentials.Scope})
			return err
		}, "AADSTS7000215"},
		{"invalid rule", func() error {
			_, err := sb.AddRuleContext(ctx, sandboxtest.Rule{Endpoint: sandboxtest.EndpointAPI, Status: http.StatusTeapot})
			return err
		}, "418 cannot be forced"},
		{"unknown scenario", func() error { return sb.ApplyScenarioContext(ctx, "no-such-scenario", "") }, "known: "},
		{"unknown client's clock", func() error { return sb.AdvanceClientClockContext(ctx, "nobody", time.Hour) }, `no client \"nobody\" in this sandbox`},
		{"unknown client deleted", func() error { return sb.DeleteClientContext(ctx, "nobody") }, "404"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestRequestsContextAfterCloseIsAnError: a journal that cannot be read is
// an error, never an empty journal a test would take for "nothing sent".
func TestRequestsContextAfterCloseIsAnError(t *testing.T) {
	sb, err := sandboxtest.StartServer()
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, err := sb.RequestsContext(t.Context(), sandboxtest.JournalFilter{}); err == nil {
		t.Errorf("Requests of a closed sandbox: %v and no error", entries)
	}
}
