package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBinaryTLSInstancesKeepTheirOwnCA runs two --tls sandboxes at once
// with the default TLS directory, as two CI jobs on one machine would. Each
// writes its CA into a new 0700 directory named in its ready line, each
// CA verifies its own server and not the other, the default health check
// passes for both, /__sandbox/ca.pem serves the same certificate as the
// file, and both directories are gone after SIGTERM.
func TestBinaryTLSInstancesKeepTheirOwnCA(t *testing.T) {
	bin, dir, tmp := binary(t), t.TempDir(), t.TempDir()
	type instance struct {
		s       *server
		environ []string
		url, ca string
	}
	var instances []*instance
	for range 2 {
		port := closedPort(t)
		in := &instance{
			environ: []string{"SANDBOX_ADDR=127.0.0.1:" + port, "SANDBOX_TLS=true", "SANDBOX_LOG_FORMAT=json", "TMPDIR=" + tmp},
			url:     "https://127.0.0.1:" + port,
		}
		in.s = startServer(t, dir, in.environ)
		instances = append(instances, in)
	}
	for i, in := range instances {
		var ready struct {
			CACert string `json:"ca_cert"`
		}
		if err := json.Unmarshal([]byte(in.s.lineContaining(t, "referrals-sandbox ready")), &ready); err != nil {
			t.Fatal(err)
		}
		in.ca = ready.CACert
		if filepath.Dir(filepath.Dir(in.ca)) != tmp || filepath.Base(in.ca) != "ca.pem" {
			t.Errorf("instance %d: ca_cert %q, want ca.pem in a new directory under TMPDIR %s", i, in.ca, tmp)
		}
		if fi, err := os.Lstat(filepath.Dir(in.ca)); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("instance %d: TLS directory %v %v, want a 0700 directory", i, fi, err)
		}
		waitHealthy(t, bin, dir, in.environ, in.s.exited)
	}
	if instances[0].ca == instances[1].ca {
		t.Fatalf("both instances wrote their CA to %s", instances[0].ca)
	}
	for i, in := range instances {
		other := instances[1-i]
		if code, out := exitCode(t, bin, dir, nil, "healthcheck", "--url", in.url, "--ca", in.ca); code != 0 {
			t.Errorf("instance %d with its own CA: exit %d %q", i, code, out)
		}
		if code, out := exitCode(t, bin, dir, nil, "healthcheck", "--url", in.url, "--ca", other.ca); code != 1 {
			t.Errorf("instance %d with the other's CA: exit %d %q, want 1", i, code, out)
		}
		if served, written := fetchCA(t, in.url, in.ca); !bytes.Equal(served, written) {
			t.Errorf("instance %d serves a CA other than the one it wrote", i)
		}
	}
	for i, in := range instances {
		if code, rest := in.s.stop(t); code != 0 {
			t.Errorf("instance %d: exit %d after SIGTERM; stderr tail %q", i, code, rest)
		}
	}
	if entries, err := os.ReadDir(tmp); err != nil || len(entries) != 0 {
		t.Errorf("TLS directories left after exit: %v %v", entries, err)
	}
}

// fetchCA reads GET /__sandbox/ca.pem through a client that trusts only the
// CA file at caPath, and returns it with the file's content.
func fetchCA(t *testing.T, root, caPath string) (served, written []byte) {
	t.Helper()
	written, err := os.ReadFile(caPath)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(written) {
		t.Fatalf("%s holds no certificate", caPath)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := client.Get(root + "/__sandbox/ca.pem")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	served, err = io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /__sandbox/ca.pem: %d %v", resp.StatusCode, err)
	}
	return served, written
}

// TestServeRefusesATLSDirOthersControl: an explicit --tls-dir that is a
// symbolic link, or that group or others can write in, stops serve with
// exit status 1 and a message naming the flag, the directory and why.
func TestServeRefusesATLSDirOthersControl(t *testing.T) {
	base := t.TempDir()
	shared := filepath.Join(base, "shared")
	if err := os.Mkdir(shared, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o775); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(base, "planted")
	if err := os.Symlink(t.TempDir(), planted); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dir, want string }{
		{shared, "is writable by group or others (mode 0775)"},
		{planted, "is a symbolic link"},
	} {
		res := runCLI(t, map[string]string{"SANDBOX_ADDR": "127.0.0.1:0"}, "serve", "--tls", "--tls-dir", tc.dir)
		if res.code != 1 || !strings.Contains(res.stderr, "--tls-dir: TLS directory "+tc.dir+" "+tc.want) {
			t.Errorf("--tls-dir %s: exit %d, stderr %q; want 1 and %q", tc.dir, res.code, res.stderr, tc.want)
		}
	}
}
