package tlsca_test

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/tlsca"
)

// TestAuthority_ClientTrustsServer serves HTTPS with the issued certificate
// and connects with a client that trusts only the written ca.pem, by each
// default name and an extra one.
func TestAuthority_ClientTrustsServer(t *testing.T) {
	ca, err := tlsca.New([]string{"sandbox", "login.microsoftonline.com"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Server}}
	srv.StartTLS()
	defer srv.Close()

	path, err := ca.WriteCA(filepath.Join(t.TempDir(), "tls"))
	if err != nil {
		t.Fatal(err)
	}
	pemBytes, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		t.Fatal("ca.pem holds no certificate")
	}
	for _, name := range []string{"localhost", "127.0.0.1", "sandbox", "login.microsoftonline.com"} {
		t.Run(name, func(t *testing.T) {
			client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: name}}}
			resp, err := client.Get(srv.URL)
			if err != nil {
				t.Fatalf("GET with ServerName %s: %v", name, err)
			}
			resp.Body.Close()
		})
	}
	t.Run("name not in the certificate", func(t *testing.T) {
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "example.org"}}}
		if resp, err := client.Get(srv.URL); err == nil {
			resp.Body.Close()
			t.Fatal("a name outside the certificate was accepted")
		}
	})
	t.Run("untrusting client", func(t *testing.T) {
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: x509.NewCertPool()}}}
		if resp, err := client.Get(srv.URL); err == nil {
			resp.Body.Close()
			t.Fatal("a client without the CA trusted the server")
		}
	})
}
