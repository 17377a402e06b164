package drift

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/brianvoe/gofakeit/v7"
)

// syntheticNote marks every referral drift submits, for whoever reads the
// upstream's data.
const syntheticNote = "Synthetic referral sent by referrals-sandbox drift; not a patient."

// patient is a generated patient: gofakeit names, a fixed date of birth.
func patient(f *gofakeit.Faker, dateOfBirth, gender string) map[string]any {
	return map[string]any{
		"firstName":   f.FirstName(),
		"lastName":    f.LastName(),
		"dateOfBirth": dateOfBirth,
		"gender":      gender,
	}
}

// newExternalSourceID is drift- and random hex: clearly synthetic, and
// unique so a second run does not collide with the first.
func newExternalSourceID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return "drift-" + hex.EncodeToString(b)
}

// writeProbes submit synthetic referrals to each side's write trial, read
// them back, and send the documented validation failures (bad date, bad
// gender).
func writeProbes(f *gofakeit.Faker) []probe {
	referral := func(s *side, dob, gender string) ([]byte, error) {
		return json.Marshal(map[string]any{"trialId": s.writeTrial, "patient": patient(f, dob, gender), "notes": syntheticNote})
	}
	qualified := func(s *side, id, dob, gender string) ([]byte, error) {
		return json.Marshal(map[string]any{"externalSourceId": id, "trialId": s.writeTrial, "patient": patient(f, dob, gender)})
	}
	post := func(name, path string, body func(s *side) ([]byte, error), after func(s *side, a answer)) probe {
		return probe{name: name, after: after, build: func(s *side) (request, string) {
			b, err := body(s)
			if err != nil {
				return request{}, "could not build the body: " + err.Error()
			}
			return s.apiRequest(http.MethodPost, path, false, b, s.token), ""
		}}
	}
	return []probe{
		post("referral-submit", "/referrals/", func(s *side) ([]byte, error) { return referral(s, "1980-02-29", "female") },
			func(s *side, a answer) {
				if a.status/100 == 2 {
					s.createdTrial, s.createdOutcome = idFrom(a, "trialId"), idFrom(a, "outcomesId")
				}
			}),
		{name: "referral-read", build: func(s *side) (request, string) {
			if s.createdOutcome == "" {
				return request{}, s.target.Name + "'s answer to referral-submit held no outcomesId to read back"
			}
			trial := s.createdTrial
			if trial == "" {
				trial = s.writeTrial
			}
			return s.apiRequest(http.MethodGet, "/referrals/"+url.PathEscape(trial)+"/"+url.PathEscape(s.createdOutcome), false, nil, s.token), ""
		}},
		post("qualified-submit", "/referrals/qualified", func(s *side) ([]byte, error) {
			s.createdExternal = newExternalSourceID()
			return qualified(s, s.createdExternal, "1975-07-14", "male")
		}, func(s *side, a answer) {
			if a.status/100 != 2 {
				s.createdExternal = ""
			}
		}),
		{name: "qualified-read", build: func(s *side) (request, string) {
			if s.createdExternal == "" {
				return request{}, s.target.Name + " did not accept the qualified-submit probe"
			}
			return s.apiRequest(http.MethodGet, "/referrals/qualified/"+url.PathEscape(s.createdExternal), false, nil, s.token), ""
		}},
		post("referral-submit.bad-date", "/referrals/", func(s *side) ([]byte, error) { return referral(s, "31/12/1990", "female") }, nil),
		post("referral-submit.bad-gender", "/referrals/", func(s *side) ([]byte, error) { return referral(s, "1990-12-31", "F") }, nil),
		post("qualified-submit.bad-date", "/referrals/qualified", func(s *side) ([]byte, error) {
			return qualified(s, newExternalSourceID(), "1990-13-45", "female")
		}, nil),
		post("qualified-submit.bad-gender", "/referrals/qualified", func(s *side) ([]byte, error) {
			return qualified(s, newExternalSourceID(), "1990-12-31", "Female")
		}, nil),
	}
}
