package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// TestMetricsListener: --metrics-addr serves the metrics at /metrics with no
// token while the admin API's copy stays behind --admin-token, and the
// build info carries the stamped version.
func TestMetricsListener(t *testing.T) {
	addr, metricsAddr := "127.0.0.1:"+closedPort(t), "127.0.0.1:"+closedPort(t)
	s := startServer(t, t.TempDir(), []string{"SANDBOX_LOG_FORMAT=json", "SANDBOX_ADMIN_TOKEN=metrics-admin-token"},
		"--addr", addr, "--metrics-addr", metricsAddr)
	var listening struct {
		URL string `json:"metrics_url"`
	}
	if err := json.Unmarshal([]byte(s.lineContaining(t, `"msg":"metrics listening"`)), &listening); err != nil {
		t.Fatal(err)
	}
	if listening.URL != "http://"+metricsAddr+"/metrics" {
		t.Errorf("metrics_url %q, want http://%s/metrics", listening.URL, metricsAddr)
	}
	s.lineContaining(t, `"msg":"referrals-sandbox ready"`)

	status, body := httpGet(t, listening.URL)
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", listening.URL, status, body)
	}
	want := `referrals_sandbox_build_info{commit="` + testCommit + `",goversion=`
	if !strings.Contains(body, want) || !strings.Contains(body, `version="`+testVersion+`"`) {
		t.Errorf("the metrics have no build info %s... version=%q:\n%s", want, testVersion, body)
	}
	if status, _ := httpGet(t, "http://"+addr+sandbox.MetricsPath); status != http.StatusUnauthorized {
		t.Errorf("GET %s on the main address without the admin token: %d, want 401", sandbox.MetricsPath, status)
	}
	if status, _ := httpGet(t, "http://"+metricsAddr+"/__sandbox/reset"); status != http.StatusNotFound {
		t.Errorf("the metrics listener serves the admin API: %d, want 404", status)
	}
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(data)
}
