package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// TestCreateQualifiedJSON holds the JSON CreateQualifiedJSON answers to
// json.Marshal of what GetQualified returns for the new record, byte for
// byte, whatever the record's trail and submission; a resend is a conflict
// that leaves the buffer and the record as they were.
func TestCreateQualifiedJSON(t *testing.T) {
	entry := func(i int) referrals.AuditEntry {
		return referrals.AuditEntry{At: "2026-01-02T03:04:05.5Z", Action: referrals.AuditSubmitted, Actor: "c<&>", RequestID: fmt.Sprint("r", i)}
	}
	var long []referrals.AuditEntry
	for i := range store.TrailInRecord + 5 {
		long = append(long, entry(i))
	}
	base := referrals.QualifiedReferral{
		ExternalSourceID: "q-1", TrialID: "T-1", ClientID: "c1", Status: referrals.StatusReceived,
		SubmittedAt: "2026-01-02T03:04:05.123456Z",
		Patient:     referrals.Patient{FirstName: "Zoë <b>", LastName: "Lee", DateOfBirth: "1980-04-12", Gender: "female"},
		Address:     &referrals.Address{Country: "US"},
		Conditions:  []referrals.Coding{{Code: "I50.9", System: "ICD-10-CM"}},
	}
	tests := []struct {
		name   string
		change func(*referrals.QualifiedReferral)
	}{
		{"one entry", func(q *referrals.QualifiedReferral) { q.AuditTrail = long[:1] }},
		{"no trail", func(q *referrals.QualifiedReferral) {}},
		{"a trail longer than the record shows", func(q *referrals.QualifiedReferral) { q.AuditTrail = long }},
		{"a time to canonicalise", func(q *referrals.QualifiedReferral) {
			q.SubmittedAt = "2026-01-02T04:04:05.5+01:00"
			q.AuditTrail = long[:2]
		}},
		{"a contract's submission", func(q *referrals.QualifiedReferral) {
			q.Submission = json.RawMessage(`{"a":1}`)
			q.AuditTrail = long[:1]
		}},
	}
	for _, tt := range tests {
		for _, kind := range store.Backings {
			t.Run(kind+"/"+tt.name, func(t *testing.T) {
				path := store.BackingPath(t, kind)
				s := mustOpen(t, path)
				defer func() { s.Close() }()
				q := base
				tt.change(&q)
				got, err := s.CreateQualifiedJSON(context.Background(), []byte("before"), q)
				if err != nil {
					t.Fatal(err)
				}
				stored, err := s.GetQualified(context.Background(), q.ClientID, q.ExternalSourceID, nil)
				if err != nil {
					t.Fatal(err)
				}
				want, _ := json.Marshal(stored)
				if string(got) != "before"+string(want) {
					t.Errorf("answered\n%s\nGetQualified\nbefore%s", got, want)
				}
				resend := q
				resend.Patient.LastName, resend.AuditTrail = "Other", long[:3]
				again, err := s.CreateQualifiedJSON(context.Background(), []byte("before"), resend)
				if !errors.Is(err, store.ErrConflict) || string(again) != "before" {
					t.Errorf("resend: %q, %v; want the buffer unchanged and ErrConflict", again, err)
				}
				if kept, err := s.GetQualified(context.Background(), q.ClientID, q.ExternalSourceID, nil); err != nil || !reflect.DeepEqual(kept, stored) {
					t.Errorf("after the resend: %+v, %v; want the record unchanged", kept, err)
				}
				if kind == "file" {
					// What the file holds: the record as first stored.
					if err := s.Close(); err != nil {
						t.Fatal(err)
					}
					s = mustOpen(t, path)
					if kept, err := s.GetQualified(context.Background(), q.ClientID, q.ExternalSourceID, nil); err != nil || !reflect.DeepEqual(kept, stored) {
						t.Errorf("reopened after the resend: %+v, %v; want the record unchanged", kept, err)
					}
				}
				if page, _, err := s.ListQualified(context.Background(), q.ClientID, store.Page{}, nil); err != nil || len(page) != 1 || !reflect.DeepEqual(page[0], stored) {
					t.Errorf("listed after the resend: %+v, %v; want the record once, unchanged", page, err)
				}
			})
		}
	}
}
