package e2e

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// qualifiedRequest is the body of POST /api/v1/referrals/qualified.
type qualifiedRequest struct {
	ExternalSourceID string                   `json:"externalSourceId"`
	TrialID          string                   `json:"trialId,omitempty"`
	Patient          referrals.Patient        `json:"patient"`
	Address          *referrals.Address       `json:"address,omitempty"`
	Conditions       []referrals.Coding       `json:"conditions,omitempty"`
	Medications      []referrals.Coding       `json:"medications,omitempty"`
	Qualification    *referrals.Qualification `json:"qualification,omitempty"`
}

// submission is worker w's seq-th submission: a pure function of its
// arguments, so that the test keeps only numbers and can rebuild every body
// to compare it with what the sandbox returns. The fields vary with seq so
// that optional parts are both present and absent.
func submission(prefix string, w, seq int) qualifiedRequest {
	firstNames := []string{"Ann", "Bo", "Chidi", "Dana", "Émile", "Fatima", "Gus"}
	lastNames := []string{"Lee", "Diaz", "Okafor", "Nguyen", "Müller", "O'Brien"}
	genders := []string{"female", "male", "other", "unknown"}
	trials := []string{"TRIAL-CARDIO-001", "TRIAL-ONCO-002", "TRIAL-DIAB-003", ""}
	n := w*1_000_003 + seq
	q := qualifiedRequest{
		ExternalSourceID: fmt.Sprintf("%s-w%02d-%07d", prefix, w, seq),
		TrialID:          trials[n%len(trials)],
		Patient: referrals.Patient{
			FirstName:   firstNames[n%len(firstNames)],
			LastName:    lastNames[(n/7)%len(lastNames)],
			DateOfBirth: fmt.Sprintf("19%02d-%02d-%02d", 30+n%70, 1+n%12, 1+n%28),
			Gender:      genders[n%len(genders)],
		},
	}
	if n%3 == 0 {
		q.Patient.Email = fmt.Sprintf("patient%d@example.com", n)
	}
	if n%5 == 0 {
		q.Patient.Phone = fmt.Sprintf("+1415555%04d", n%10000)
	}
	if n%2 == 0 {
		q.Address = &referrals.Address{Line1: fmt.Sprintf("%d Main St", n%9999+1), City: "Springfield", State: "IL", PostalCode: "62701", Country: "US"}
	}
	for i := range n % 3 {
		q.Conditions = append(q.Conditions, referrals.Coding{Code: fmt.Sprintf("I%02d.%d", 10+i, n%10), System: "ICD-10-CM", Display: "condition " + fmt.Sprint(i)})
	}
	if n%4 == 1 {
		q.Medications = []referrals.Coding{{Code: fmt.Sprint(300000 + n%1000), System: "RxNorm"}}
	}
	if n%3 == 1 {
		q.Qualification = &referrals.Qualification{QualifiedOn: "2025-03-14", CriteriaMet: []string{"age", "diagnosis"}, ScreenerName: "soak screener"}
	}
	return q
}

// body encodes the request.
func (q qualifiedRequest) body() ([]byte, error) {
	b, err := json.Marshal(q)
	if err != nil {
		return nil, fmt.Errorf("encode submission %s: %w", q.ExternalSourceID, err)
	}
	return b, nil
}

// sameAsSent reports how a stored qualified referral differs from the
// request that created it, or "" when it is exactly what was sent (plus
// the server's own fields: client, status, time, audit trail).
func sameAsSent(got referrals.QualifiedReferral, sent qualifiedRequest, clientID string) string {
	switch {
	case got.ExternalSourceID != sent.ExternalSourceID:
		return fmt.Sprintf("externalSourceId %q, sent %q", got.ExternalSourceID, sent.ExternalSourceID)
	case got.TrialID != sent.TrialID:
		return fmt.Sprintf("trialId %q, sent %q", got.TrialID, sent.TrialID)
	case got.ClientID != clientID:
		return fmt.Sprintf("clientId %q, submitted by %q", got.ClientID, clientID)
	case !reflect.DeepEqual(got.Patient, sent.Patient):
		return fmt.Sprintf("patient %+v, sent %+v", got.Patient, sent.Patient)
	case !reflect.DeepEqual(got.Address, sent.Address):
		return fmt.Sprintf("address %+v, sent %+v", got.Address, sent.Address)
	case !reflect.DeepEqual(got.Conditions, sent.Conditions):
		return fmt.Sprintf("conditions %+v, sent %+v", got.Conditions, sent.Conditions)
	case !reflect.DeepEqual(got.Medications, sent.Medications):
		return fmt.Sprintf("medications %+v, sent %+v", got.Medications, sent.Medications)
	case !reflect.DeepEqual(got.Qualification, sent.Qualification):
		return fmt.Sprintf("qualification %+v, sent %+v", got.Qualification, sent.Qualification)
	case len(got.AuditTrail) == 0 || got.AuditTrailTotal < len(got.AuditTrail):
		return fmt.Sprintf("audit trail of %d entries, %d in all", len(got.AuditTrail), got.AuditTrailTotal)
	// The record carries the newest entries of its trail (docs/api.md): only a
	// whole trail still shows the submission first.
	case got.AuditTrailTotal == len(got.AuditTrail) && got.AuditTrail[0].Action != referrals.AuditSubmitted:
		return fmt.Sprintf("audit trail %+v does not start with %q", got.AuditTrail, referrals.AuditSubmitted)
	}
	return ""
}
