package sandbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/contractdoc"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// withContract runs the sandbox with the contract in file (testdata/contracts).
func withContract(t *testing.T, file string) sandboxOption {
	c, err := contractdoc.LoadFile(filepath.Join("testdata", "contracts", file))
	if err != nil {
		t.Fatal(err)
	}
	return func(cfg *sandboxConfig) { cfg.Contract = c }
}

// members decodes a JSON object answer.
func members(t *testing.T, r *response) map[string]any {
	t.Helper()
	var m map[string]any
	r.decode(t, &m)
	return m
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestContract_BirthDate: a contract with other names (birthDate, sex,
// receivedAt), another enum, a pattern and a range, paths under a servers
// URL: submissions are checked by it, stored as sent, read back in its
// shape with the sandbox-owned members it declares, across a --data restart.
func TestContract_BirthDate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.db")
	firstStore, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s := newSandbox(t, withContract(t, "birthdate.yaml"), useStore(firstStore))
	token := s.token(partner)
	sent := `{"trialId":"NCT05550001","patient":{"name":"Ada","birthDate":"1990-02-03","sex":"X","mrn":"MRN-123456"},"priority":2}`

	created := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/", token: token, body: sent, plain: true})
	if created.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", created.Status, created.Body)
	}
	record := members(t, created)
	if got, want := keys(record), []string{"outcomesId", "patient", "priority", "receivedAt", "status", "trialId"}; !slices.Equal(got, want) {
		t.Errorf("record members %v, want %v (no clientId or submittedAt: the contract has none)", got, want)
	}
	// trialId is sandbox-owned: the canonical id of the trial the
	// submission named by its altTrialId.
	if record["status"] != "received" || record["trialId"] != "TRIAL-ONCO-002" {
		t.Errorf("status %v trialId %v, want received and TRIAL-ONCO-002", record["status"], record["trialId"])
	}
	if _, err := time.Parse(time.RFC3339, record["receivedAt"].(string)); err != nil {
		t.Errorf("receivedAt (x-sandbox: submittedAt) %v: %v", record["receivedAt"], err)
	}
	patient, _ := json.Marshal(record["patient"])
	if string(patient) != `{"birthDate":"1990-02-03","mrn":"MRN-123456","name":"Ada","sex":"X"}` {
		t.Errorf("patient %s, want it as sent", patient)
	}
	location := created.Header.Get("Location")
	if want := "/api/v1/referrals/TRIAL-ONCO-002/" + record["outcomesId"].(string); location != want {
		t.Errorf("Location %q, want %q", location, want)
	}
	read := s.do(request{path: location, token: token, plain: true})
	if read.Status != http.StatusOK || !bytes.Equal(read.Body, created.Body) {
		t.Errorf("read: %d %s, want the created record %s", read.Status, read.Body, created.Body)
	}
	stored, err := s.Store.GetReferral(context.Background(), partner, record["outcomesId"].(string))
	if err != nil || string(stored.Submission) != sent {
		t.Errorf("stored submission %s (%v), want it as sent: %s", stored.Submission, err, sent)
	}

	t.Run("a repeated member is refused by JSON Pointer, nothing stored", func(t *testing.T) {
		before, _, err := s.Store.ListReferrals(context.Background(), partner, store.Page{Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		r := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/", token: token, plain: true,
			body: `{"trialId":"NCT05550001","patient":{"name":"Ada","birthDate":"1990-02-03","sex":"X","sex":"F"}}`})
		p := wantProblem(t, r, http.StatusUnprocessableEntity, sandbox.ProblemTypeValidationFailed)
		if got := errorFields(p); !slices.Equal(got, []string{"/patient/sex"}) {
			t.Errorf("failing fields %v, want [/patient/sex]: %+v", got, p.Errors)
		}
		after, _, err := s.Store.ListReferrals(context.Background(), partner, store.Page{Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		if len(after) != len(before) {
			t.Errorf("%d referrals stored after the refusal, %d before", len(after), len(before))
		}
	})

	t.Run("refusals name each field by JSON Pointer", func(t *testing.T) {
		r := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/", token: token, plain: true,
			body: `{"trialId":"NO-SUCH-TRIAL","patient":{"birthDate":"1990-02-30","sex":"female","mrn":"123"},"priority":9}`})
		p := wantProblem(t, r, http.StatusUnprocessableEntity, sandbox.ProblemTypeValidationFailed)
		got := errorFields(p)
		slices.Sort(got)
		if want := []string{"/patient/birthDate", "/patient/mrn", "/patient/name", "/patient/sex", "/priority", "/trialId"}; !slices.Equal(got, want) {
			t.Errorf("failing fields %v, want %v: %+v", got, want, p.Errors)
		}
		// The built-in shape is no longer accepted.
		r = s.do(request{method: http.MethodPost, path: "/api/v1/referrals/", token: token, plain: true, body: referralBody("NCT05550001")})
		p = wantProblem(t, r, http.StatusUnprocessableEntity, sandbox.ProblemTypeValidationFailed)
		if !slices.Contains(errorFields(p), "/patient/birthDate") {
			t.Errorf("a built-in body: fields %v, want /patient/birthDate among them", errorFields(p))
		}
	})
	t.Run("listing in the contract's page shape", func(t *testing.T) {
		page := members(t, s.do(request{path: "/api/v1/referrals/?limit=1", token: token, plain: true}))
		if got := keys(page); !slices.Equal(got, []string{"items", "next"}) {
			t.Fatalf("page members %v, want items and next", got)
		}
		items := page["items"].([]any)
		if len(items) != 1 || items[0].(map[string]any)["outcomesId"] != record["outcomesId"] {
			t.Errorf("first item %v, want the newest record %v", items, record["outcomesId"])
		}
		if page["next"] == nil {
			t.Errorf("next is null, but the fixtures' referrals follow")
		}
	})
	t.Run("isolation", func(t *testing.T) {
		other := s.token(partner2)
		if r := s.do(request{path: location, token: other, plain: true}); r.Status != http.StatusNotFound {
			t.Errorf("another partner reads the record: %d %s", r.Status, r.Body)
		}
	})
	t.Run("the served document is the contract", func(t *testing.T) {
		r := s.do(request{path: "/api/v1/openapi.json", plain: true})
		var doc struct {
			Info    struct{ Title string }
			Servers []struct{ URL string }
		}
		r.decode(t, &doc)
		if doc.Info.Title != "Referrals (birthDate contract)" || len(doc.Servers) != 1 || doc.Servers[0].URL != s.URL+"/api/v1" {
			t.Errorf("served %+v, want the contract with servers %s/api/v1", doc, s.URL)
		}
	})

	if err := firstStore.Close(); err != nil {
		t.Fatal(err)
	}
	secondStore, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	second := newSandbox(t, withContract(t, "birthdate.yaml"), useStore(secondStore))
	r := second.do(request{path: location, token: second.token(partner), plain: true})
	if r.Status != http.StatusOK || !bytes.Equal(r.Body, created.Body) {
		t.Errorf("after a --data restart: %d %s, want %s", r.Status, r.Body, created.Body)
	}
}

