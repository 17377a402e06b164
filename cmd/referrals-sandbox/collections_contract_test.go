package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/collections"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi"
)

// TestCollectionsFromTheServedContract: collections --url builds from the
// document the sandbox at --url serves: under --contract, the contract's
// operations (paths written under its servers URL included), each
// submission with an example its request schema accepts.
func TestCollectionsFromTheServedContract(t *testing.T) {
	url := startSandbox(t, sandbox.Config{ContractFile: filepath.Join(contractsDir, "birthdate.yaml")})
	dir := t.TempDir()
	if res := runCLI(t, nil, "collections", dir, "--url", url); res.code != 0 {
		t.Fatalf("collections: exit %d, %s", res.code, res.stderr)
	}
	data, err := os.ReadFile(filepath.Join(dir, collections.PostmanFile))
	if err != nil {
		t.Fatal(err)
	}
	// birthdate.yaml's submission has patient.birthDate, which the
	// built-in document has not.
	for _, want := range []string{`birthDate`, `{{base_url}}/referrals/`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the Postman collection lacks %q: built from the embedded document, not the served contract", want)
		}
	}
	// A sandbox without a contract: the built-in document, as without --url.
	builtin := startSandbox(t, sandbox.Config{})
	fetched := t.TempDir()
	if res := runCLI(t, nil, "collections", fetched, "--url", builtin); res.code != 0 {
		t.Fatalf("collections of a sandbox without a contract: exit %d, %s", res.code, res.stderr)
	}
	want, err := collections.Generate(openapi.Document(), collections.Vars{
		AuthURL: builtin + "/" + idp.DefaultTenant, BaseURL: builtin + "/api/v1", RootURL: builtin,
		ClientID: defaultClientID, ClientSecret: defaultClientSecret, Scope: defaultScope,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(fetched, collections.PostmanFile)); err != nil || !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want.Postman)) {
		t.Errorf("collections of a sandbox without a contract differ from the built-in document's (%v)", err)
	}
	// No sandbox at --url: an error, not the embedded document's collections.
	if res := runCLI(t, nil, "collections", t.TempDir(), "--url", "http://127.0.0.1:"+closedPort(t)); res.code == 0 || !strings.Contains(res.stderr, "fetch the document the sandbox serves") {
		t.Errorf("no sandbox at --url: exit %d, stderr %s", res.code, res.stderr)
	}
}
