package partnerapi

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/referrals-sandbox/referrals-sandbox/internal/lazyregexp"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
)

// Limits and patterns of request fields. They are exported so the OpenAPI
// document and docs/api.md can state the same rules the validator enforces.
const (
	// MaxNameLength bounds patient.firstName and patient.lastName, in characters.
	MaxNameLength = 100
	// MaxNotesLength bounds a referral's notes, in characters.
	MaxNotesLength = 2000
	// MaxExternalSourceIDLength bounds externalSourceId (see
	// ExternalSourceIDPattern, which repeats it).
	MaxExternalSourceIDLength = 64
	// MaxEmailLength bounds patient.email (the SMTP path limit).
	MaxEmailLength = 254
	// MaxTextLength bounds address fields, coding system and display, and
	// qualification.screenerName, in characters.
	MaxTextLength = 200
	// MaxCodings bounds the entries of conditions and of medications.
	MaxCodings = 50
	// MaxCriteria bounds the entries of qualification.criteriaMet.
	MaxCriteria = 50
	// EarliestDateOfBirth is the earliest accepted patient.dateOfBirth.
	EarliestDateOfBirth = "1900-01-01"
	// PhonePattern is E.164: a plus, then 2 to 15 digits, the first not 0.
	PhonePattern = `^\+[1-9][0-9]{1,14}$`
	// PostalCodePattern allows 1 to 20 letters, digits, spaces and hyphens.
	PostalCodePattern = `^[A-Za-z0-9 -]{1,20}$`
	// ExternalSourceIDPattern allows 1 to 64 of A-Z a-z 0-9 . _ : -, except
	// "." and "..": as a path segment they would name another path, so the
	// record could never be read back at its Location. (Go's regexp has no
	// lookahead, hence the three branches.)
	ExternalSourceIDPattern = `^([A-Za-z0-9_:-][A-Za-z0-9._:-]{0,63}|\.[A-Za-z0-9_:-][A-Za-z0-9._:-]{0,62}|\.\.[A-Za-z0-9._:-]{1,62})$`
	// EmailPattern is patient.email, as the OpenAPI document states it next
	// to format: email: a dot-atom local part, @, and a domain of at least
	// two labels ending in letters. It rejects what validators of format
	// email reject (a@b, x@localhost, a@-example.com, quoted local parts),
	// so the server and its document agree on every address.
	EmailPattern = "^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}$"
	// CountryPattern is an ISO 3166-1 alpha-2 code's shape.
	CountryPattern = `^[A-Z]{2}$`
)

// Genders of patient.gender. Matching is exact: lowercase only.
const (
	GenderFemale  = "female"
	GenderMale    = "male"
	GenderOther   = "other"
	GenderUnknown = "unknown"
)

// Genders returns the accepted values of patient.gender, in the order the
// messages and documentation list them. The slice is the caller's to keep.
func Genders() []string {
	return []string{GenderFemale, GenderMale, GenderOther, GenderUnknown}
}

// Each compiled once, when first used (see lazyregexp); regexps are safe
// for concurrent use and never change.
var (
	phoneRE            = lazyregexp.New(PhonePattern)
	postalCodeRE       = lazyregexp.New(PostalCodePattern)
	externalSourceIDRE = lazyregexp.New(ExternalSourceIDPattern)
	countryRE          = lazyregexp.New(CountryPattern)
	emailRE            = lazyregexp.New(EmailPattern)
)

// fieldErrors collects every invalid field of one request.
type fieldErrors []reply.FieldError