// TestContract_StrictQualified: a contract with a required nested object,
// additionalProperties: false, oneOf, and renamed sandbox members (state,
// history): the audit trail still records reads, duplicates still conflict,
// and the trial-based operations it does not describe keep the built-in
// shapes.
func TestContract_StrictQualified(t *testing.T) {
	s := newSandbox(t, withContract(t, "strict.json"))
	token := s.token(partner)
	sent := `{"externalSourceId":"ext-1","consent":{"given":true,"recordedAt":"2025-01-02T03:04:05Z"},"subject":{"nhsNumber":"1234567890"}}`
	created := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/qualified", token: token, body: sent, plain: true})
	if created.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", created.Status, created.Body)
	}
	record := members(t, created)
	if got, want := keys(record), []string{"consent", "externalSourceId", "history", "state", "subject"}; !slices.Equal(got, want) {
		t.Errorf("record members %v, want %v", got, want)
	}
	if record["state"] != "received" || len(record["history"].([]any)) != 1 {
		t.Errorf("state %v history %v, want received and the submission entry", record["state"], record["history"])
	}
	read := members(t, s.do(request{path: "/api/v1/referrals/qualified/ext-1", token: token, plain: true}))
	if h := read["history"].([]any); len(h) != 2 || h[1].(map[string]any)["action"] != "viewed" {
		t.Errorf("history after a read %v, want submitted then viewed", h)
	}
	// The contract has no listing: the built-in page, of records in the
	// contract's shape.
	page := members(t, s.do(request{path: "/api/v1/referrals/qualified?limit=1", token: token, plain: true}))
	if items, _ := page["qualifiedReferrals"].([]any); len(items) != 1 || items[0].(map[string]any)["consent"] == nil {
		t.Errorf("listing %v, want the new record in the contract's shape", page)
	}
	if r := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/qualified", token: token, body: sent, plain: true}); r.Status != http.StatusConflict {
		t.Errorf("duplicate: %d %s, want 409", r.Status, r.Body)
	}

	tests := []struct {
		name, body string
		want       []string
	}{
		{"required nested object missing", `{"externalSourceId":"e2","subject":{"email":"a@example.com"}}`, []string{"/consent"}},
		{"nested member wrong", `{"externalSourceId":"e2","consent":{"given":false,"recordedAt":"yesterday","by":"x"},"subject":{"email":"a@example.com"}}`,
			[]string{"/consent/by", "/consent/given", "/consent/recordedAt"}},
		{"member not declared", `{"externalSourceId":"e2","consent":{"given":true,"recordedAt":"2025-01-02T03:04:05Z"},"subject":{"email":"a@example.com"},"notes":"x"}`, []string{"/notes"}},
		{"oneOf matches neither", `{"externalSourceId":"e2","consent":{"given":true,"recordedAt":"2025-01-02T03:04:05Z"},"subject":{"nhsNumber":"12"}}`, []string{"/subject"}},
		{"invalid UTF-8 and NUL", `{"externalSourceId":"e2","consent":{"given":true,"recordedAt":"2025-01-02T03:04:05Z"},"subject":{"email":"a@example.com"},"tags":["ok","\ud800x","a\u0000b"]}`,
			[]string{"/tags/1", "/tags/2"}},
		{"id unsafe in a path", `{"externalSourceId":"..","consent":{"given":true,"recordedAt":"2025-01-02T03:04:05Z"},"subject":{"email":"a@example.com"}}`, []string{"/externalSourceId"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/qualified", token: token, body: tc.body, plain: true})
			p := wantProblem(t, r, http.StatusUnprocessableEntity, sandbox.ProblemTypeValidationFailed)
			got := errorFields(p)
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("failing fields %v, want %v: %+v", got, tc.want, p.Errors)
			}
		})
	}
	t.Run("the undescribed operations keep the built-in shapes", func(t *testing.T) {
		ref, _ := s.createReferral(token, referralBody("NCT05550001")) // contract-checked against the built-in document
		if ref.Patient.Gender == "" || len(ref.Submission) != 0 {
			t.Errorf("built-in referral %+v", ref)
		}
	})
}

