package partnerapi

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
)

// testToday is 22:00 on 3 November in New York, which is already
// 4 November in UTC: dates are judged by the UTC date.
var testToday = time.Date(2025, 11, 3, 22, 0, 0, 0, time.FixedZone("EST", -5*3600))

const futureMessage = "must not be in the future (today is 2025-11-04 UTC)"

func testTrials() []referrals.Trial {
	return []referrals.Trial{
		{TrialID: "T-100", AltTrialID: "ALT-100", Active: true, AcceptingReferrals: true},
		{TrialID: "T-200", AltTrialID: "T-200", Active: false, AcceptingReferrals: true},
		{TrialID: "T-300", AltTrialID: "ALT-300", Active: true, AcceptingReferrals: false},
		// Its altTrialId collides with T-100's trialId; the primary id wins.
		{TrialID: "T-400", AltTrialID: "T-100", Active: false, AcceptingReferrals: false},
	}
}

func validPatient() referrals.Patient {
	return referrals.Patient{FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1980-04-12", Gender: "female"}
}

// errMap indexes field errors by field, failing on a field reported twice.
func errMap(t *testing.T, errs []reply.FieldError) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, e := range errs {
		if _, dup := m[e.Field]; dup {
			t.Errorf("field %s reported twice: %v", e.Field, errs)
		}
		m[e.Field] = e.Message
	}
	return m
}

func checkErrs(t *testing.T, errs []reply.FieldError, want map[string]string) {
	t.Helper()
	got := errMap(t, errs)
	if len(got) != len(want) {
		t.Errorf("errors = %v\nwant    %v", errs, want)
		return
	}
	for field, msg := range want {
		if got[field] != msg {
			t.Errorf("%s: message %q, want %q", field, got[field], msg)
		}
	}
}

