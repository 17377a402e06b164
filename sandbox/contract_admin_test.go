package sandbox_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestContract_AdminAPI: under a contract, the admin API answers a record
// as stored (the sandbox's members and the submission as sent) with the
// record as its partner reads it, in the contract's shape, both in the
// console's listings and after a status move; the answers conform to
// admin.json (s.admin checks them), and the partner reads the move.
func TestContract_AdminAPI(t *testing.T) {
	t.Run("trial-based, nested shape", func(t *testing.T) {
		s := newSandbox(t, withContract(t, "nested.yaml"))
		token := s.token(partner)
		sent := `{"trialId":"NCT05550001","patient":{"identity":{"name":"Ada","birthDate":"1990-02-03","sex":"female"}}}`
		created := s.do(request{method: http.MethodPost, path: "/api/v1/referrals", token: token, body: sent, plain: true})
		if created.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", created.Status, created.Body)
		}
		location := created.Header.Get("Location")
		var page struct {
			Referrals []struct {
				OutcomesID   string          `json:"outcomesId"`
				Status       string          `json:"status"`
				Submission   json.RawMessage `json:"submission"`
				Record       json.RawMessage `json:"record"`
				NextStatuses []string        `json:"nextStatuses"`
			} `json:"referrals"`
		}
		s.admin(http.MethodGet, "/__sandbox/data/referrals?clientId="+partner+"&limit=1", nil).decode(t, &page)
		if len(page.Referrals) != 1 {
			t.Fatalf("console listing %+v, want the new record", page)
		}
		row := page.Referrals[0]
		if string(row.Submission) != sent || !bytes.Equal(row.Record, bytes.TrimSpace(created.Body)) || row.Status != "received" || len(row.NextStatuses) == 0 {
			t.Errorf("console row %s %s %s %v\nwant the submission as sent %s, the record as the partner reads it %s, and its moves", row.Status, row.Submission, row.Record, row.NextStatuses, sent, created.Body)
		}

		moved := s.admin(http.MethodPost, "/__sandbox"+strings.TrimPrefix(location, "/api/v1")+"/status", map[string]string{"status": "reviewing"})
		var answer struct {
			Status     string          `json:"status"`
			Submission json.RawMessage `json:"submission"`
			Record     struct {
				Meta struct{ State string } `json:"meta"`
			} `json:"record"`
		}
		moved.decode(t, &answer)
		if answer.Status != "reviewing" || answer.Record.Meta.State != "reviewing" || string(answer.Submission) != sent {
			t.Errorf("status move answered %s, want status and record.meta.state reviewing, the submission as sent", moved.Body)
		}
		read := members(t, s.do(request{path: location, token: token, plain: true}))
		if meta, _ := read["meta"].(map[string]any); meta["state"] != "reviewing" {
			t.Errorf("the partner reads %v after the move, want meta.state reviewing", read)
		}
	})
	t.Run("qualified, renamed members", func(t *testing.T) {
		s := newSandbox(t, withContract(t, "strict.json"))
		sent := `{"externalSourceId":"adm-1","consent":{"given":true,"recordedAt":"2025-01-02T03:04:05Z"},"subject":{"nhsNumber":"1234567890"}}`
		if r := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/qualified", token: s.token(partner), body: sent, plain: true}); r.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		moved := s.admin(http.MethodPost, "/__sandbox/qualified/adm-1/status", map[string]string{"status": "reviewing", "clientId": partner})
		var answer struct {
			Submission json.RawMessage `json:"submission"`
			AuditTrail []any           `json:"auditTrail"`
			Record     struct {
				State   string `json:"state"`
				History []any  `json:"history"`
			} `json:"record"`
		}
		moved.decode(t, &answer)
		if string(answer.Submission) != sent || answer.Record.State != "reviewing" || len(answer.Record.History) != 2 || len(answer.AuditTrail) != 2 {
			t.Errorf("status move answered %s, want the submission as sent and the record with state reviewing and both history entries", moved.Body)
		}
		var page struct {
			QualifiedReferrals []struct {
				Record map[string]any `json:"record"`
			} `json:"qualifiedReferrals"`
		}
		s.admin(http.MethodGet, "/__sandbox/data/qualified?clientId="+partner+"&limit=1", nil).decode(t, &page)
		if len(page.QualifiedReferrals) != 1 || page.QualifiedReferrals[0].Record["state"] != "reviewing" {
			t.Errorf("console listing %+v, want the record in the contract's shape", page)
		}
	})
}
