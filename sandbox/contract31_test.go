package sandbox_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// readLast, as a step's path, reads the record the run's last submission
// created (its Location).
const readLast = "LOCATION"

// TestContract_OpenAPI31TwinsAnswerAlike: each test contract written as
// OpenAPI 3.1 (testdata/contracts/*31.*, the same constraints in 3.1's
// forms) answers every request exactly as its 3.0 twin does, refusals and
// their JSON Pointers included, once each run's own address and record ids
// are set aside; and the document it serves is the 3.0 translation, saying
// so.
func TestContract_OpenAPI31TwinsAnswerAlike(t *testing.T) {
	birthdate := func(mutate func(p map[string]any, body map[string]any)) map[string]any {
		p := map[string]any{"name": "Ada", "birthDate": "1990-02-03", "sex": "F", "mrn": "MRN-123456"}
		body := map[string]any{"trialId": "TRIAL-ONCO-002", "patient": p, "priority": 3}
		mutate(p, body)
		return body
	}
	nested := func(mutate func(identity map[string]any, body map[string]any)) map[string]any {
		identity := map[string]any{"name": "Ada", "birthDate": "1990-02-03", "sex": "female"}
		body := map[string]any{"trialId": "TRIAL-ONCO-002", "notes": "twin", "patient": map[string]any{
			"identity": identity, "contacts": []any{map[string]any{"kind": "phone", "value": "+44 20 7946 0000"}}}}
		mutate(identity, body)
		return body
	}
	strict := func(id string, mutate func(body map[string]any)) map[string]any {
		body := map[string]any{"externalSourceId": id, "consent": map[string]any{"given": true, "recordedAt": "2025-01-02T03:04:05Z"},
			"subject": map[string]any{"nhsNumber": "9434765919"}, "tags": []any{"ab", "cd"}}
		mutate(body)
		return body
	}
	same := func(map[string]any, map[string]any) {}
	tests := []struct {
		v30, v31 string
		steps    []request
	}{
		{"birthdate.yaml", "birthdate31.yaml", []request{
			{method: http.MethodPost, path: "/api/v1/referrals/", body: birthdate(same)},
			{path: readLast},
			{method: http.MethodPost, path: "/api/v1/referrals/", body: birthdate(func(p, b map[string]any) {
				p["sex"], p["birthDate"], b["priority"] = "female", "1990-02-30", 6
				delete(p, "name")
			})},
			{method: http.MethodPost, path: "/api/v1/referrals/", body: birthdate(func(p, b map[string]any) { b["priority"], p["mrn"] = 0, "MRN-1" })},
			{method: http.MethodPost, path: "/api/v1/referrals/", body: birthdate(func(p, b map[string]any) { b["patient"] = nil })},
			{path: "/api/v1/referrals/?limit=1"},
		}},
		{"nested.yaml", "nested31.yaml", []request{
			{method: http.MethodPost, path: "/api/v1/referrals", body: nested(func(map[string]any, map[string]any) {})},
			{path: readLast},
			{method: http.MethodPost, path: "/api/v1/referrals", body: nested(func(id, b map[string]any) {
				id["nickname"], id["sex"] = "Ada", "f"
				b["patient"].(map[string]any)["contacts"] = []any{map[string]any{"kind": "fax", "value": "1"}}
			})},
			{method: http.MethodPost, path: "/api/v1/referrals", body: nested(func(id, b map[string]any) { delete(b["patient"].(map[string]any), "identity") })},
		}},
		{"strict.json", "strict31.json", []request{
			{method: http.MethodPost, path: "/api/v1/referrals/qualified", body: strict("twin-1", func(map[string]any) {})},
			{path: readLast},
			{method: http.MethodPost, path: "/api/v1/referrals/qualified", body: strict("twin-2", func(b map[string]any) {
				b["consent"] = map[string]any{"given": false, "recordedAt": "2025-01-02"}
				b["tags"] = []any{"a", "bc", "de", "fg"}
				b["subject"] = map[string]any{"nhsNumber": "12", "email": "not-an-email"}
			})},
			{method: http.MethodPost, path: "/api/v1/referrals/qualified", body: strict("twin-3", func(b map[string]any) { b["extra"] = true })},
			{path: "/api/v1/referrals/qualified?limit=1"},
		}},
	}
	now := regexp.MustCompile(`2025-06-01T12:0[0-9]:[0-9]{2}(\.[0-9]+)?Z`)
	for _, tc := range tests {
		t.Run(tc.v31, func(t *testing.T) {
			runs := []*testSandbox{newSandbox(t, withContract(t, tc.v30)), newSandbox(t, withContract(t, tc.v31))}
			at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
			ids := make([][]string, len(runs))
			last := make([]string, len(runs))
			for _, s := range runs {
				s.setClock(at)
			}
			normal := func(i int, r *response) string {
				body := strings.ReplaceAll(string(r.Body), runs[i].URL, "BASE")
				body = now.ReplaceAllString(body, "NOW")
				for n, id := range ids[i] {
					body = strings.ReplaceAll(body, id, fmt.Sprintf("ID-%d", n))
				}
				return body
			}
			for n, step := range tc.steps {
				var answers [2]*response
				var bodies [2]string
				for i, s := range runs {
					r := step
					if r.path == readLast {
						r.path = last[i]
					}
					r.token, r.plain = s.token(partner), true
					r.headers = map[string]string{"X-Request-Id": fmt.Sprintf("step-%d", n)}
					answers[i] = s.do(r)
					if loc := answers[i].Header.Get("Location"); loc != "" {
						last[i] = strings.TrimPrefix(loc, s.URL)
						ids[i] = append(ids[i], loc[strings.LastIndex(loc, "/")+1:])
					}
					bodies[i] = normal(i, answers[i])
				}
				if answers[0].Status != answers[1].Status || bodies[0] != bodies[1] {
					t.Errorf("step %d %s %s:\n3.0: %d %s\n3.1: %d %s", n, step.method, step.path, answers[0].Status, bodies[0], answers[1].Status, bodies[1])
				}
				if n == 0 && answers[0].Status != http.StatusCreated {
					t.Fatalf("the first submission: %d %s, want 201", answers[0].Status, answers[0].Body)
				}
			}
			served := runs[1].do(request{path: "/api/v1/openapi.json", plain: true})
			for _, want := range []string{`"openapi": "3.0.3"`, "## Translated from OpenAPI 3.1", "## Served by referrals-sandbox"} {
				if !strings.Contains(string(served.Body), want) {
					t.Errorf("the served document lacks %q", want)
				}
			}
		})
	}
}
