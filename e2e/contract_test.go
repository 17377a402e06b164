package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestContractWithTheBinary runs the built binary with --contract on one of
// the test contracts: a token, a submission the contract accepts, one it
// refuses (422, fields by JSON Pointer), a read in the contract's shape,
// the served document, a restart on the same --data file that keeps the
// record as sent, and `contract check` on the file.
func TestContractWithTheBinary(t *testing.T) {
	contractFile, err := filepath.Abs(filepath.Join("..", "sandbox", "testdata", "contracts", "birthdate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dataFile := filepath.Join(t.TempDir(), "sandbox.db")
	args := []string{"--contract", contractFile, "--data", dataFile}
	sb := startSandbox(t, args...)
	client := newClient(2)
	token := mustToken(t, client, sb.base, partners[0].id, partners[0].secret)
	call := func(base, method, path, token, body string) answer {
		t.Helper()
		contentType := ""
		if body != "" {
			contentType = "application/json"
		}
		a, err := do(t.Context(), client, method, base+path, token, contentType, []byte(body), nil)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}

	sent := `{"trialId":"NCT05550001","patient":{"name":"Ada","birthDate":"1990-02-03","sex":"X","mrn":"MRN-123456"},"priority":2}`
	created := call(sb.base, http.MethodPost, "/api/v1/referrals/", token, sent)
	location := created.header.Get("Location")
	if created.status != http.StatusCreated || location == "" {
		t.Fatalf("a valid submission: %d Location %q %s", created.status, location, created.body)
	}

	refused := call(sb.base, http.MethodPost, "/api/v1/referrals/", token, `{"trialId":"NCT05550001","patient":{"name":"Ada","birthDate":"1990-02-30","sex":"female"}}`)
	var problem struct {
		Type   string
		Errors []struct{ Field string }
	}
	if err := json.Unmarshal(refused.body, &problem); err != nil || refused.status != http.StatusUnprocessableEntity ||
		refused.header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("a refused submission: %d %s %s, want a 422 problem", refused.status, refused.header.Get("Content-Type"), refused.body)
	}
	var fields []string
	for _, e := range problem.Errors {
		fields = append(fields, e.Field)
	}
	slices.Sort(fields)
	if !slices.Equal(fields, []string{"/patient/birthDate", "/patient/sex"}) {
		t.Errorf("refused fields %v, want the JSON Pointers /patient/birthDate and /patient/sex", fields)
	}

	read := call(sb.base, http.MethodGet, location, token, "")
	var record map[string]any
	if err := json.Unmarshal(read.body, &record); err != nil || read.status != http.StatusOK {
		t.Fatalf("read %s: %d %s", location, read.status, read.body)
	}
	keys := make([]string, 0, len(record))
	for k := range record {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"outcomesId", "patient", "priority", "receivedAt", "status", "trialId"}; !slices.Equal(keys, want) {
		t.Errorf("the record's members %v, want the contract's %v", keys, want)
	}
	if patient, _ := json.Marshal(record["patient"]); string(patient) != `{"birthDate":"1990-02-03","mrn":"MRN-123456","name":"Ada","sex":"X"}` {
		t.Errorf("patient %s, want it as sent", patient)
	}

	var served struct {
		Servers    []struct{ URL string }
		Components struct {
			SecuritySchemes map[string]struct {
				Flows map[string]struct{ TokenURL string }
			}
		}
	}
	doc := call(sb.base, http.MethodGet, "/api/v1/openapi.json", "", "")
	if err := json.Unmarshal(doc.body, &served); err != nil || len(served.Servers) != 1 || served.Servers[0].URL != sb.base+"/api/v1" {
		t.Errorf("served document's servers %+v (%v), want %s/api/v1", served.Servers, err, sb.base)
	}
	for name, scheme := range served.Components.SecuritySchemes {
		for flow, f := range scheme.Flows {
			if !strings.HasPrefix(f.TokenURL, sb.base+"/") {
				t.Errorf("%s %s tokenUrl %q, want the sandbox's token endpoint", name, flow, f.TokenURL)
			}
		}
	}

	// A restart on the same data file keeps the record as sent.
	sb.signal(syscall.SIGTERM)
	if code := sb.waitExit(); code != 0 {
		t.Fatalf("exit status %d after SIGTERM\nstderr:\n%s", code, sb.stderr)
	}
	again := startSandbox(t, args...)
	token = mustToken(t, client, again.base, partners[0].id, partners[0].secret)
	if r := call(again.base, http.MethodGet, location, token, ""); r.status != http.StatusOK || !bytes.Equal(r.body, read.body) {
		t.Errorf("after the restart: %d %s, want %s", r.status, r.body, read.body)
	}
	var rows struct {
		Referrals []struct {
			Submission json.RawMessage `json:"submission"`
		} `json:"referrals"`
	}
	rowsAnswer := call(again.base, http.MethodGet, "/__sandbox/data/referrals?limit=1&clientId="+partners[0].id, "", "")
	if err := json.Unmarshal(rowsAnswer.body, &rows); err != nil || len(rows.Referrals) != 1 || string(rows.Referrals[0].Submission) != sent {
		t.Errorf("stored after the restart: %s (%v), want the submission as sent %s", rowsAnswer.body, err, sent)
	}

	t.Run("contract check", func(t *testing.T) {
		out, err := exec.CommandContext(t.Context(), sandboxBinary, "contract", "check", contractFile).CombinedOutput()
		if err != nil {
			t.Fatalf("contract check: %v\n%s", err, out)
		}
		for _, want := range []string{"a valid contract", "createReferral   POST /referrals/: taken over", "receivedAt <- submittedAt (x-sandbox)", "createQualified  not described: built-in shapes"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("contract check output lacks %q:\n%s", want, out)
			}
		}
		src, err := os.ReadFile(contractFile)
		if err != nil {
			t.Fatal(err)
		}
		bad := filepath.Join(t.TempDir(), "bad.yaml")
		broken := strings.Replace(string(src), "sex: {type: string, enum: [F, M, X, U]}", "sex: {anyOf: [{type: string}, {type: integer}]}", 1)
		if err := os.WriteFile(bad, []byte(broken), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err = exec.CommandContext(t.Context(), sandboxBinary, "contract", "check", bad).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "/components/schemas/Patient/properties/sex/anyOf") {
			t.Errorf("contract check on an anyOf: %v\n%s\nwant a failure naming /components/schemas/Patient/properties/sex/anyOf", err, out)
		}
	})
}
