package main

import (
	"encoding/pem"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/tlsca"
)

// TestReportOverTLSSaysHowToPassTheCA: against an HTTPS sandbox whose CA
// the machine does not trust, report fails with a message saying to pass
// --ca; with the CA, or told the wrong one, it says which.
func TestReportOverTLSSaysHowToPassTheCA(t *testing.T) {
	srv := serveReportSandbox(t, sandbox.Config{}, httptest.NewTLSServer)
	resp, err := srv.Client().Get(srv.URL + "/health/ping") // something to report on
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	code, _, stderr := runReportCLI(t, nil, "--url", srv.URL)
	if code != 1 || !strings.Contains(stderr, "--ca ./tls/ca.pem") || !strings.Contains(stderr, "certificate") {
		t.Errorf("without --ca: exit %d, stderr %q; want 1 and how to pass --ca", code, stderr)
	}

	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runReportCLI(t, nil, "--url", srv.URL, "--ca", caFile)
	if code != 0 || !strings.Contains(stdout, "(unidentified), program") {
		t.Errorf("with --ca: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	otherCA, err := tlsca.New(nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	wrong, err := otherCA.WriteCA(filepath.Join(dir, "other"))
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runReportCLI(t, nil, "--url", srv.URL, "--ca", wrong)
	if code != 1 || !strings.Contains(stderr, "did not sign the sandbox's certificate") {
		t.Errorf("with another CA: exit %d, stderr %q", code, stderr)
	}
}