// TestContract_BuiltinDocumentAnswersAsDefault: the built-in document
// supplied with --contract gives byte-identical answers to the default run,
// request for request (once each run's own address, request ids and new
// record ids are set aside).
func TestContract_BuiltinDocumentAnswersAsDefault(t *testing.T) {
	builtin, err := contractdoc.Load(openapi.Document())
	if err != nil {
		t.Fatal(err)
	}
	plain := newSandbox(t)
	withDoc := newSandbox(t, func(cfg *sandboxConfig) { cfg.Contract = builtin })
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	plain.setClock(at)
	withDoc.setClock(at)
	bad := referralBody("NCT05550001")
	bad["patient"] = map[string]any{"firstName": "", "dateOfBirth": "2999-01-01", "gender": "F"}
	steps := []request{
		{method: http.MethodPost, path: "/api/v1/referrals/", body: referralBody("NCT05550001")},
		{method: http.MethodPost, path: "/api/v1/referrals/", body: bad, invalid: true},
		{method: http.MethodPost, path: "/api/v1/referrals/qualified", body: qualifiedBody("same-1")},
		{method: http.MethodPost, path: "/api/v1/referrals/qualified", body: qualifiedBody("same-1"), invalid: true},
		{path: "/api/v1/referrals/?limit=3"},
		{path: "/api/v1/referrals/qualified?limit=3"},
		{path: "/api/v1/referrals/qualified/same-1"},
		{path: "/api/v1/openapi.json"},
	}
	// The two runs' clocks were set alike but keep ticking.
	now := regexp.MustCompile(`2025-06-01T12:0[0-9]:[0-9]{2}\.[0-9]{6}Z`)
	normal := func(s *testSandbox, r *response, ids []string) string {
		body := strings.ReplaceAll(string(r.Body), s.URL, "BASE")
		body = now.ReplaceAllString(body, "NOW")
		for i, id := range ids {
			body = strings.ReplaceAll(body, id, "ID-"+string(rune('A'+i)))
		}
		return body
	}
	var plainIDs, docIDs []string
	for i, step := range steps {
		step.headers = map[string]string{"X-Request-Id": fmt.Sprintf("step-%d", i)}
		a, b := plain.do(withToken(plain, step)), withDoc.do(withToken(withDoc, step))
		if loc := a.Header.Get("Location"); loc != "" && strings.Count(loc, "/") == 5 {
			plainIDs = append(plainIDs, loc[strings.LastIndex(loc, "/")+1:])
			docIDs = append(docIDs, b.Header.Get("Location")[strings.LastIndex(b.Header.Get("Location"), "/")+1:])
		}
		if a.Status != b.Status || normal(plain, a, plainIDs) != normal(withDoc, b, docIDs) {
			t.Errorf("%s %s: default %d %s\nwith the built-in contract %d %s", step.method, step.path, a.Status, a.Body, b.Status, b.Body)
		}
	}
}

