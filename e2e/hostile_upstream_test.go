package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
)

// plantedShape is one shape of patient data or credential a hostile real
// service answers with (or a partner sends through the recording proxy).
// docs/security.md quotes this table; keep the two in step.
type plantedShape struct {
	// shape is how the docs name it.
	shape string
	// where the stand-in puts it: "record" (a member of every listed
	// referral: name, JSON value), "name" (a member name of every
	// listed referral), "header" (a header of every API answer),
	// "string body", "problem", "query", "location", "text body",
	// "token body", "token header".
	where string
	// name is the member or header name; value is the member's JSON, the
	// header's value or the body.
	name, value string
	// planted are the strings that must appear nowhere the sandbox keeps
	// or writes.
	planted []string
}

// The partner's real client secret (not Entra-shaped, so no shape gives
// it away) and the stand-in's access token.
const (
	plantedSecret = "plain-partner-secret-Wq81zz"
	plantedToken  = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJhdWQiOiJhcGk6Ly9ob3N0aWxlIn0.aG9zdGlsZS1zaWduYXR1cmUtcGxhbnRlZA"
)

var plantedShapes = []plantedShape{
	{shape: "snake_case member names", where: "record", name: "first_name", value: `"Hepzibah"`, planted: []string{"Hepzibah"}},
	{shape: "snake_case member names", where: "record", name: "last_name", value: `"Vantongeren"`, planted: []string{"Vantongeren"}},
	{shape: "snake_case member names", where: "record", name: "date_of_birth", value: `"1931-07-19"`, planted: []string{"1931-07-19"}},
	{shape: "snake_case member names", where: "record", name: "birth_date", value: `"1932-08-21"`, planted: []string{"1932-08-21"}},
	{shape: "snake_case member names", where: "record", name: "email_address", value: `"hepzibah.v@clinic-planted.example"`, planted: []string{"hepzibah.v", "clinic-planted"}},
	{shape: "snake_case member names", where: "record", name: "mobile_phone", value: `"+447700900461"`, planted: []string{"447700900461"}},
	{shape: "FHIR-style name[].family and name[].given", where: "record", name: "name", value: `[{"family":"Quillfeather","given":["Ottoline","Berengaria"]}]`, planted: []string{"Quillfeather", "Ottoline", "Berengaria"}},
	{shape: "surname", where: "record", name: "surname", value: `"Marchbanks"`, planted: []string{"Marchbanks"}},
	{shape: "address as a string", where: "record", name: "address", value: `"221 Thistlewood Crescent, Oxbury OX9 7ZQ"`, planted: []string{"Thistlewood", "Oxbury", "OX9 7ZQ"}},
	{shape: "addresses and emails as string arrays", where: "record", name: "addresses", value: `["14 Gorsebrook Row","9 Larkspur Yard"]`, planted: []string{"Gorsebrook", "Larkspur"}},
	{shape: "addresses and emails as string arrays", where: "record", name: "emails", value: `["ottoline@quill-planted.example"]`, planted: []string{"ottoline@", "quill-planted"}},
	{shape: "numeric phone, ssn and nhsNumber", where: "record", name: "phone", value: `4155550187`, planted: []string{"4155550187"}},
	{shape: "numeric phone, ssn and nhsNumber", where: "record", name: "ssn", value: `78051120`, planted: []string{"78051120"}},
	{shape: "numeric phone, ssn and nhsNumber", where: "record", name: "nhsNumber", value: `9434765919`, planted: []string{"9434765919"}},
	{shape: "free text in clinical members", where: "record", name: "conditions", value: `[{"code":"I10","display":"Ottoline Quillfeather MRN-88231 hypertension"}]`, planted: []string{"MRN-88231"}},
	{shape: "free text in clinical members", where: "record", name: "qualification", value: `{"criteriaMet":["MRN-88232 confirmed by Dr Fennimore"]}`, planted: []string{"MRN-88232", "Fennimore"}},
	{shape: "free text in clinical members", where: "record", name: "auditTrail", value: `[{"at":"2026-01-02T03:04:05.123456Z","action":"status-changed","actor":"x","reason":"Hepzibah moved to Penhallow"}]`, planted: []string{"Penhallow"}},
	{shape: "data used as a member name", where: "name", name: "Ottoline Quillfeather 1931-07-19", planted: []string{"Ottoline", "Quillfeather"}},
	{shape: "a token echoed as a member name", where: "name", name: plantedToken, planted: []string{plantedToken, "aG9zdGlsZS1zaWduYXR1cmUtcGxhbnRlZA"}},
	{shape: "a response header", where: "header", name: "X-Patient-Name", value: "Ignatius Wolstenholme", planted: []string{"Ignatius", "Wolstenholme"}},
	{shape: "a whole JSON string body", where: "string body", value: `"Patient Ambrosine Pettigrew (DOB 1944-02-29) not found"`, planted: []string{"Ambrosine", "Pettigrew", "1944-02-29"}},
	{shape: "a problem body that echoes the submission (detail, rejectedValue)", where: "problem", name: "lastName", value: "Crabtree-Oyelaran", planted: []string{"Crabtree-Oyelaran"}},
	{shape: "a query string", where: "query", name: "lastName", value: "Featherstonehaugh", planted: []string{"Featherstonehaugh"}},
	{shape: "an id in Location", where: "location", value: "MRN-77410", planted: []string{"MRN-77410"}},
	{shape: "a body that is not JSON", where: "text body", value: "Patient Leofric Athelstan, bed 12", planted: []string{"Leofric", "Athelstan"}},
	{shape: "the forwarded client_secret echoed in a body", where: "token body", name: "echo", value: plantedSecret, planted: []string{plantedSecret}},
	{shape: "the forwarded client_secret echoed in a header and as a member name", where: "token header", name: "X-Echo", value: plantedSecret, planted: []string{plantedSecret}},
}

