package partnerapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
)

// fuzzToday is a fixed "today" so a crash replays.
var fuzzToday = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// checkDecodeOutcome holds decoding to its contract: success, or a request
// error with a 4xx the API documents; never a panic or a bare error (500).
func checkDecodeOutcome(t *testing.T, body []byte, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var re *reply.RequestError
	if !errors.As(err, &re) {
		t.Fatalf("decode returned a non-request error (would be a 500): %v", err)
	}
	switch re.Problem.Status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType:
	case http.StatusUnprocessableEntity: // a member given twice, and only in well-formed JSON
		if !json.Valid(body) || len(re.Problem.Errors) != 1 || re.Problem.Errors[0].Field == "" {
			t.Fatalf("decode answered 422 for %q: %+v", body, re.Problem)
		}
	default:
		t.Fatalf("decode answered %d: %v", re.Problem.Status, err)
	}
}

// FuzzDecodeReferral feeds arbitrary bodies to the referral decoder
// (decodeSubmission, with its null, UTF-8 and NUL checks) and validator:
// any input gets a documented answer, and every field error names a field.
func FuzzDecodeReferral(f *testing.F) {
	f.Add([]byte(`{"trialId":"NCT05550001","patient":{"firstName":"Ann","lastName":"Lee","dateOfBirth":"1980-04-12","gender":"female"}}`))
	f.Add([]byte(`{"trialId":5,"patient":[],"x":{"y":null}}`))
	f.Add([]byte(`[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]`))
	f.Add([]byte(`{"patient":{"dateOfBirth":"1980-02-30","gender":"F","email":"a@","phone":"+0"}}`))
	f.Add([]byte(``))
	f.Add([]byte("{\"trialId\":null,\"notes\":\"\xff\\u0000\",\"patient\":{\"firstName\":\"\\ud83d\\ude00\\ufffd\"}}"))
	set, err := fixtures.Default()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest(http.MethodPost, "/api/v1/referrals/", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		var req referralRequest
		_, invalid, err := DecodeSubmission(r, MaxBodyBytes, &req)
		checkDecodeOutcome(t, body, err)
		if err != nil {
			return
		}
		_, errs := validateReferral(req, fuzzToday, set.Trials)
		for _, fe := range append(invalid, errs...) {
			if fe.Field == "" || fe.Message == "" {
				t.Fatalf("field error without field or message: %+v", fe)
			}
		}
	})
}

// FuzzDecodeQualifiedReferral does the same for qualified referrals, the
// largest body the API takes.
func FuzzDecodeQualifiedReferral(f *testing.F) {
	f.Add([]byte(`{"externalSourceId":"ext-1","patient":{"firstName":"Ann","lastName":"Lee","dateOfBirth":"1980-04-12","gender":"female"},"address":{"country":"US"},"conditions":[{"code":"C50"}],"qualification":{"qualifiedOn":"2026-01-02","criteriaMet":["a"]}}`))
	f.Add([]byte(`{"externalSourceId":"bad id/","conditions":[{}],"medications":"x","qualification":{"qualifiedOn":"2999-01-01"}}`))
	f.Add([]byte(`{"externalSourceId":"\u0000","patient":{"firstName":"\ud800"}}`))
	set, err := fixtures.Default()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest(http.MethodPost, "/api/v1/referrals/qualified", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		var req qualifiedReferralRequest
		_, invalid, err := DecodeSubmission(r, MaxBodyBytes, &req)
		checkDecodeOutcome(t, body, err)
		if err != nil {
			return
		}
		_, errs := validateQualifiedReferral(req, fuzzToday, set.Trials)
		for _, fe := range append(invalid, errs...) {
			if fe.Field == "" || fe.Message == "" {
				t.Fatalf("field error without field or message: %+v", fe)
			}
		}
	})
}