func (e *fieldErrors) add(field, format string, args ...any) {
	*e = append(*e, reply.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

// validateReferral checks a trial-based referral. It returns the canonical
// trialId of the named trial when that trial accepts referrals, and every
// invalid field.
func validateReferral(req referralRequest, today time.Time, trials []referrals.Trial) (canonicalTrialID string, errs []reply.FieldError) {
	var e fieldErrors
	if blank(req.TrialID) {
		e.add("trialId", "required")
	} else {
		canonicalTrialID = e.trial("trialId", req.TrialID, trials)
	}
	e.patient(req.Patient, today)
	e.maxLength("notes", req.Notes, MaxNotesLength)
	return canonicalTrialID, e
}

// validateQualifiedReferral checks a pre-qualified referral. trialId is
// optional there; when given it must name a trial that accepts referrals,
// and its canonical trialId is returned.
func validateQualifiedReferral(req qualifiedReferralRequest, today time.Time, trials []referrals.Trial) (canonicalTrialID string, errs []reply.FieldError) {
	var e fieldErrors
	switch id := req.ExternalSourceID; {
	case blank(id):
		e.add("externalSourceId", "required")
	case utf8.RuneCountInString(id) > MaxExternalSourceIDLength:
		e.add("externalSourceId", "must be at most %d characters, got %d", MaxExternalSourceIDLength, utf8.RuneCountInString(id))
	case id == "." || id == "..":
		e.add("externalSourceId", "must not be '.' or '..': as a URL path segment it names another path, so the record could not be read back")
	case !externalSourceIDRE().MatchString(id):
		e.add("externalSourceId", "must contain only letters, digits, '.', '_', ':' and '-'")
	}
	if req.TrialID != "" {
		canonicalTrialID = e.trial("trialId", req.TrialID, trials)
	}
	e.patient(req.Patient, today)
	if a := req.Address; a != nil {
		e.maxLength("address.line1", a.Line1, MaxTextLength)
		e.maxLength("address.line2", a.Line2, MaxTextLength)
		e.maxLength("address.city", a.City, MaxTextLength)
		e.maxLength("address.state", a.State, MaxTextLength)
		e.maxLength("address.postalCode", a.PostalCode, MaxTextLength)
		if a.Country != "" && !countryRE().MatchString(a.Country) {
			e.add("address.country", "must be an ISO 3166-1 alpha-2 code: two uppercase letters, e.g. US")
		}
	}
	e.codings("conditions", req.Conditions)
	e.codings("medications", req.Medications)
	if q := req.Qualification; q != nil {
		if q.QualifiedOn != "" {
			e.date("qualification.qualifiedOn", q.QualifiedOn, today, "")
		}
		e.maxEntries("qualification.criteriaMet", len(q.CriteriaMet), MaxCriteria)
		for i, c := range q.CriteriaMet[:min(len(q.CriteriaMet), MaxCriteria)] {
			if blank(c) {
				e.add(fmt.Sprintf("qualification.criteriaMet[%d]", i), "must not be empty")
			}
		}
		e.maxLength("qualification.screenerName", q.ScreenerName, MaxTextLength)
	}
	return canonicalTrialID, e
}

// trial resolves id against trialId, then altTrialId, and returns the
// canonical trialId if the trial takes referrals. Unknown, inactive and
// not-accepting trials are told apart so a partner knows which to fix.
func (e *fieldErrors) trial(field, id string, trials []referrals.Trial) string {
	t, ok := resolveTrial(id, trials)
	switch {
	case !ok:
		e.add(field, "no trial has trialId or altTrialId %q", id)
	case !t.Active:
		e.add(field, "trial %q is not active", id)
	case !t.AcceptingReferrals:
		e.add(field, "trial %q is not accepting referrals", id)
	default:
		return t.TrialID
	}
	return ""
}

// resolveTrial finds the trial id names. A trialId match wins over an
// altTrialId match, so one trial's alternate id cannot shadow another's
// primary id.
func resolveTrial(id string, trials []referrals.Trial) (referrals.Trial, bool) {
	for _, t := range trials {
		if t.TrialID == id {
			return t, true
		}
	}
	for _, t := range trials {
		if t.AltTrialID == id {
			return t, true
		}
	}
	return referrals.Trial{}, false
}

// patient checks the member "patient" of a submission or fixture record.
func (e *fieldErrors) patient(p referrals.Patient, today time.Time) {
	const prefix = "patient" // constant, so no field name is built per request
	e.name(prefix+".firstName", p.FirstName)
	e.name(prefix+".lastName", p.LastName)
	if blank(p.DateOfBirth) {
		e.add(prefix+".dateOfBirth", "required")
	} else {
		e.date(prefix+".dateOfBirth", p.DateOfBirth, today, EarliestDateOfBirth)
	}
	switch {
	case blank(p.Gender):
		e.add(prefix+".gender", "required: one of %s (exact, lowercase)", quoteList(Genders()))
	case !isGender(p.Gender):
		e.add(prefix+".gender", "must be one of %s (exact, lowercase)", quoteList(Genders()))
	}
	if p.Email != "" {
		if n := utf8.RuneCountInString(p.Email); n > MaxEmailLength {
			e.add(prefix+".email", "must be at most %d characters, got %d", MaxEmailLength, n)
		} else if !plainEmail(p.Email) {
			e.add(prefix+".email", "must be a plain email address such as name@example.com: no display name, quotes or angle brackets, and a domain name with a dot (not localhost)")
		}
	}
	if p.Phone != "" && !phoneRE().MatchString(p.Phone) {
		e.add(prefix+".phone", "must be an E.164 phone number: + and 2 to 15 digits, the first not 0, no spaces (e.g. +14155550123)")
	}
	if p.PostalCode != "" && !postalCodeRE().MatchString(p.PostalCode) {
		e.add(prefix+".postalCode", "must be 1 to 20 letters, digits, spaces or hyphens")
	}
}

// name checks a required person name. Names are stored as sent (nothing is
// trimmed); a whitespace-only name counts as missing.
func (e *fieldErrors) name(field, v string) {
	if blank(v) {
		e.add(field, "required")
		return
	}
	e.maxLength(field, v, MaxNameLength)
}

// date checks a YYYY-MM-DD calendar date that must not lie after today's
// date in UTC, nor before earliest when earliest is set.
func (e *fieldErrors) date(field, v string, today time.Time, earliest string) {
	if !dateShaped(v) {
		e.add(field, "must be a date in the format YYYY-MM-DD")
		return
	}
	if _, err := time.Parse(referrals.DateLayout, v); err != nil {
		e.add(field, "is not a real calendar date")
		return
	}
	var buf [len(referrals.DateLayout)]byte // today's date, on the stack
	todayDate := today.UTC().AppendFormat(buf[:0], referrals.DateLayout)
	// Zero-padded YYYY-MM-DD dates order the same as strings and as dates.
	switch {
	case v > string(todayDate):
		e.add(field, "must not be in the future (today is %s UTC)", string(todayDate)) // a copy: buf stays on the stack
	case earliest != "" && v < earliest:
		e.add(field, "must not be before %s", earliest)
	}
}

// codings checks a conditions or medications array.
func (e *fieldErrors) codings(field string, cs []referrals.Coding) {
	e.maxEntries(field, len(cs), MaxCodings)
	// Entries past the limit are not checked one by one: the count error
	// already rejects the request, and it keeps the error list bounded.
	for i, c := range cs[:min(len(cs), MaxCodings)] {
		// The entry's path is spelled only for an error.
		if blank(c.Code) || utf8.RuneCountInString(c.System) > MaxTextLength || utf8.RuneCountInString(c.Display) > MaxTextLength {
			at := fmt.Sprintf("%s[%d]", field, i)
			if blank(c.Code) {
				e.add(at+".code", "required")
			}
			e.maxLength(at+".system", c.System, MaxTextLength)
			e.maxLength(at+".display", c.Display, MaxTextLength)
		}
	}
}

func (e *fieldErrors) maxLength(field, v string, limit int) {
	if n := utf8.RuneCountInString(v); n > limit {
		e.add(field, "must be at most %d characters, got %d", limit, n)
	}
}

func (e *fieldErrors) maxEntries(field string, n, limit int) {
	if n > limit {
		e.add(field, "must have at most %d entries, got %d", limit, n)
	}
}

// blank reports whether s is empty or only whitespace.
func blank(s string) bool { return strings.TrimFunc(s, unicode.IsSpace) == "" }

// dateShaped reports whether v is exactly four, two and two ASCII digits
// separated by hyphens; time.Parse alone would accept no other shape either,
// but this lets the message tell a format error from an impossible date.
func dateShaped(v string) bool {
	if len(v) != len(referrals.DateLayout) {
		return false
	}
	for i := range len(v) {
		if i == 4 || i == 7 {
			if v[i] != '-' {
				return false
			}
		} else if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

func isGender(g string) bool {
	for _, allowed := range Genders() {
		if g == allowed {
			return true
		}
	}
	return false
}

// plainEmail reports whether s is a bare address of EmailPattern, the rule
// the OpenAPI document states.
func plainEmail(s string) bool { return emailRE().MatchString(s) }

// quoteList renders values as "a", "b", "c".
func quoteList(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(quoted, ", ")
}