// keptBuild is the stand-in's X-Build header, which the proxy is told to
// keep (--upstream-keep): the one value of its answers a recording holds.
const keptBuild = "build-kept-42"

// hostileService is a stand-in real service built from plantedShapes.
func hostileService(t *testing.T) *httptest.Server {
	t.Helper()
	byWhere := func(where string) []plantedShape {
		var out []plantedShape
		for _, p := range plantedShapes {
			if p.where == where {
				out = append(out, p)
			}
		}
		return out
	}
	record := `"trialId":"T-HOSTILE-1","outcomesId":"6f1c2a7e-0b7d-4c1e-9f3a-2d5e8b9c0a11","externalSourceId":"ext-hostile-1","clientId":"partner","status":"received","submittedAt":"2026-01-02T03:04:05.123456Z"`
	for _, p := range byWhere("record") {
		record += `,"` + p.name + `":` + p.value
	}
	for _, p := range byWhere("name") {
		b, _ := json.Marshal(p.name)
		record += `,` + string(b) + `:true`
	}
	record = "{" + record + "}"
	headers := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Build", keptBuild)
		for _, p := range byWhere("header") {
			w.Header().Set(p.name, p.value)
		}
	}
	one := func(where string) plantedShape { return byWhere(where)[0] }
	mux := http.NewServeMux()
	mux.HandleFunc("POST /tenant/oauth2/v2.0/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		secret := r.PostForm.Get("client_secret")
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set(one("token header").name, secret)
		body, _ := json.Marshal(map[string]any{"token_type": "Bearer", "expires_in": 3599, "access_token": plantedToken,
			one("token body").name: secret, secret: true})
		_, _ = w.Write(body)
	})
	mux.HandleFunc("GET /api/v1/referrals/trials", func(w http.ResponseWriter, _ *http.Request) {
		headers(w)
		_, _ = io.WriteString(w, `{"trials":[{"trialId":"T-HOSTILE-1","altTrialId":"NCT-HOSTILE","versionId":"v1","name":"Hepzibah Vantongeren's trial"}]}`)
	})
	mux.HandleFunc("GET /api/v1/referrals/", func(w http.ResponseWriter, _ *http.Request) {
		headers(w)
		_, _ = io.WriteString(w, `{"referrals":[`+record+`]}`)
	})
	mux.HandleFunc("GET /api/v1/referrals/qualified", func(w http.ResponseWriter, _ *http.Request) {
		headers(w)
		_, _ = io.WriteString(w, `{"qualifiedReferrals":[`+record+`]}`)
	})
	mux.HandleFunc("GET /api/v1/referrals/qualified/{id}", func(w http.ResponseWriter, _ *http.Request) {
		headers(w)
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, one("string body").value)
	})
	mux.HandleFunc("POST /api/v1/referrals/", func(w http.ResponseWriter, r *http.Request) {
		var sent map[string]any
		_ = json.NewDecoder(r.Body).Decode(&sent)
		p := one("problem")
		echoed, _ := sent[p.name].(string)
		body, _ := json.Marshal(map[string]any{"type": "about:blank", "title": "Unprocessable", "status": 422,
			"detail": p.name + " '" + echoed + "' is not valid", "rejectedValue": echoed})
		headers(w)
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusUnprocessableEntity)
		_, _ = w.Write(body)
	})
	mux.HandleFunc("POST /api/v1/referrals/qualified", func(w http.ResponseWriter, _ *http.Request) {
		headers(w)
		w.Header().Set("Location", "/api/v1/referrals/qualified/"+one("location").value)
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, record)
	})
	mux.HandleFunc("GET /health/ping", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, one("text body").value)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestHostileUpstreamLeavesNoValueBehind runs a partner's calls through
