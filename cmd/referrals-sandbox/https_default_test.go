package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
)

// TestRunCommandAnswersHTTPSWithTheKeptCA is the README's run command with
// a configuration directory: `trust` (here --no-system, in a home of the
// test's own) makes the CA first; serve then reuses it, answers HTTPS on
// the port a token client reaches by https://localhost, names the CA and
// each language's setting on stdout, and still answers plain HTTP.
func TestRunCommandAnswersHTTPSWithTheKeptCA(t *testing.T) {
	home := t.TempDir()
	environ := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "PATH=" + os.Getenv("PATH")}
	caFile := filepath.Join(home, "config", "referrals-sandbox", "ca.pem")

	trust := exec.Command(binary(t), "trust", "--no-system")
	trust.Env = environ // no JAVA_HOME: Java's store is left alone
	out, err := trust.CombinedOutput()
	if err != nil || !strings.Contains(string(out), caFile) {
		t.Fatalf("trust --no-system: %v\n%s", err, out)
	}
	trusted, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}

	s := startServer(t, t.TempDir(), append(environ, "SANDBOX_ADDR=127.0.0.1:0", "SANDBOX_LOG_FORMAT=json"))
	var ready struct {
		Addr         string `json:"addr"`
		AuthURL      string `json:"auth_url"`
		HTTPSAuthURL string `json:"https_auth_url"`
		CACert       string `json:"ca_cert"`
	}
	if err := json.Unmarshal([]byte(s.lineContaining(t, `"msg":"referrals-sandbox ready"`)), &ready); err != nil {
		t.Fatal(err)
	}
	if ready.CACert != caFile || ready.HTTPSAuthURL != "https://"+ready.Addr+"/"+idp.DefaultTenant || !strings.HasPrefix(ready.AuthURL, "http://") {
		t.Errorf("ready line: %+v, want ca_cert %s, https_auth_url on https and auth_url on http", ready, caFile)
	}
	_, port, _ := net.SplitHostPort(ready.Addr)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(trusted) // the CA trust made: kept, not replaced
	secure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"sandbox-partner"},
		"client_secret": {"sandbox-partner-secret"}, "scope": {idp.DefaultResource + "/.default"}}
	for _, base := range []string{"https://localhost:" + port, "http://" + ready.Addr} {
		resp, err := secure.PostForm(base+"/"+idp.DefaultTenant+"/oauth2/v2.0/token", form)
		if err != nil {
			t.Fatalf("token at %s: %v", base, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("token at %s: %d", base, resp.StatusCode)
		}
	}
	if code, _ := s.stop(t); code != 0 {
		t.Errorf("exit %d", code)
	}
	stdout := s.stdout.String()
	for _, want := range []string{
		"authority https://127.0.0.1:" + port + "/" + idp.DefaultTenant,
		"REQUESTS_CA_BUNDLE=" + caFile, "NODE_EXTRA_CA_CERTS=" + caFile, "SSL_CERT_FILE=" + caFile,
		"keytool -importcert", "Import-Certificate", "referrals-sandbox trust", "kept across starts",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
}

// TestRunCommandWithoutConfigDirServesPlainHTTP: where there is no
// configuration directory to keep the CA in (no HOME, as in some
// containers), serve says so and serves plain HTTP only instead of failing.
func TestRunCommandWithoutConfigDirServesPlainHTTP(t *testing.T) {
	s := startServer(t, t.TempDir(), []string{"SANDBOX_ADDR=127.0.0.1:0", "SANDBOX_LOG_FORMAT=json"})
	s.lineContaining(t, "serving plain HTTP only")
	s.lineContaining(t, `"msg":"referrals-sandbox ready"`)
	if code, _ := s.stop(t); code != 0 {
		t.Errorf("exit %d", code)
	}
	if strings.Contains(s.stdout.String(), "REQUESTS_CA_BUNDLE") {
		t.Errorf("stdout names a CA that does not exist:\n%s", s.stdout)
	}
}
