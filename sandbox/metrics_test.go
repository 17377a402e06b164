package sandbox_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/backend"
)

// scrape reads GET /__sandbox/metrics as Prometheus would.
func (s *testSandbox) scrape() map[string]*dto.MetricFamily {
	s.t.Helper()
	body := s.scrapeText()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		s.t.Fatalf("parse the scrape: %v\n%s", err, body)
	}
	return families
}

func (s *testSandbox) scrapeText() []byte {
	s.t.Helper()
	resp := s.do(request{path: sandbox.MetricsPath})
	if resp.Status != http.StatusOK {
		s.t.Fatalf("GET %s: %d %s", sandbox.MetricsPath, resp.Status, resp.Body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		s.t.Fatalf("GET %s: Content-Type %q, want the text format", sandbox.MetricsPath, ct)
	}
	return resp.Body
}

// sample is the value of the series of family name with exactly labels;
// found is false when there is none.
func sample(families map[string]*dto.MetricFamily, name string, labels map[string]string) (value float64, found bool) {
	f, ok := families[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) != len(labels) {
			continue
		}
		for _, l := range m.GetLabel() {
			if want, ok := labels[l.GetName()]; !ok || want != l.GetValue() {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// wantSample fails unless the series exists with value want.
func wantSample(t *testing.T, families map[string]*dto.MetricFamily, name string, labels map[string]string, want float64) {
	t.Helper()
	got, ok := sample(families, name, labels)
	if !ok {
		t.Errorf("no series %s%v", name, labels)
		return
	}
	if got != want {
		t.Errorf("%s%v = %v, want %v", name, labels, got, want)
	}
}

// seriesCount is how many series the scrape holds, histogram buckets
// included.
func seriesCount(families map[string]*dto.MetricFamily) int {
	n := 0
	for _, f := range families {
		for _, m := range f.GetMetric() {
			n++
			if h := m.GetHistogram(); h != nil {
				n += len(h.GetBucket()) + 2
			}
		}
	}
	return n
}

func TestMetricsCountWhatClientsDid(t *testing.T) {
	s := newSandbox(t)
	token := s.token(partner)
	if r := s.do(request{path: trialsPath, token: token}); r.Status != http.StatusOK {
		t.Fatalf("trials: %d %s", r.Status, r.Body)
	}
	// Two different raw paths, one operation.
	for _, id := range []string{"no-such-outcome-1", "no-such-outcome-2"} {
		if r := s.do(request{path: "/api/v1/referrals/TRIAL-1/" + id, token: token}); r.Status != http.StatusNotFound {
			t.Fatalf("unknown referral: %d %s", r.Status, r.Body)
		}
	}
	forced := s.do(request{path: trialsPath, token: token, headers: map[string]string{sandbox.ForceStatusHeader: "503"}})
	if forced.Status != http.StatusServiceUnavailable {
		t.Fatalf("forced 503: %d %s", forced.Status, forced.Body)
	}
	if r := s.tokenResponse(partner, "not-the-secret", apiScope); r.Status != http.StatusUnauthorized {
		t.Fatalf("wrong secret: %d %s", r.Status, r.Body)
	}
	if r := s.do(request{path: "/no/such/path", unknownRoute: true}); r.Status != http.StatusNotFound {
		t.Fatalf("unknown path: %d", r.Status)
	}
	// A request the admin guard refuses before routing still has its
	// route's operation.
	if r := s.do(request{path: "/__sandbox/requests", host: "rebound.example", plain: true}); r.Status != http.StatusForbidden {
		t.Fatalf("rebound host: %d", r.Status)
	}

	m := s.scrape()
	const requests = "referrals_sandbox_http_requests_total"
	wantSample(t, m, requests, map[string]string{"operation": trialsPath, "method": "GET", "status": "200", "client": partner}, 1)
	wantSample(t, m, requests, map[string]string{"operation": "/api/v1/referrals/{trial_id}/{outcomes_id}", "method": "GET", "status": "404", "client": partner}, 2)
	wantSample(t, m, requests, map[string]string{"operation": trialsPath, "method": "GET", "status": "503", "client": partner}, 1)
	wantSample(t, m, requests, map[string]string{"operation": "/{tenant}/oauth2/v2.0/token", "method": "POST", "status": "200", "client": partner}, 1)
	wantSample(t, m, requests, map[string]string{"operation": "/{tenant}/oauth2/v2.0/token", "method": "POST", "status": "401", "client": "other"}, 1)
	wantSample(t, m, requests, map[string]string{"operation": "unmatched", "method": "GET", "status": "404", "client": "other"}, 1)
	wantSample(t, m, requests, map[string]string{"operation": "/__sandbox/requests", "method": "GET", "status": "403", "client": "other"}, 1)
	wantSample(t, m, "referrals_sandbox_http_request_duration_seconds", map[string]string{"operation": trialsPath}, 2)
	wantSample(t, m, "referrals_sandbox_forced_answers_total", map[string]string{"rule": sandbox.ForceStatusHeader, "scenario": ""}, 1)
	wantSample(t, m, "referrals_sandbox_tokens_issued_total", map[string]string{"client": partner}, 1)
	wantSample(t, m, "referrals_sandbox_tokens_refused_total", map[string]string{"error": "invalid_client"}, 1)
	// Journaled: the token requests, the API calls and the unknown path.
	wantSample(t, m, "referrals_sandbox_journal_entries", map[string]string{}, 7)
	if b, _ := sample(m, "referrals_sandbox_journal_bytes", map[string]string{}); b <= 0 {
		t.Errorf("journal bytes %v, want some", b)
	}
	if f := m["referrals_sandbox_build_info"]; f == nil || len(f.GetMetric()) != 1 {
		t.Errorf("no build info series")
	}
	for name, f := range m {
		for _, metric := range f.GetMetric() {
			for _, l := range metric.GetLabel() {
				if strings.Contains(l.GetValue(), "no-such-outcome") {
					t.Errorf("%s has a raw path in label %s=%q", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
}

func TestMetricsCountNamedScenariosAndRateLimits(t *testing.T) {
	s := newSandbox(t, func(c *sandboxConfig) { c.RateLimit, c.RateBurst = 0.001, 1 })
	token := s.token(partner)
	s.do(request{path: trialsPath, token: token, headers: map[string]string{sandbox.ScenarioHeader: "permissions-revoked"}})
	s.do(request{path: trialsPath, token: token})
	if r := s.do(request{path: trialsPath, token: token}); r.Status != http.StatusTooManyRequests {
		t.Fatalf("second unforced call with a burst of 1: %d %s", r.Status, r.Body)
	}
	m := s.scrape()
	wantSample(t, m, "referrals_sandbox_rate_limited_total", map[string]string{"client": partner}, 1)
	f := m["referrals_sandbox_forced_answers_total"]
	if f == nil || len(f.GetMetric()) != 1 {
		t.Fatalf("forced answers: %v, want one series", f)
	}
	var scenario string
	for _, l := range f.GetMetric()[0].GetLabel() {
		if l.GetName() == "scenario" {
			scenario = l.GetValue()
		}
	}
	if scenario != "permissions-revoked" {
		t.Errorf("forced answer's scenario label %q, want permissions-revoked", scenario)
	}
}

// Forged client ids, in token requests and in tokens the sandbox did not
// sign, must not add a series each: a caller could otherwise grow the
// sandbox's memory and every scraper's without bound.
func TestMetricsForgedClientIDsAddNoSeries(t *testing.T) {
	s := newSandbox(t)
	forge := func(i int) {
		id := fmt.Sprintf("forged-client-%d", i)
		s.do(request{method: http.MethodPost, path: tokenPath, plain: true,
			body: tokenForm(id, "secret", apiScope).Encode(), headers: map[string]string{"Content-Type": formType}})
		// A JWT-shaped token naming the id, signed by nobody.
		forgedToken := "eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, `{"azp":%q,"appid":%q}`, id, id)) + ".c2ln"
		s.do(request{path: "/api/v1/referrals/TRIAL-1/" + id, token: forgedToken, plain: true})
	}
	forge(0)
	s.scrape() // a scrape is a request too: its own series exist from the second on
	before := s.scrape()
	for i := 1; i <= 200; i++ {
		forge(i)
	}
	text := s.scrapeText()
	after := s.scrape()
	if got, want := seriesCount(after), seriesCount(before); got != want {
		t.Errorf("after 200 forged client ids the scrape has %d series, before %d:\n%s", got, want, text)
	}
	if bytes.Contains(text, []byte("forged-client-")) {
		t.Errorf("a forged client id is in the metrics:\n%s", text)
	}
	wantSample(t, after, "referrals_sandbox_tokens_refused_total", map[string]string{"error": "invalid_client"}, 201)
}

func TestMetricsAreGuardedLikeTheAdminAPI(t *testing.T) {
	const adminToken = "metrics-test-admin-token"
	s := newSandbox(t, func(c *sandboxConfig) { c.AdminToken = adminToken })
	if r := s.do(request{path: sandbox.MetricsPath, invalid: true}); r.Status != http.StatusUnauthorized {
		t.Errorf("without the admin token: %d, want 401", r.Status)
	}
	if r := s.do(request{path: sandbox.MetricsPath, token: adminToken}); r.Status != http.StatusOK {
		t.Errorf("with the admin token: %d %s, want 200", r.Status, r.Body)
	}
	cross := s.do(request{path: sandbox.MetricsPath, token: adminToken, plain: true, headers: map[string]string{"Sec-Fetch-Site": "cross-site"}})
	if cross.Status != http.StatusForbidden {
		t.Errorf("from another site's page: %d, want 403", cross.Status)
	}
}

// promtool, Prometheus's own checker, accepts a real scrape: names, types,
// help texts and units as Prometheus expects them.
func TestMetricsPassPromtool(t *testing.T) {
	promtool := testutil.Tool(t, "promtool", "PROMTOOL_REQUIRED", "apt-get install prometheus")
	s := newSandbox(t)
	token := s.token(partner)
	s.do(request{path: trialsPath, token: token})
	s.tokenResponse(partner, "wrong", apiScope)
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(s.scrapeText())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

// In shared mode every Redis round trip is counted and timed; with Redis
// gone the scrape still answers, counts the errors, and leaves out the
// journal's size rather than reporting a false zero.
func TestMetricsCountRedisRoundTrips(t *testing.T) {
	redisSrv := redistest.Start(t)
	s := openSandbox(t, sandbox.Config{Redis: backend.RedisConfig{URL: redisSrv.URL, Timeout: 2 * time.Second}})
	token := s.token(partner)
	if r := s.do(request{path: trialsPath, token: token}); r.Status != http.StatusOK {
		t.Fatalf("trials: %d %s", r.Status, r.Body)
	}
	m := s.scrape()
	if f := m["referrals_sandbox_redis_round_trips_total"]; f == nil || len(f.GetMetric()) == 0 {
		t.Fatal("no Redis round trips counted in shared mode")
	}
	if _, ok := sample(m, "referrals_sandbox_journal_entries", map[string]string{}); !ok {
		t.Error("no journal size with Redis up")
	}
	if f := m["referrals_sandbox_redis_errors_total"]; f != nil {
		t.Errorf("Redis errors with Redis up: %v", f)
	}

	redisSrv.Stop(t)
	s.do(request{path: trialsPath, token: token}) // a 503, and a failed round trip
	m = s.scrape()
	if _, ok := sample(m, "referrals_sandbox_journal_entries", map[string]string{}); ok {
		t.Error("a journal size with Redis down")
	}
	if f := m["referrals_sandbox_redis_errors_total"]; f == nil || len(f.GetMetric()) == 0 {
		t.Error("no Redis errors counted with Redis down")
	}
}
