package sandbox_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/conformance"
)

// TestContract_ResubmitsSafely: under a contract, a submission carries the
// digest the resubmits-safely check compares, so a client that sends the
// same referral again after a lost answer is judged as under the built-in
// shapes: whatever its member order, and for a qualified referral under a
// new externalSourceId; one whose resubmission is answered 409 passes.
func TestContract_ResubmitsSafely(t *testing.T) {
	t.Parallel()
	const (
		referral       = `{"trialId":"TRIAL-ONCO-002","patient":{"name":"Ada","birthDate":"1990-02-03","sex":"F"}}`
		referralAgain  = `{"patient":{"sex":"F","birthDate":"1990-02-03","name":"Ada"}, "trialId":"NCT05550001"}`
		qualified      = `{"externalSourceId":"q-1","consent":{"given":true,"recordedAt":"2025-01-02T03:04:05Z"},"subject":{"email":"a@example.com"}}`
		qualifiedNewID = `{"externalSourceId":"q-2","consent":{"given":true,"recordedAt":"2025-01-02T03:04:05Z"},"subject":{"email":"a@example.com"}}`
		anotherPatient = `{"externalSourceId":"q-3","consent":{"given":true,"recordedAt":"2025-01-02T03:04:05Z"},"subject":{"email":"b@example.com"}}`
		referralsPath  = "/api/v1/referrals/"
		qualifiedPath  = "/api/v1/referrals/qualified"
	)
	cases := []struct {
		name, contract, path, first, second string
		secondStatus                        int
		want                                conformance.Result
	}{
		{"naive retry, members reordered, the trial by another id", "birthdate.yaml", referralsPath, referral, referralAgain, http.StatusCreated, conformance.Fail},
		{"qualified retry under a new externalSourceId", "strict.json", qualifiedPath, qualified, qualifiedNewID, http.StatusCreated, conformance.Fail},
		{"qualified resubmission answered 409", "strict.json", qualifiedPath, qualified, qualified, http.StatusConflict, conformance.Pass},
		{"another patient is not a resubmission", "strict.json", qualifiedPath, qualified, anotherPatient, http.StatusCreated, conformance.Pass},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t, withContract(t, tc.contract))
			tok := s.token(partner)
			s.activate("lost-answers", partner)
			lost := s.lostWrite(request{method: http.MethodPost, path: tc.path, token: tok, body: tc.first}, "write-1")
			if lost.Status != http.StatusCreated || lost.Submission == "" {
				t.Fatalf("lost write journaled %d with submission %q, want 201 and a digest", lost.Status, lost.Submission)
			}
			second := s.do(request{method: http.MethodPost, path: tc.path, token: tok, body: tc.second, plain: true})
			if second.Status != tc.secondStatus {
				t.Fatalf("second send: %d %s, want %d", second.Status, second.Body, tc.secondStatus)
			}
			check := s.resubmitCheck()
			if check.Result != tc.want {
				t.Fatalf("%s: %s (%s), want %s", conformance.CheckResubmitsSafely, check.Result, check.Explanation, tc.want)
			}
			if tc.want == conformance.Fail {
				for _, want := range []string{lost.RequestID, lost.Location, second.Header.Get("X-Request-Id"), second.Header.Get("Location")} {
					if want == "" || !slices.Contains(check.Evidence, want) {
						t.Errorf("evidence %v lacks %q (both requests and both records)", check.Evidence, want)
					}
				}
			}
		})
	}
}