// the recording proxy in front of a real service that answers with
// patient data in every shape of plantedShapes, and echoes the partner's
// secret and token; then looks for every planted value everywhere the
// sandbox keeps or writes something: the journal (admin API, requests
// --json, the HAR export, and Redis itself), fixtures import, drift
// --recording, its log and its metrics.
func TestHostileUpstreamLeavesNoValueBehind(t *testing.T) {
	t.Run("memory", func(t *testing.T) { hostileRun(t) })
	t.Run("redis", func(t *testing.T) {
		if !redistest.Installed() {
			t.Skip("redis-server is not installed")
		}
		r := redistest.Start(t)
		hostileRun(t, "--redis", r.URL)
		client := r.NewClient(t)
		var dump strings.Builder
		ctx := context.Background()
		iter := client.Scan(ctx, 0, "*", 100).Iterator()
		for iter.Next(ctx) {
			key := iter.Val()
			dump.WriteString(key + "\n")
			switch typ, _ := client.Type(ctx, key).Result(); typ {
			case "string":
				dump.WriteString(client.Get(ctx, key).Val())
			case "list":
				dump.WriteString(strings.Join(client.LRange(ctx, key, 0, -1).Val(), "\n"))
			case "hash":
				for k, v := range client.HGetAll(ctx, key).Val() {
					dump.WriteString(k + "=" + v + "\n")
				}
			case "zset":
				dump.WriteString(strings.Join(client.ZRange(ctx, key, 0, -1).Val(), "\n"))
			case "set":
				dump.WriteString(strings.Join(client.SMembers(ctx, key).Val(), "\n"))
			case "stream":
				for _, m := range client.XRange(ctx, key, "-", "+").Val() {
					b, _ := json.Marshal(m.Values)
					dump.Write(b)
				}
			}
		}
		if err := iter.Err(); err != nil {
			t.Fatal(err)
		}
		assertNothingPlanted(t, "Redis", dump.String())
	})
}

