package sandbox_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/contractdoc"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi/contract"
)

// TestContract_NegativeProbes runs the negative-test generator against each
// test contract, as TestNegativeProbes does against the built-in document:
// every request the contract refuses gets a 4xx, never a 5xx or a 2xx that
// stored bad data.
func TestContract_NegativeProbes(t *testing.T) {
	tests := []struct {
		file   string
		params map[string]string
		body   map[string]any
	}{
		{"birthdate.yaml", map[string]string{"trialId": "TRIAL-ONCO-002", "outcomeId": "00000000-0000-4000-8000-000000000000"},
			map[string]any{"trialId": "TRIAL-ONCO-002", "patient": map[string]any{"name": "Ada", "birthDate": "1990-02-03", "sex": "F", "mrn": "MRN-123456"}, "priority": 3}},
		{"strict.json", map[string]string{"id": "ext-none"},
			map[string]any{"externalSourceId": uniqueID, "consent": map[string]any{"given": true, "recordedAt": "2025-01-02T03:04:05Z"},
				"subject": map[string]any{"email": "a@example.com"}, "tags": []any{"ab", "cd"}}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			c, err := contractdoc.LoadFile(filepath.Join("testdata", "contracts", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			s := newSandbox(t, withContract(t, tc.file))
			base := s.URL
			if c.PathsUnderServer() {
				base += "/api/v1"
			}
			checker := contract.NewFor(t, base, c.Document())
			token := s.token(partner)
			probes, err := checker.Probes(contract.ProbeInputs{
				PathParams: tc.params,
				Body: func(op string) (any, bool) {
					return tc.body, op == "submit"
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(probes) < 20 {
				t.Fatalf("the generator made only %d probes", len(probes))
			}
			for i, p := range probes {
				p.Body = bytes.ReplaceAll(p.Body, []byte(uniqueID), []byte(fmt.Sprintf("probe-%d", i)))
				if c.PathsUnderServer() {
					p.URL = "/api/v1" + p.URL
				}
				t.Run(p.Name, func(t *testing.T) {
					accepted, problems, _ := sendProbe(t, checker, s.URL, token, p)
					if len(problems) > 0 {
						t.Fatal(strings.Join(problems, "\n"))
					}
					if accepted != "" {
						t.Error(accepted)
					}
				})
			}
		})
	}
}