func withToken(s *testSandbox, r request) request {
	if r.path != "/api/v1/openapi.json" {
		r.token = s.token(partner)
	}
	return r
}

// TestContract_SharedModeAndAdmin: with a contract, two replicas on one
// Redis serve the same record as sent, and a status the admin API moves
// shows in the contract's shape, with the submission unchanged.
func TestContract_SharedModeAndAdmin(t *testing.T) {
	srv := redistest.Start(t)
	a := newSandbox(t, withContract(t, "birthdate.yaml"), useRedisStore(t, srv.Addr, "team:"))
	b := newSandbox(t, withContract(t, "birthdate.yaml"), useRedisStore(t, srv.Addr, "team:"))
	sent := `{"trialId":"TRIAL-ONCO-002","patient":{"name":"Bo","birthDate":"2001-12-31","sex":"U"}}`
	created := a.do(request{method: http.MethodPost, path: "/api/v1/referrals/", token: a.token(partner), body: sent, plain: true})
	if created.Status != http.StatusCreated {
		t.Fatalf("create through A: %d %s", created.Status, created.Body)
	}
	location := created.Header.Get("Location")
	tokenB := b.token(partner)
	if r := b.do(request{path: location, token: tokenB, plain: true}); r.Status != http.StatusOK || !bytes.Equal(r.Body, created.Body) {
		t.Fatalf("read through B: %d %s, want %s", r.Status, r.Body, created.Body)
	}

	// The admin API answers the stored record (the built-in identity
	// members and the submission as sent), as admin.json describes it.
	move := func(status string) *response {
		return a.do(request{method: http.MethodPost, path: "/__sandbox" + strings.TrimPrefix(location, "/api/v1") + "/status", body: map[string]string{"status": status}})
	}
	if r := move("reviewing"); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"submission":`+sent) {
		t.Fatalf("admin move: %d %s, want 200 with the submission as sent", r.Status, r.Body)
	}
	if r := move("received"); r.Status != http.StatusConflict {
		t.Errorf("a backward move: %d %s, want 409", r.Status, r.Body)
	}
	moved := members(t, b.do(request{path: location, token: tokenB, plain: true}))
	want := members(t, created)
	want["status"] = "reviewing"
	got, _ := json.Marshal(moved)
	wantJSON, _ := json.Marshal(want)
	if !bytes.Equal(got, wantJSON) {
		t.Errorf("after the move, B reads %s, want %s", got, wantJSON)
	}
}

// TestContract_GeneratedFixtures: fixtures generate --contract draws
// submissions the contract accepts; written and loaded back, they seed a
// sandbox running that contract, which answers them in its shape, and a
// sandbox without it refuses to start on them.
func TestContract_GeneratedFixtures(t *testing.T) {
	c, err := contractdoc.LoadFile(filepath.Join("testdata", "contracts", "birthdate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	base, err := fixtures.Default()
	if err != nil {
		t.Fatal(err)
	}
	opts := fixtures.DefaultGenerateOptions()
	opts.Submitter = c.Submitter()
	generated, err := fixtures.Generate(base, opts)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := fixtures.WriteDir(generated, dir); err != nil {
		t.Fatal(err)
	}
	set, err := fixtures.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ref := set.Referrals[0]
	if len(ref.Submission) == 0 || ref.Patient != (referrals.Patient{}) {
		t.Fatalf("generated referral %+v, want a submission and no built-in patient", ref)
	}
	var captured sandboxConfig
	useSet := func(cfg *sandboxConfig) { cfg.Fixtures = set; captured = *cfg }
	s := newSandbox(t, useSet, withContract(t, "birthdate.yaml"))
	r := s.do(request{path: "/api/v1/referrals/" + ref.TrialID + "/" + ref.OutcomesID, token: s.token(ref.ClientID), plain: true})
	record := members(t, r)
	patient, _ := record["patient"].(map[string]any)
	if r.Status != http.StatusOK || patient["birthDate"] == nil || patient["sex"] == nil || record["receivedAt"] == nil {
		t.Errorf("a generated fixture reads %d %s, want it in the contract's shape", r.Status, r.Body)
	}

	// The same configuration without the contract, over an empty store.
	st, err := store.Open(store.MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	captured.Store, captured.Contract = st, nil
	captured.Backend = openBackend(t, captured)
	if _, err := sandbox.Open(captured.Config); err == nil || !strings.Contains(err.Error(), "start the sandbox with that --contract") {
		t.Errorf("without the contract: %v, want a refusal naming --contract", err)
	}
}

// TestContract_NestedShapes: a contract whose record answers nested
// members other than those submitted: a read keeps only the nested members
// the response schema declares (objects inside objects, objects inside
// arrays), fills the sandbox members annotated in a nested object the
// submission never sent, and the submission is stored as sent; the request
// schema's required nested object and additionalProperties: false refuse
// by JSON Pointer.
func TestContract_NestedShapes(t *testing.T) {
	s := newSandbox(t, withContract(t, "nested.yaml"))
	token := s.token(partner)
	sent := `{"trialId":"NCT05550001","notes":"call after 5pm","patient":{"identity":{"name":"Ada","birthDate":"1990-02-03","sex":"female"},"contacts":[{"kind":"phone","value":"+44 20 7946 0000"},{"kind":"email","value":"ada@example.com"}]}}`
	created := s.do(request{method: http.MethodPost, path: "/api/v1/referrals", token: token, body: sent, plain: true})
	if created.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", created.Status, created.Body)
	}
	record := members(t, created)
	if got, want := keys(record), []string{"meta", "outcomesId", "patient", "trialId"}; !slices.Equal(got, want) {
		t.Errorf("record members %v, want %v (no notes: the read shape has none)", got, want)
	}
	patient, _ := json.Marshal(record["patient"])
	if want := `{"contacts":[{"kind":"phone"},{"kind":"email"}],"identity":{"birthDate":"1990-02-03","sex":"female"}}`; string(patient) != want {
		t.Errorf("patient %s, want the nested members the read shape declares: %s", patient, want)
	}
	meta, _ := record["meta"].(map[string]any)
	if meta["state"] != "received" {
		t.Errorf("meta %v, want state (x-sandbox: status) received", meta)
	}
	if _, err := time.Parse(time.RFC3339, fmt.Sprint(meta["receivedAt"])); err != nil {
		t.Errorf("meta.receivedAt (x-sandbox: submittedAt) %v: %v", meta["receivedAt"], err)
	}
	read := s.do(request{path: created.Header.Get("Location"), token: token, plain: true})
	if read.Status != http.StatusOK || !bytes.Equal(read.Body, created.Body) {
		t.Errorf("read: %d %s, want the created record %s", read.Status, read.Body, created.Body)
	}
	stored, err := s.Store.GetReferral(context.Background(), partner, record["outcomesId"].(string))
	if err != nil || string(stored.Submission) != sent {
		t.Errorf("stored submission %s (%v), want it as sent: %s", stored.Submission, err, sent)
	}

	t.Run("the served document is the contract with the sandbox's additions", func(t *testing.T) {
		var doc struct {
			Servers    []struct{ URL string }
			Paths      map[string]map[string]json.RawMessage
			Components struct {
				Responses       map[string]struct{ Description string }
				Schemas         map[string]struct{ Properties map[string]map[string]any }
				SecuritySchemes map[string]struct {
					Flows map[string]struct{ TokenURL string }
				}
			}
		}
		s.do(request{path: "/api/v1/openapi.json", plain: true}).decode(t, &doc)
		if len(doc.Servers) != 1 || doc.Servers[0].URL != s.URL {
			t.Errorf("servers %+v, want %s", doc.Servers, s.URL)
		}
		if got, want := doc.Components.SecuritySchemes["oauth"].Flows["clientCredentials"].TokenURL, s.URL+"/"+idp.DefaultTenant+"/oauth2/v2.0/token"; got != want {
			t.Errorf("the contract's tokenUrl %q, want the sandbox's %q", got, want)
		}
		var create struct {
			Responses  map[string]map[string]any
			Parameters []map[string]any
		}
		if err := json.Unmarshal(doc.Paths["/api/v1/referrals"]["post"], &create); err != nil {
			t.Fatal(err)
		}
		if ref := create.Responses["422"]["$ref"]; ref != any("#/components/responses/ContractValidationFailed") ||
			!strings.Contains(doc.Components.Responses["ContractValidationFailed"].Description, "JSON Pointer") {
			t.Errorf("the submission's 422 %q, want the contract refusal naming fields by JSON Pointer", ref)
		}
		for _, code := range []string{"400", "401", "403", "413", "415", "429", "503"} {
			if create.Responses[code]["$ref"] == nil {
				t.Errorf("no %s answer added to the submission: %v", code, create.Responses)
			}
		}
		if !slices.ContainsFunc(create.Parameters, func(p map[string]any) bool { return p["$ref"] == "#/components/parameters/SandboxForceStatus" }) {
			t.Errorf("parameters %v, want the sandbox's Sandbox-Force-Status", create.Parameters)
		}
		if got := doc.Components.Schemas["Referral"].Properties["outcomesId"][contractdoc.Annotation]; got != "outcomesId" {
			t.Errorf("Referral.outcomesId x-sandbox %v, want outcomesId: the sandbox fills it", got)
		}
		for path, method := range map[string]string{"/api/v1/referrals/qualified": "post", "/" + idp.DefaultTenant + "/oauth2/v2.0/token": "", "/{tenant}/oauth2/v2.0/token": "post", "/api/v1/referrals": "get"} {
			if method != "" && doc.Paths[path][method] == nil {
				t.Errorf("%s %s, which the sandbox answers in its built-in shape, is not in the served document", method, path)
			}
		}
	})

	tests := []struct {
		name, body string
		want       []string
	}{
		{"required nested object missing", `{"trialId":"NCT05550001","patient":{"contacts":[]}}`, []string{"/patient/identity"}},
		{"closed nested object", `{"trialId":"NCT05550001","patient":{"identity":{"name":"Ada","birthDate":"1990-02-03","sex":"female","nhs":"1"}}}`, []string{"/patient/identity/nhs"}},
		{"nested members wrong", `{"trialId":"NCT05550001","patient":{"identity":{"name":"","birthDate":"03/02/1990","sex":"F"},"contacts":[{"kind":"fax","value":"1"}]}}`,
			[]string{"/patient/contacts/0/kind", "/patient/contacts/0/value", "/patient/identity/birthDate", "/patient/identity/name", "/patient/identity/sex"}},
		{"the read shape's members are not submitted", `{"trialId":"NCT05550001","meta":{"state":"accepted"},"patient":{"identity":{"name":"Ada","birthDate":"1990-02-03","sex":"female"}}}`, []string{"/meta"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := s.do(request{method: http.MethodPost, path: "/api/v1/referrals", token: token, body: tc.body, plain: true})
			p := wantProblem(t, r, http.StatusUnprocessableEntity, sandbox.ProblemTypeValidationFailed)
			got := errorFields(p)
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("failing fields %v, want %v: %+v", got, tc.want, p.Errors)
			}
		})
	}
}

// TestContract_NestedSharedAndRestart: the nested contract's records read
// back alike through a second replica on the same Redis, and through a
// sandbox restarted on the same --data file.
func TestContract_NestedSharedAndRestart(t *testing.T) {
	sent := `{"trialId":"TRIAL-ONCO-002","patient":{"identity":{"name":"Bo","birthDate":"2001-12-31","sex":"unknown"},"contacts":[{"kind":"email","value":"bo@example.com"}]}}`
	create := func(t *testing.T, s *testSandbox) (string, []byte) {
		t.Helper()
		r := s.do(request{method: http.MethodPost, path: "/api/v1/referrals", token: s.token(partner), body: sent, plain: true})
		if r.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		return r.Header.Get("Location"), r.Body
	}
	t.Run("shared mode", func(t *testing.T) {
		srv := redistest.Start(t)
		a := newSandbox(t, withContract(t, "nested.yaml"), useRedisStore(t, srv.Addr, "team:"))
		b := newSandbox(t, withContract(t, "nested.yaml"), useRedisStore(t, srv.Addr, "team:"))
		location, body := create(t, a)
		if r := b.do(request{path: location, token: b.token(partner), plain: true}); r.Status != http.StatusOK || !bytes.Equal(r.Body, body) {
			t.Errorf("read through B: %d %s, want %s", r.Status, r.Body, body)
		}
	})
	t.Run("--data restart", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "data.db")
		first, err := store.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		location, body := create(t, newSandbox(t, withContract(t, "nested.yaml"), useStore(first)))
		if err := first.Close(); err != nil {
			t.Fatal(err)
		}
		second, err := store.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		s := newSandbox(t, withContract(t, "nested.yaml"), useStore(second))
		if r := s.do(request{path: location, token: s.token(partner), plain: true}); r.Status != http.StatusOK || !bytes.Equal(r.Body, body) {
			t.Errorf("after the restart: %d %s, want %s", r.Status, r.Body, body)
		}
		stored, err := s.Store.GetReferral(context.Background(), partner, location[strings.LastIndex(location, "/")+1:])
		if err != nil || string(stored.Submission) != sent {
			t.Errorf("stored submission %s (%v), want it as sent", stored.Submission, err)
		}
	})
}