func TestValidatePatient(t *testing.T) {
	const (
		formatMsg = "must be a date in the format YYYY-MM-DD"
		realMsg   = "is not a real calendar date"
		genderMsg = `must be one of "female", "male", "other", "unknown" (exact, lowercase)`
		emailMsg  = "must be a plain email address such as name@example.com: no display name, quotes or angle brackets, and a domain name with a dot (not localhost)"
		phoneMsg  = "must be an E.164 phone number: + and 2 to 15 digits, the first not 0, no spaces (e.g. +14155550123)"
		postalMsg = "must be 1 to 20 letters, digits, spaces or hyphens"
	)
	tests := []struct {
		name string
		edit func(*referrals.Patient)
		want map[string]string
	}{
		{"valid", func(*referrals.Patient) {}, nil},
		{"valid with every optional field", func(p *referrals.Patient) {
			p.Email, p.Phone, p.PostalCode = "ada.lovelace+trial@mail.example.co.uk", "+14155550123", "SW1A 1AA"
		}, nil},
		{"all missing", func(p *referrals.Patient) { *p = referrals.Patient{} }, map[string]string{
			"patient.firstName": "required", "patient.lastName": "required", "patient.dateOfBirth": "required", "patient.gender": genderRequired,
		}},
		{"whitespace-only is missing", func(p *referrals.Patient) { p.FirstName, p.LastName, p.DateOfBirth, p.Gender = " ", "\t\n", "  ", " " }, map[string]string{
			"patient.firstName": "required", "patient.lastName": "required", "patient.dateOfBirth": "required", "patient.gender": genderRequired,
		}},
		{"names are not trimmed", func(p *referrals.Patient) { p.FirstName = " Ada " }, nil},
		{"100 characters, multi-byte", func(p *referrals.Patient) { p.FirstName = strings.Repeat("é", 100) }, nil},
		{"101 characters", func(p *referrals.Patient) { p.LastName = strings.Repeat("x", 101) }, map[string]string{
			"patient.lastName": "must be at most 100 characters, got 101",
		}},
		{"US date format", func(p *referrals.Patient) { p.DateOfBirth = "04/12/1980" }, map[string]string{"patient.dateOfBirth": formatMsg}},
		{"unpadded date", func(p *referrals.Patient) { p.DateOfBirth = "1980-4-12" }, map[string]string{"patient.dateOfBirth": formatMsg}},
		{"timestamp", func(p *referrals.Patient) { p.DateOfBirth = "1980-04-12T00:00:00Z" }, map[string]string{"patient.dateOfBirth": formatMsg}},
		{"30 February", func(p *referrals.Patient) { p.DateOfBirth = "1980-02-30" }, map[string]string{"patient.dateOfBirth": realMsg}},
		{"month 13", func(p *referrals.Patient) { p.DateOfBirth = "1980-13-01" }, map[string]string{"patient.dateOfBirth": realMsg}},
		{"29 February in a leap year", func(p *referrals.Patient) { p.DateOfBirth = "1980-02-29" }, nil},
		{"tomorrow in UTC", func(p *referrals.Patient) { p.DateOfBirth = "2025-11-05" }, map[string]string{"patient.dateOfBirth": futureMessage}},
		{"today in UTC", func(p *referrals.Patient) { p.DateOfBirth = "2025-11-04" }, nil},
		{"1899-12-31", func(p *referrals.Patient) { p.DateOfBirth = "1899-12-31" }, map[string]string{"patient.dateOfBirth": "must not be before 1900-01-01"}},
		{"1900-01-01", func(p *referrals.Patient) { p.DateOfBirth = "1900-01-01" }, nil},
		{"gender F", func(p *referrals.Patient) { p.Gender = "F" }, map[string]string{"patient.gender": genderMsg}},
		{"gender Female", func(p *referrals.Patient) { p.Gender = "Female" }, map[string]string{"patient.gender": genderMsg}},
		{"gender with space", func(p *referrals.Patient) { p.Gender = "male " }, map[string]string{"patient.gender": genderMsg}},
		{"gender other", func(p *referrals.Patient) { p.Gender = "other" }, nil},
		{"gender unknown", func(p *referrals.Patient) { p.Gender = "unknown" }, nil},
		{"email with display name", func(p *referrals.Patient) { p.Email = "Ada <ada@example.com>" }, map[string]string{"patient.email": emailMsg}},
		{"email in angle brackets", func(p *referrals.Patient) { p.Email = "<ada@example.com>" }, map[string]string{"patient.email": emailMsg}},
		{"email without domain", func(p *referrals.Patient) { p.Email = "ada@" }, map[string]string{"patient.email": emailMsg}},
		{"email without at", func(p *referrals.Patient) { p.Email = "ada.example.com" }, map[string]string{"patient.email": emailMsg}},
		{"email with leading space", func(p *referrals.Patient) { p.Email = " ada@example.com" }, map[string]string{"patient.email": emailMsg}},
		{"two emails", func(p *referrals.Patient) { p.Email = "ada@example.com, bob@example.com" }, map[string]string{"patient.email": emailMsg}},
		{"email too long", func(p *referrals.Patient) { p.Email = strings.Repeat("a", 250) + "@x.io" }, map[string]string{
			"patient.email": "must be at most 254 characters, got 255",
		}},
		{"shortest phone", func(p *referrals.Patient) { p.Phone = "+12" }, nil},
		{"longest phone", func(p *referrals.Patient) { p.Phone = "+123456789012345" }, nil},
		{"phone without plus", func(p *referrals.Patient) { p.Phone = "4155550123" }, map[string]string{"patient.phone": phoneMsg}},
		{"phone with spaces", func(p *referrals.Patient) { p.Phone = "+1 415 555 0123" }, map[string]string{"patient.phone": phoneMsg}},
		{"phone starting 0", func(p *referrals.Patient) { p.Phone = "+0415555012" }, map[string]string{"patient.phone": phoneMsg}},
		{"phone of 16 digits", func(p *referrals.Patient) { p.Phone = "+1234567890123456" }, map[string]string{"patient.phone": phoneMsg}},
		{"phone of 1 digit", func(p *referrals.Patient) { p.Phone = "+1" }, map[string]string{"patient.phone": phoneMsg}},
		{"US ZIP+4", func(p *referrals.Patient) { p.PostalCode = "94103-1234" }, nil},
		{"postal code of 20", func(p *referrals.Patient) { p.PostalCode = strings.Repeat("9", 20) }, nil},
		{"postal code of 21", func(p *referrals.Patient) { p.PostalCode = strings.Repeat("9", 21) }, map[string]string{"patient.postalCode": postalMsg}},
		{"postal code punctuation", func(p *referrals.Patient) { p.PostalCode = "941#03" }, map[string]string{"patient.postalCode": postalMsg}},
		{"postal code non-ASCII", func(p *referrals.Patient) { p.PostalCode = "ÄB1" }, map[string]string{"patient.postalCode": postalMsg}},
		{"several bad fields reported together", func(p *referrals.Patient) {
			p.DateOfBirth, p.Gender, p.Phone = "04/12/1980", "F", "555"
		}, map[string]string{"patient.dateOfBirth": formatMsg, "patient.gender": genderMsg, "patient.phone": phoneMsg}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := validPatient()
			tt.edit(&p)
			var e fieldErrors
			e.patient(p, testToday)
			checkErrs(t, e, tt.want)
		})
	}
}

