package sandbox_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/tlsca"
)

// serveOn serves in on a new loopback port as serve does (the sniffing
// listener whenever the instance has TLS) and returns host:port.
func serveOn(t *testing.T, in *sandbox.Instance) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := sandbox.NewHTTPServer(in.Server, nil)
	served := ln
	if in.TLS != nil {
		served = sandbox.NewTLSListener(ln, in.TLS, nil)
	}
	go func() { _ = srv.Serve(served) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// trusting is a client that trusts only the CA in pemBytes.
func trusting(pemBytes []byte) *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pemBytes)
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// TestDefaultPortAnswersHTTPAndHTTPS: with a CA directory and no --tls,
// one port answers both: plain HTTP as before, and HTTPS that MSAL
// accepts (a certificate from the kept CA, and an issuer in the discovery
// document on https). A second start reuses the CA, so trusting it once is
// enough. The CA certificate is served over plain HTTP.
func TestDefaultPortAnswersHTTPAndHTTPS(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "referrals-sandbox")
	in, err := sandbox.Open(sandbox.Config{CADir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if in.CAPath != filepath.Join(dir, tlsca.CAFile) || !in.CACreated {
		t.Fatalf("CA %s (created %v), want %s made by this start", in.CAPath, in.CACreated, filepath.Join(dir, tlsca.CAFile))
	}
	host := serveOn(t, in)

	// Plain HTTP: everything as without the CA, the CA certificate too.
	resp, err := http.Get("http://" + host + "/__sandbox/ca.pem")
	if err != nil {
		t.Fatal(err)
	}
	caPEM, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Contains(caPEM, []byte("BEGIN CERTIFICATE")) {
		t.Fatalf("GET /__sandbox/ca.pem over HTTP: %d %s", resp.StatusCode, caPEM)
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"sandbox-partner"},
		"client_secret": {"sandbox-partner-secret"}, "scope": {idp.DefaultResource + "/.default"}}
	if resp, err := http.PostForm("http://"+host+"/"+idp.DefaultTenant+"/oauth2/v2.0/token", form); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("token over plain HTTP: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	// HTTPS on the same port, trusting the CA fetched above.
	secure := trusting(caPEM)
	for _, h := range []string{host, strings.Replace(host, "127.0.0.1", "localhost", 1)} {
		resp, err := secure.Get("https://" + h + "/" + idp.DefaultTenant + "/v2.0/.well-known/openid-configuration")
		if err != nil {
			t.Fatalf("HTTPS on the default port (%s): %v", h, err)
		}
		var meta struct {
			Issuer        string `json:"issuer"`
			TokenEndpoint string `json:"token_endpoint"`
		}
		err = json.NewDecoder(resp.Body).Decode(&meta)
		resp.Body.Close()
		if err != nil || !strings.HasPrefix(meta.Issuer, "https://"+h+"/") || !strings.HasPrefix(meta.TokenEndpoint, "https://"+h+"/") {
			t.Errorf("discovery over HTTPS at %s: %v %+v, want https issuer and token endpoint on %s", h, err, meta, h)
		}
	}
	if resp, err := secure.PostForm("https://"+host+"/"+idp.DefaultTenant+"/oauth2/v2.0/token", form); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("token over HTTPS: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	// A second start (after this one stopped) keeps the CA.
	again, err := sandbox.Open(sandbox.Config{CADir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again.CACreated || !bytes.Equal(again.CACertPEM, caPEM) {
		t.Fatal("a second start made a new CA: clients would have to trust it again")
	}
	if resp, err := secure.Get("https://" + serveOn(t, again) + "/__sandbox/health"); err != nil {
		t.Fatalf("second start over HTTPS with the CA trusted once: %v", err)
	} else {
		resp.Body.Close()
	}
}

// TestTLSServesTheCAOverPlainHTTP: a --tls sandbox refuses plain HTTP,
// except for its CA certificate, which is public and which a client needs
// before it can speak HTTPS to it (no curl -k).
func TestTLSServesTheCAOverPlainHTTP(t *testing.T) {
	in, err := sandbox.Open(sandbox.Config{TLS: true})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	host := serveOn(t, in)
	resp, err := http.Get("http://" + host + "/__sandbox/ca.pem")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Equal(body, in.CACertPEM) {
		t.Fatalf("GET /__sandbox/ca.pem over plain HTTP on a --tls sandbox: %d %s, want 200 with the CA", resp.StatusCode, body)
	}
	// Everything else still says HTTPS only.
	resp, err = http.Get("http://" + host + "/__sandbox/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("plain HTTP health on a --tls sandbox: %d, want 400", resp.StatusCode)
	}
}