// hostileRun is one run through a proxy started with extra flags.
func hostileRun(t *testing.T, extra ...string) {
	real := hostileService(t)
	proxy := startSandbox(t, append([]string{"--upstream", real.URL, "--upstream-auth-url", real.URL + "/tenant", "--upstream-keep", "X-Build"}, extra...)...)
	client := newClient(4)
	send := func(method, path, contentType, body string, header ...string) {
		req, err := http.NewRequestWithContext(t.Context(), method, proxy.base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"11111111-2222-3333-4444-555555555555"},
		"client_secret": {plantedSecret}, "scope": {"api://hostile/.default"}}
	send(http.MethodPost, "/tenant/oauth2/v2.0/token", "application/x-www-form-urlencoded", form.Encode())
	auth := []string{"Authorization", "Bearer " + plantedToken}
	var query, location plantedShape
	for _, p := range plantedShapes {
		switch p.where {
		case "query":
			query = p
		case "problem":
			body, _ := json.Marshal(map[string]string{p.name: p.value, "trialId": "T-HOSTILE-1"})
			send(http.MethodPost, "/api/v1/referrals/", "application/json", string(body), auth...)
		case "location":
			location = p
		}
	}
	send(http.MethodGet, "/api/v1/referrals/trials", "", "", auth...)
	send(http.MethodGet, "/api/v1/referrals/?"+url.Values{query.name: {query.value}}.Encode(), "", "", auth...)
	send(http.MethodGet, "/api/v1/referrals/qualified", "", "", auth...)
	send(http.MethodGet, "/api/v1/referrals/qualified/"+location.value, "", "", auth...)
	send(http.MethodPost, "/api/v1/referrals/qualified", "application/json", `{"externalSourceId":"`+location.value+`"}`, auth...)
	send(http.MethodGet, "/health/ping", "", "")

	get := func(path string) string {
		resp, err := client.Get(proxy.base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	journal := get("/__sandbox/requests")
	if !strings.Contains(journal, `"upstream"`) || strings.Count(journal, `"upstream"`) < 8 {
		t.Fatalf("the journal lacks the recorded exchanges:\n%s", journal)
	}
	assertNothingPlanted(t, "the journal", journal)
	// The recording keeps the form: member names, the kept header, a
	// 10-digit number in place of the NHS number.
	for _, form := range []string{`"first_name":"`, `"X-Patient-Name":"`, `"X-Build":"` + keptBuild + `"`} {
		if !strings.Contains(journal, form) {
			t.Errorf("the journal lacks %s:\n%s", form, journal)
		}
	}
	if !regexp.MustCompile(`"nhsNumber":[1-9]\d{9}[,}]`).MatchString(journal) {
		t.Errorf("the NHS number lost its form:\n%s", journal)
	}
	assertNothingPlanted(t, "the HAR export", get("/__sandbox/requests.har"))
	assertNothingPlanted(t, "the metrics", get("/__sandbox/metrics"))
	assertNothingPlanted(t, "requests --json", cli(t, "requests", "--url", proxy.base, "--json"))
	assertNothingPlanted(t, "requests --har", cli(t, "requests", "--url", proxy.base, "--har"))

	dir := filepath.Join(t.TempDir(), "imported")
	cli(t, "fixtures", "import", "--from-journal", proxy.base, dir)
	files, err := os.ReadDir(dir)
	if err != nil || len(files) == 0 {
		t.Fatalf("fixtures import wrote nothing: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		assertNothingPlanted(t, "fixtures import's "+f.Name(), string(b))
	}
	for _, format := range []string{"text", "json"} {
		// drift exits 1 on differences: the hostile answers have plenty.
		out, _ := exec.Command(sandboxBinary, "drift", "--recording", proxy.base, "--max-rps", "1000", "--format", format).CombinedOutput()
		if !strings.Contains(string(out), "recorded:") {
			t.Errorf("drift --recording --format %s compared nothing:\n%s", format, out)
		}
		assertNothingPlanted(t, "drift --recording --format "+format, string(out))
	}
	proxy.kill()
	assertNothingPlanted(t, "the sandbox's log", proxy.stderr.String())
}

// cli runs the binary and returns its standard output; it fails the test
// on an exit status other than 0.
func cli(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(sandboxBinary, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, stderr.String())
	}
	return string(out) + stderr.String()
}

// assertNothingPlanted fails for every planted value text holds.
func assertNothingPlanted(t *testing.T, where, text string) {
	t.Helper()
	for _, p := range plantedShapes {
		for _, v := range p.planted {
			if strings.Contains(text, v) {
				t.Errorf("%s holds %q (%s)", where, v, p.shape)
			}
		}
	}
}