func TestGendersIsAFreshSlice(t *testing.T) {
	g := Genders()
	g[0] = "mutated"
	if Genders()[0] != GenderFemale {
		t.Error("Genders shares its backing array with callers")
	}
}

func TestValidateReferral(t *testing.T) {
	tests := []struct {
		name      string
		req       referralRequest
		wantTrial string
		want      map[string]string
	}{
		{"by trialId", referralRequest{TrialID: "T-100", Patient: validPatient()}, "T-100", nil},
		{"by altTrialId", referralRequest{TrialID: "ALT-100", Patient: validPatient()}, "T-100", nil},
		{"unknown trial", referralRequest{TrialID: "T-999", Patient: validPatient()}, "",
			map[string]string{"trialId": `no trial has trialId or altTrialId "T-999"`}},
		{"ids are case-sensitive", referralRequest{TrialID: "t-100", Patient: validPatient()}, "",
			map[string]string{"trialId": `no trial has trialId or altTrialId "t-100"`}},
		{"inactive trial", referralRequest{TrialID: "T-200", Patient: validPatient()}, "",
			map[string]string{"trialId": `trial "T-200" is not active`}},
		{"not accepting, by altTrialId", referralRequest{TrialID: "ALT-300", Patient: validPatient()}, "",
			map[string]string{"trialId": `trial "ALT-300" is not accepting referrals`}},
		{"missing trialId", referralRequest{Patient: validPatient()}, "", map[string]string{"trialId": "required"}},
		{"notes of 2000", referralRequest{TrialID: "T-100", Patient: validPatient(), Notes: strings.Repeat("ñ", 2000)}, "T-100", nil},
		{"notes of 2001", referralRequest{TrialID: "T-100", Patient: validPatient(), Notes: strings.Repeat("n", 2001)}, "T-100",
			map[string]string{"notes": "must be at most 2000 characters, got 2001"}},
		{"everything missing", referralRequest{}, "", map[string]string{
			"trialId": "required", "patient.firstName": "required", "patient.lastName": "required",
			"patient.dateOfBirth": "required", "patient.gender": genderRequired,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			trial, errs := validateReferral(tt.req, testToday, testTrials())
			if trial != tt.wantTrial {
				t.Errorf("canonical trial = %q, want %q", trial, tt.wantTrial)
			}
			checkErrs(t, errs, tt.want)
		})
	}
}

func TestValidateReferralReportsAllInFieldOrder(t *testing.T) {
	p := validPatient()
	p.DateOfBirth, p.Gender = "1980-02-30", "F"
	_, errs := validateReferral(referralRequest{TrialID: "T-200", Patient: p}, testToday, testTrials())
	want := []reply.FieldError{
		{Field: "trialId", Message: `trial "T-200" is not active`},
		{Field: "patient.dateOfBirth", Message: "is not a real calendar date"},
		{Field: "patient.gender", Message: `must be one of "female", "male", "other", "unknown" (exact, lowercase)`},
	}
	if !slices.Equal(errs, want) {
		t.Errorf("errors = %v\nwant    %v", errs, want)
	}
}

