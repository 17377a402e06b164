package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHealthcheckFollowsServeFlags is `docker run IMAGE --tls`: serve is
// configured by flags that healthcheck's environment does not carry, and
// only the health file (SANDBOX_HEALTH_FILE, set in the image) tells the
// check to use HTTPS, the free port serve picked and the CA it wrote.
func TestHealthcheckFollowsServeFlags(t *testing.T) {
	bin, dir := binary(t), t.TempDir()
	healthPath := filepath.Join(dir, "health.json")
	tlsDir := filepath.Join(dir, "tls")
	environ := []string{"SANDBOX_HEALTH_FILE=" + healthPath}
	s := startServer(t, dir, environ, "--tls", "--tls-dir", tlsDir, "--addr", "127.0.0.1:0")
	s.lineContaining(t, "referrals-sandbox ready")

	if code, out := exitCode(t, bin, dir, environ, "healthcheck"); code != 0 {
		t.Fatalf("healthcheck with the health file: exit %d, %q", code, out)
	}
	hf, found, err := readHealthFile(healthPath)
	if err != nil || !found {
		t.Fatalf("health file: found %v, %v", found, err)
	}
	if !strings.HasPrefix(hf.URL, "https://127.0.0.1:") || hf.CA != filepath.Join(tlsDir, "ca.pem") || hf.SkipVerify {
		t.Errorf("health file %+v, want the HTTPS loopback URL and %s", hf, filepath.Join(tlsDir, "ca.pem"))
	}
	// Without the file, the environment alone points at serve's default
	// plain-HTTP address: the check cannot find this server.
	if code, _ := exitCode(t, bin, dir, nil, "healthcheck", "--url", strings.Replace(hf.URL, "https:", "http:", 1)); code != 1 {
		t.Errorf("plain HTTP to the TLS port passed the health check")
	}

	if code, rest := s.stop(t); code != 0 {
		t.Errorf("exit %d after SIGTERM; stderr tail %q", code, rest)
	}
	if _, err := os.Stat(healthPath); !os.IsNotExist(err) {
		t.Errorf("the health file outlived serve: %v", err)
	}
}

func TestHealthFileProblems(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name     string
		path     string
		wantCode int
		wantErr  string
	}{
		{"not JSON", write("garbage.json", "hello"), 2, "is not serve's"},
		{"no URL", write("empty.json", "{}"), 2, "names no URL"},
		{"unknown field", write("other.json", `{"url":"http://127.0.0.1:1","port":1}`), 2, "is not serve's"},
		// Serve has not written it yet: the environment decides, and
		// nothing listens on the address given there.
		{"missing", filepath.Join(dir, "absent.json"), 1, "unhealthy"},
		{"stale", write("stale.json", `{"url":"http://127.0.0.1:`+closedPort(t)+`"}`), 1, "unhealthy"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			environ := map[string]string{"SANDBOX_HEALTH_FILE": tc.path, "SANDBOX_ADDR": "127.0.0.1:" + closedPort(t)}
			res := runCLI(t, environ, "healthcheck", "-v") // -v: say why
			if res.code != tc.wantCode || !strings.Contains(res.stderr, tc.wantErr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", res.code, res.stderr, tc.wantCode, tc.wantErr)
			}
		})
	}
}
