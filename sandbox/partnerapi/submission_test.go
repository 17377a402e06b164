package partnerapi

import (
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// TestSubmissionOfIsStable pins submission digests: journals of replicas
// of different versions are compared by them (the resubmits-safely
// check), so the same submission must always give the same digest. The
// values were computed by the first implementation (strings.ToLower of
// each trimmed part, hashed part by part).
func TestSubmissionOfIsStable(t *testing.T) {
	for _, c := range []struct {
		trial string
		p     referrals.Patient
		want  string
	}{
		{"TRIAL-CARDIO-001", referrals.Patient{FirstName: "Ann", LastName: "Lee", DateOfBirth: "1980-04-12"}, "2d1cf90686c26b1ee658e9b1"},
		{"NCT05550001", referrals.Patient{FirstName: " ZOË ", LastName: "Ǆemal\xff", DateOfBirth: " 1980-04-12\t"}, "d5ccc7858c7a145914ef1be2"},
		{"", referrals.Patient{}, "df3f619804a92fdb4057192d"},
	} {
		if got := submissionOf(c.trial, c.p); got != c.want {
			t.Errorf("submissionOf(%q, %+v) = %q, want %q", c.trial, c.p, got, c.want)
		}
	}
}
