package storetest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// testSubmissionKept: a record a --contract shaped keeps the submission as
// sent, byte for byte, through create, read, list and update.
func testSubmissionKept(t *testing.T, s store.Store) {
	sent := json.RawMessage(`{"trialId":"TRIAL-001","patient":{"birthDate":"1990-01-02","sex":"F"},"x":[1,2.50,"é"]}`)
	r := referral("alice", "R-1", at(1))
	r.Patient, r.Submission = referrals.Patient{}, sent
	must(t, s.CreateReferral(context.Background(), r))
	q := qualified("alice", "Q-1", at(1))
	q.Patient, q.Address, q.Conditions, q.Qualification, q.Submission = referrals.Patient{}, nil, nil, nil, sent
	must(t, s.CreateQualified(context.Background(), q))

	got, err := s.GetReferral(context.Background(), "alice", "R-1")
	must(t, err)
	if string(got.Submission) != string(sent) {
		t.Errorf("GetReferral submission = %s, want %s", got.Submission, sent)
	}
	list, _, err := s.ListReferrals(context.Background(), "alice", store.Page{})
	must(t, err)
	if len(list) != 1 || string(list[0].Submission) != string(sent) {
		t.Errorf("ListReferrals = %+v, want the submission %s", list, sent)
	}
	updated, err := s.UpdateReferral(context.Background(), "alice", "R-1", func(r *referrals.Referral) error { r.Status = referrals.StatusReviewing; return nil })
	must(t, err)
	if string(updated.Submission) != string(sent) {
		t.Errorf("UpdateReferral submission = %s, want %s", updated.Submission, sent)
	}
	gq, err := s.GetQualified(context.Background(), "alice", "Q-1", nil)
	must(t, err)
	if string(gq.Submission) != string(sent) {
		t.Errorf("GetQualified submission = %s, want %s", gq.Submission, sent)
	}
}
