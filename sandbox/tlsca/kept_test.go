package tlsca_test

import (
	"bytes"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/tlsca"
)

// verifies checks that the kept CA signed a server certificate for host.
func verifies(t *testing.T, k *tlsca.Kept, host string, now time.Time) {
	t.Helper()
	leaf, err := x509.ParseCertificate(k.Server.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	pem, err := os.ReadFile(k.CAPath)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: pool, CurrentTime: now}); err != nil {
		t.Errorf("server certificate for %s does not verify with %s: %v", host, k.CAPath, err)
	}
}

// TestKeptCAIsReused: the first start makes the CA, later starts reuse it
// (so it is trusted once), each with a new server certificate it signs;
// the key is readable by this user alone.
func TestKeptCAIsReused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "referrals-sandbox")
	now := time.Now()
	first, err := tlsca.LoadOrCreate(dir, []string{"sandbox.test"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if !first.Created || first.CAPath != filepath.Join(dir, tlsca.CAFile) {
		t.Errorf("first start: created %v, CA %s", first.Created, first.CAPath)
	}
	verifies(t, first, "sandbox.test", now)
	later := now.Add(40 * 24 * time.Hour) // past a server certificate's life
	second, err := tlsca.LoadOrCreate(dir, nil, later)
	if err != nil {
		t.Fatal(err)
	}
	if second.Created || !bytes.Equal(first.CertPEM, second.CertPEM) {
		t.Error("a second start made a new CA; clients would have to trust it again")
	}
	verifies(t, second, "localhost", later)
	fi, err := os.Stat(filepath.Join(dir, tlsca.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("CA key mode %04o, want 0600", fi.Mode().Perm())
	}
	if key, _ := os.ReadFile(filepath.Join(dir, tlsca.CAFile)); bytes.Contains(key, []byte("PRIVATE KEY")) {
		t.Error("ca.pem, which clients are given, holds the private key")
	}
}

// TestKeptCAOneForConcurrentStarts: sandboxes starting at once (a CI job's
// parallel tests) agree on one CA.
func TestKeptCAOneForConcurrentStarts(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	certs := make([][]byte, 8)
	errs := make([]error, len(certs))
	for i := range certs {
		wg.Go(func() {
			k, err := tlsca.LoadOrCreate(dir, nil, time.Now())
			if errs[i] = err; err == nil {
				certs[i] = k.CertPEM
			}
		})
	}
	wg.Wait()
	for i := range certs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if !bytes.Equal(certs[i], certs[0]) {
			t.Fatal("concurrent starts made different CAs")
		}
	}
	if onDisk, _ := os.ReadFile(filepath.Join(dir, tlsca.CAFile)); !bytes.Equal(onDisk, certs[0]) {
		t.Error("ca.pem is not the CA the sandboxes serve")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("directory holds %d files, want ca.pem and ca-key.pem: %v", len(entries), entries)
	}
}

// TestKeptCARefusals: a key others can read, a damaged key and an expired
// CA are refused with what to do.
func TestKeptCARefusals(t *testing.T) {
	now := time.Now()
	keep := func(t *testing.T) string {
		dir := t.TempDir()
		if _, err := tlsca.LoadOrCreate(dir, nil, now); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	t.Run("readable key", func(t *testing.T) {
		dir := keep(t)
		if err := os.Chmod(filepath.Join(dir, tlsca.KeyFile), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := tlsca.LoadOrCreate(dir, nil, now); err == nil || !strings.Contains(err.Error(), "chmod 600") {
			t.Errorf("group-readable key: %v", err)
		}
	})
	t.Run("damaged key", func(t *testing.T) {
		dir := keep(t)
		if err := os.WriteFile(filepath.Join(dir, tlsca.KeyFile), []byte("not a key"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := tlsca.LoadOrCreate(dir, nil, now); err == nil || !strings.Contains(err.Error(), "remove it") {
			t.Errorf("damaged key: %v", err)
		}
	})
	t.Run("expired", func(t *testing.T) {
		dir := keep(t)
		if _, err := tlsca.LoadOrCreate(dir, nil, now.Add(11*365*24*time.Hour)); err == nil || !strings.Contains(err.Error(), "expired") {
			t.Errorf("expired CA: %v", err)
		}
	})
	t.Run("directory others can write", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Chmod(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		if _, err := tlsca.LoadOrCreate(dir, nil, now); err == nil {
			t.Error("a world-writable CA directory was accepted")
		}
	})
}
