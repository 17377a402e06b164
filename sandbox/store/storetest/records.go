package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// at returns the canonical timestamp i seconds after a fixed instant; tests
// never read the wall clock.
func at(i int) string {
	base := time.Date(2025, 10, 13, 9, 0, 0, 0, time.UTC)
	return base.Add(time.Duration(i) * time.Second).Format(referrals.TimestampLayout)
}

func referral(client, id, submittedAt string) referrals.Referral {
	return referrals.Referral{
		TrialID:     "TRIAL-001",
		OutcomesID:  id,
		ClientID:    client,
		Status:      referrals.StatusReceived,
		SubmittedAt: submittedAt,
		Patient:     referrals.Patient{FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1990-01-02", Gender: "female"},
	}
}

func qualified(client, id, submittedAt string) referrals.QualifiedReferral {
	return referrals.QualifiedReferral{
		ExternalSourceID: id,
		TrialID:          "TRIAL-001",
		ClientID:         client,
		Status:           referrals.StatusReceived,
		SubmittedAt:      submittedAt,
		Patient:          referrals.Patient{FirstName: "Grace", LastName: "Hopper", DateOfBirth: "1985-12-09", Gender: "female"},
		Address:          &referrals.Address{Line1: "1 Main St", City: "Springfield", PostalCode: "12345", Country: "US"},
		Conditions:       []referrals.Coding{{Code: "E11", System: "ICD-10", Display: "Type 2 diabetes"}},
		Qualification:    &referrals.Qualification{QualifiedOn: "2025-10-01", CriteriaMet: []string{"age", "diagnosis"}},
		AuditTrail:       []referrals.AuditEntry{{At: submittedAt, Action: referrals.AuditSubmitted, Actor: client}},
	}
}

func view(requestID string) *referrals.AuditEntry {
	return &referrals.AuditEntry{At: at(1000), Action: referrals.AuditViewed, Actor: "viewer", RequestID: requestID}
}

// kind lets one test body exercise both key spaces.
type kind struct {
	name   string
	create func(s store.Store, client, id, submittedAt string) error
	get    func(s store.Store, client, id string) (entry, error)
	list   func(s store.Store, client string, p store.Page) ([]entry, string, error)
	update func(s store.Store, client, id, status string) error
}

// entry is what the generic tests compare of a record.
type entry struct{ client, id, submittedAt, status string }

func kinds() []kind {
	return []kind{
		{
			name: "referral",
			create: func(s store.Store, client, id, submittedAt string) error {
				return s.CreateReferral(context.Background(), referral(client, id, submittedAt))
			},
			get: func(s store.Store, client, id string) (entry, error) {
				r, err := s.GetReferral(context.Background(), client, id)
				return entry{r.ClientID, r.OutcomesID, r.SubmittedAt, r.Status}, err
			},
			list: func(s store.Store, client string, p store.Page) ([]entry, string, error) {
				rs, next, err := s.ListReferrals(context.Background(), client, p)
				out := make([]entry, 0, len(rs))
				for _, r := range rs {
					out = append(out, entry{r.ClientID, r.OutcomesID, r.SubmittedAt, r.Status})
				}
				return out, next, err
			},
			update: func(s store.Store, client, id, status string) error {
				_, err := s.UpdateReferral(context.Background(), client, id, func(r *referrals.Referral) error { r.Status = status; return nil })
				return err
			},
		},
		{
			name: "qualified",
			create: func(s store.Store, client, id, submittedAt string) error {
				return s.CreateQualified(context.Background(), qualified(client, id, submittedAt))
			},
			get: func(s store.Store, client, id string) (entry, error) {
				q, err := s.GetQualified(context.Background(), client, id, nil)
				return entry{q.ClientID, q.ExternalSourceID, q.SubmittedAt, q.Status}, err
			},
			list: func(s store.Store, client string, p store.Page) ([]entry, string, error) {
				qs, next, err := s.ListQualified(context.Background(), client, p, nil)
				out := make([]entry, 0, len(qs))
				for _, q := range qs {
					out = append(out, entry{q.ClientID, q.ExternalSourceID, q.SubmittedAt, q.Status})
				}
				return out, next, err
			},
			update: func(s store.Store, client, id, status string) error {
				_, err := s.UpdateQualified(context.Background(), client, id, func(q *referrals.QualifiedReferral) error { q.Status = status; return nil })
				return err
			},
		},
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: error %v, want %v", what, err, want)
	}
}

// listAll walks every page of a client's listing.
func listAll(t *testing.T, k kind, s store.Store, client string, limit int) []entry {
	t.Helper()
	var all []entry
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatalf("listing %s of %q does not end", k.name, client)
		}
		page, next, err := k.list(s, client, store.Page{Limit: limit, Cursor: cursor})
		must(t, err)
		all = append(all, page...)
		if next == "" {
			return all
		}
		cursor = next
	}
}