func validQualified() qualifiedReferralRequest {
	return qualifiedReferralRequest{ExternalSourceID: "ext-1", Patient: validPatient()}
}

func codings(n int) []referrals.Coding {
	cs := make([]referrals.Coding, n)
	for i := range cs {
		cs[i] = referrals.Coding{Code: fmt.Sprint("C", i)}
	}
	return cs
}

func TestValidateQualifiedReferral(t *testing.T) {
	const (
		charsMsg   = "must contain only letters, digits, '.', '_', ':' and '-'"
		dotsMsg    = "must not be '.' or '..': as a URL path segment it names another path, so the record could not be read back"
		countryMsg = "must be an ISO 3166-1 alpha-2 code: two uppercase letters, e.g. US"
	)
	long := strings.Repeat("x", 201)
	tests := []struct {
		name      string
		edit      func(*qualifiedReferralRequest)
		wantTrial string
		want      map[string]string
	}{
		{"minimal", func(*qualifiedReferralRequest) {}, "", nil},
		{"complete", func(q *qualifiedReferralRequest) {
			q.TrialID = "ALT-100"
			q.Address = &referrals.Address{Line1: "1 Main St", City: "Springfield", Country: "US", PostalCode: "any format ##"}
			q.Conditions = []referrals.Coding{{Code: "E11.9", System: "ICD-10", Display: "Type 2 diabetes"}}
			q.Medications = codings(50)
			q.Qualification = &referrals.Qualification{QualifiedOn: "2025-11-04", CriteriaMet: []string{"a1c>7"}, ScreenerName: "Dr. Who"}
		}, "T-100", nil},
		{"externalSourceId of every allowed character", func(q *qualifiedReferralRequest) { q.ExternalSourceID = "Az09._:-" }, "", nil},
		{"externalSourceId of 64", func(q *qualifiedReferralRequest) { q.ExternalSourceID = strings.Repeat("a", 64) }, "", nil},
		{"externalSourceId of 65", func(q *qualifiedReferralRequest) { q.ExternalSourceID = strings.Repeat("a", 65) }, "",
			map[string]string{"externalSourceId": "must be at most 64 characters, got 65"}},
		{"externalSourceId missing", func(q *qualifiedReferralRequest) { q.ExternalSourceID = "" }, "", map[string]string{"externalSourceId": "required"}},
		{"externalSourceId blank", func(q *qualifiedReferralRequest) { q.ExternalSourceID = "  " }, "", map[string]string{"externalSourceId": "required"}},
		{"externalSourceId with space", func(q *qualifiedReferralRequest) { q.ExternalSourceID = "ext 1" }, "", map[string]string{"externalSourceId": charsMsg}},
		{"externalSourceId with slash", func(q *qualifiedReferralRequest) { q.ExternalSourceID = "ext/1" }, "", map[string]string{"externalSourceId": charsMsg}},
		{"externalSourceId '.'", func(q *qualifiedReferralRequest) { q.ExternalSourceID = "." }, "", map[string]string{"externalSourceId": dotsMsg}},
		{"externalSourceId '..'", func(q *qualifiedReferralRequest) { q.ExternalSourceID = ".." }, "", map[string]string{"externalSourceId": dotsMsg}},
		{"externalSourceId '...'", func(q *qualifiedReferralRequest) { q.ExternalSourceID = "..." }, "", nil},
		{"externalSourceId '.a'", func(q *qualifiedReferralRequest) { q.ExternalSourceID = ".a" }, "", nil},
		{"externalSourceId non-ASCII", func(q *qualifiedReferralRequest) { q.ExternalSourceID = "éxt" }, "", map[string]string{"externalSourceId": charsMsg}},
		{"unknown trial", func(q *qualifiedReferralRequest) { q.TrialID = "nope" }, "",
			map[string]string{"trialId": `no trial has trialId or altTrialId "nope"`}},
		{"not-accepting trial", func(q *qualifiedReferralRequest) { q.TrialID = "T-300" }, "",
			map[string]string{"trialId": `trial "T-300" is not accepting referrals`}},
		{"patient checked", func(q *qualifiedReferralRequest) { q.Patient.Gender = "M" }, "",
			map[string]string{"patient.gender": `must be one of "female", "male", "other", "unknown" (exact, lowercase)`}},
		{"country lowercase", func(q *qualifiedReferralRequest) { q.Address = &referrals.Address{Country: "us"} }, "", map[string]string{"address.country": countryMsg}},
		{"country alpha-3", func(q *qualifiedReferralRequest) { q.Address = &referrals.Address{Country: "USA"} }, "", map[string]string{"address.country": countryMsg}},
		{"address fields too long", func(q *qualifiedReferralRequest) {
			q.Address = &referrals.Address{Line1: long, Line2: long, City: long, State: long, PostalCode: long}
		}, "", map[string]string{
			"address.line1": "must be at most 200 characters, got 201", "address.line2": "must be at most 200 characters, got 201",
			"address.city": "must be at most 200 characters, got 201", "address.state": "must be at most 200 characters, got 201",
			"address.postalCode": "must be at most 200 characters, got 201",
		}},
		{"coding problems", func(q *qualifiedReferralRequest) {
			q.Conditions = []referrals.Coding{{Code: "ok"}, {Code: " ", System: long}}
			q.Medications = []referrals.Coding{{Display: long}}
		}, "", map[string]string{
			"conditions[1].code": "required", "conditions[1].system": "must be at most 200 characters, got 201",
			"medications[0].code": "required", "medications[0].display": "must be at most 200 characters, got 201",
		}},
		{"51 conditions", func(q *qualifiedReferralRequest) { q.Conditions = codings(51) }, "",
			map[string]string{"conditions": "must have at most 50 entries, got 51"}},
		{"entries past the limit are not checked one by one", func(q *qualifiedReferralRequest) {
			q.Medications = append(codings(50), make([]referrals.Coding, 1000)...)
		}, "", map[string]string{"medications": "must have at most 50 entries, got 1050"}},
		{"qualification problems", func(q *qualifiedReferralRequest) {
			q.Qualification = &referrals.Qualification{QualifiedOn: "11/01/2025", CriteriaMet: []string{"ok", "", " "}, ScreenerName: long}
		}, "", map[string]string{
			"qualification.qualifiedOn":    "must be a date in the format YYYY-MM-DD",
			"qualification.criteriaMet[1]": "must not be empty", "qualification.criteriaMet[2]": "must not be empty",
			"qualification.screenerName": "must be at most 200 characters, got 201",
		}},
		{"qualifiedOn in the future", func(q *qualifiedReferralRequest) {
			q.Qualification = &referrals.Qualification{QualifiedOn: "2025-11-05"}
		}, "",
			map[string]string{"qualification.qualifiedOn": futureMessage}},
		{"qualifiedOn not a real date", func(q *qualifiedReferralRequest) {
			q.Qualification = &referrals.Qualification{QualifiedOn: "2025-02-29"}
		}, "",
			map[string]string{"qualification.qualifiedOn": "is not a real calendar date"}},
		{"qualifiedOn has no lower bound", func(q *qualifiedReferralRequest) {
			q.Qualification = &referrals.Qualification{QualifiedOn: "1850-01-01"}
		}, "", nil},
		{"60 criteria, blanks past the limit not checked one by one", func(q *qualifiedReferralRequest) {
			q.Qualification = &referrals.Qualification{CriteriaMet: append(slices.Repeat([]string{"c"}, 50), make([]string, 10)...)}
		}, "", map[string]string{"qualification.criteriaMet": "must have at most 50 entries, got 60"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := validQualified()
			tt.edit(&q)
			trial, errs := validateQualifiedReferral(q, testToday, testTrials())
			if trial != tt.wantTrial {
				t.Errorf("canonical trial = %q, want %q", trial, tt.wantTrial)
			}
			checkErrs(t, errs, tt.want)
		})
	}
}

// genderRequired is the message for a missing gender: it names the allowed
// values, so a partner learns them from the first error.
const genderRequired = `required: one of "female", "male", "other", "unknown" (exact, lowercase)`
