package sandboxtest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/sandboxtest"
)

// jobCall is one API call of a job, and its answer.
func jobCall(t *testing.T, sb *sandboxtest.Sandbox, method, path, token string, body any) (int, []byte) {
	t.Helper()
	var reader io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		reader = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, sb.RootURL+path, reader)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := sb.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}

// TestTwentyJobsOneSandbox is a team's shared sandbox under 20 CI jobs at
// once, each with its own client: each submits records, forces failures on
// itself, jumps its own clock past its token's expiry and recovers, reads
// its journal and report, and resets itself. No job may ever see another's
// records, failures, clock or journal entries.
func TestTwentyJobsOneSandbox(t *testing.T) {
	sb := sandboxtest.Start(t)
	const jobs = 20
	for j := range jobs {
		t.Run(fmt.Sprintf("job-%02d", j), func(t *testing.T) {
			t.Parallel()
			creds := sb.NewClient(t)
			token := sb.Token(t, creds)
			mine := fmt.Sprintf("job-%02d-ref", j)

			// Records: what a job lists is exactly what it submitted.
			for i := range 3 {
				status, body := jobCall(t, sb, http.MethodPost, "/api/v1/referrals/qualified", token, map[string]any{
					"externalSourceId": fmt.Sprintf("%s-%d", mine, i),
					"patient":          map[string]any{"firstName": "Ann", "lastName": "Lee", "dateOfBirth": "1980-04-12", "gender": "female"},
				})
				if status != http.StatusCreated {
					t.Fatalf("submit: %d %s", status, body)
				}
			}
			status, body := jobCall(t, sb, http.MethodGet, "/api/v1/referrals/qualified?limit=500", token, nil)
			var list struct {
				QualifiedReferrals []struct {
					ExternalSourceID string `json:"externalSourceId"`
				} `json:"qualifiedReferrals"`
			}
			if err := json.Unmarshal(body, &list); status != http.StatusOK || err != nil {
				t.Fatalf("list: %d %s", status, body)
			}
			if len(list.QualifiedReferrals) != 3 {
				t.Errorf("job lists %d qualified referrals, want its own 3", len(list.QualifiedReferrals))
			}
			for _, q := range list.QualifiedReferrals {
				if !strings.HasPrefix(q.ExternalSourceID, mine) {
					t.Errorf("job sees another job's record %s", q.ExternalSourceID)
				}
			}

			// Failures: its own rule fires on it, exactly twice.
			rule := sb.AddRule(t, sandboxtest.Rule{Endpoint: sandboxtest.EndpointAPI, Status: 503, ClientID: creds.ClientID, Times: 2})
			var forced int
			for range 4 {
				if status, _ := jobCall(t, sb, http.MethodGet, "/api/v1/referrals/trials", token, nil); status == http.StatusServiceUnavailable {
					forced++
				}
			}
			if forced != 2 {
				t.Errorf("%d forced 503s, want the 2 of its own rule", forced)
			}

			// Clock: its own jump expires its token; a new one works.
			sb.AdvanceClientClock(t, creds.ClientID, 2*time.Hour)
			if status, _ := jobCall(t, sb, http.MethodGet, "/health/ping", token, nil); status != http.StatusUnauthorized {
				t.Errorf("ping after its own clock jump: %d, want 401", status)
			}
			token = sb.Token(t, creds)
			if status, _ := jobCall(t, sb, http.MethodGet, "/health/ping", token, nil); status != http.StatusOK {
				t.Errorf("ping with a new token: %d, want 200", status)
			}

			// Journal and report: only its own calls, every 503 its own rule's.
			entries := sb.Requests(t, sandboxtest.JournalFilter{ClientID: creds.ClientID})
			var fiveOhThrees int
			for _, e := range entries {
				if e.ClientID != creds.ClientID {
					t.Errorf("journal for %s holds an entry of %s", creds.ClientID, e.ClientID)
				}
				if e.Status == http.StatusServiceUnavailable {
					fiveOhThrees++
					if e.RuleID != rule.ID {
						t.Errorf("a 503 from rule %s, not its own %s", e.RuleID, rule.ID)
					}
				}
			}
			if fiveOhThrees != 2 {
				t.Errorf("journal holds %d 503s, want 2", fiveOhThrees)
			}
			reportStatus, report := jobCall(t, sb, http.MethodGet, "/__sandbox/report?clientId="+creds.ClientID, "", nil)
			if reportStatus != http.StatusOK || strings.Count(string(report), `"clientId":`) != 1 || !strings.Contains(string(report), creds.ClientID) {
				t.Errorf("report for one job: %d %s", reportStatus, report)
			}

			// Reset: back to nothing, and only for this job.
			sb.ResetClient(t, creds.ClientID)
			token = sb.Token(t, creds)
			_, body = jobCall(t, sb, http.MethodGet, "/api/v1/referrals/qualified", token, nil)
			if strings.Contains(string(body), mine) {
				t.Errorf("records after its own reset: %s", body)
			}
			if status, _ := jobCall(t, sb, http.MethodGet, "/api/v1/referrals/trials", token, nil); status != http.StatusOK {
				t.Errorf("trials after its own reset: %d, want 200 (its rule is gone, no other job's applies)", status)
			}
		})
	}
}
