package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var contractsDir = filepath.Join("..", "..", "sandbox", "testdata", "contracts")

// TestContractCheck prints what a contract takes over and the members the
// sandbox fills, and refuses a document naming the construct by pointer.
func TestContractCheck(t *testing.T) {
	res := runCLI(t, nil, "contract", "check", filepath.Join(contractsDir, "birthdate.yaml"))
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	for _, want := range []string{
		"createReferral   POST /referrals/: taken over",
		"createQualified  not described: built-in shapes",
		"receivedAt <- submittedAt (x-sandbox)",
		"next <- nextCursor (x-sandbox)",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, res.stdout)
		}
	}
	res = runCLI(t, nil, "contract", "check", filepath.Join("..", "..", "sandbox", "openapi", "openapi.json"))
	if res.code != 0 || strings.Contains(res.stdout, "taken over") {
		t.Errorf("the built-in document: exit %d, output %s; want every operation kept built-in", res.code, res.stdout)
	}
}

// TestContractCheck31: contract check takes an OpenAPI 3.1 document as it
// takes its 3.0 twin, saying it was translated, and refuses a 3.1
// construct with no 3.0 form by its JSON Pointer, as serve does.
func TestContractCheck31(t *testing.T) {
	v30 := runCLI(t, nil, "contract", "check", filepath.Join(contractsDir, "birthdate.yaml"))
	v31 := runCLI(t, nil, "contract", "check", filepath.Join(contractsDir, "birthdate31.yaml"))
	if v31.code != 0 {
		t.Fatalf("exit %d: %s", v31.code, v31.stderr)
	}
	if !strings.Contains(v31.stdout, "OpenAPI 3.1: checked, shaped and served as its OpenAPI 3.0 translation") {
		t.Errorf("output does not say the document was translated:\n%s", v31.stdout)
	}
	_, ops30, _ := strings.Cut(v30.stdout, "\noperations:")
	_, ops31, _ := strings.Cut(v31.stdout, "\noperations:")
	if ops30 == "" || ops31 != ops30 {
		t.Errorf("operations and members differ from the 3.0 twin's:\n3.0:%s\n3.1:%s", ops30, ops31)
	}

	bad := refusedContract(t, "3.1.0", "codes: {type: array, prefixItems: [{type: string}]}")
	wantRefused(t, bad, "/components/schemas/R/properties/codes/prefixItems", nil, "--contract", bad)
}

// TestContractRefusedAtStart: a contract with a construct the sandbox does
// not support stops serve (given by SANDBOX_CONTRACT) and contract check
// alike, naming the construct.
func TestContractRefusedAtStart(t *testing.T) {
	bad := refusedContract(t, "3.0.3", "sex: {anyOf: [{type: string}, {type: integer}]}")
	wantRefused(t, bad, "/components/schemas/R/properties/sex/anyOf", map[string]string{"SANDBOX_CONTRACT": bad})
}

// refusedContract writes a contract of the given OpenAPI version whose
// referral schema R holds member, a property the sandbox cannot take, and
// returns its path.
func refusedContract(t *testing.T, version, member string) string {
	t.Helper()
	doc := `openapi: ` + version + `
info: {title: t, version: "1"}
paths:
  /api/v1/referrals/:
    post:
      requestBody: {content: {application/json: {schema: {$ref: '#/components/schemas/R'}}}}
      responses: {"201": {description: ok}}
components:
  schemas:
    R:
      type: object
      properties:
        trialId: {type: string}
        ` + member + `
`
	path := filepath.Join(t.TempDir(), "refused.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// wantRefused checks that contract check and serve (given the contract by
// environ or serveArgs) both refuse the contract at path with exit 1,
// naming pointer.
func wantRefused(t *testing.T, path, pointer string, environ map[string]string, serveArgs ...string) {
	t.Helper()
	if res := runCLI(t, nil, "contract", "check", path); res.code != 1 || !strings.Contains(res.stderr, pointer) {
		t.Errorf("contract check: exit %d, stderr %q; want 1 naming %s", res.code, res.stderr, pointer)
	}
	res := runCLI(t, environ, append([]string{"serve", "--addr", "127.0.0.1:0"}, serveArgs...)...)
	if res.code != 1 || !strings.Contains(res.stderr, pointer) {
		t.Errorf("serve: exit %d, stderr %q; want 1 naming %s", res.code, res.stderr, pointer)
	}
}

// TestFixturesGenerateWithContract: submissions drawn from a contract, the
// same bytes for the same seed.
func TestFixturesGenerateWithContract(t *testing.T) {
	args := []string{"--contract", filepath.Join(contractsDir, "strict.json"), "--seed", "7", "--referrals", "2", "--qualified", "3"}
	first, second := generate(t, nil, args...), generate(t, nil, args...)
	a, b := readDir(t, first), readDir(t, second)
	for name, data := range a {
		if string(data) != string(b[name]) {
			t.Errorf("%s differs between two runs with the same seed", name)
		}
	}
	q := string(a["qualified-referrals.json"])
	if strings.Count(q, `"submission"`) != 3 || !strings.Contains(q, `"consent"`) || strings.Contains(q, `"patient"`) {
		t.Errorf("qualified-referrals.json does not carry the contract's submissions:\n%s", q)
	}
	if r := string(a["referrals.json"]); strings.Contains(r, `"submission"`) || !strings.Contains(r, `"patient"`) {
		t.Errorf("referrals.json: the contract does not take trial referrals over, so they keep the built-in shape:\n%s", r)
	}
	// The contract's OpenAPI 3.1 twin states the same constraints: the
	// same seed draws the same records.
	args[1] = filepath.Join(contractsDir, "strict31.json")
	twin := readDir(t, generate(t, nil, args...))
	if len(twin) != len(a) {
		t.Errorf("strict31.json drew %d files, strict.json %d", len(twin), len(a))
	}
	for name, data := range twin {
		if string(data) != string(a[name]) {
			t.Errorf("%s drawn from strict31.json differs from strict.json's:\n%s\n%s", name, data, a[name])
		}
	}
}
