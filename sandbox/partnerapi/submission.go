package partnerapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/contractdoc"
)

// submissionOf is the digest the journal keeps of what a referral was
// submitted for: its trial and its patient's names and date of birth, case
// folded. Two submissions with the same digest refer the same patient to
// the same trial, which is what the resubmits-safely check looks for after
// a lost answer. It is a digest so the journal never holds patient data.
func submissionOf(trialID string, p referrals.Patient) string {
	// Hashed from one buffer, on the stack for the usual short names, and
	// lower-cased rune by rune as strings.ToLower does, without a copy
	// of each part.
	var buf [256]byte
	b := buf[:0]
	for _, part := range []string{trialID, p.FirstName, p.LastName, p.DateOfBirth} {
		for _, r := range strings.TrimSpace(part) {
			b = utf8.AppendRune(b, unicode.ToLower(r))
		}
		b = append(b, 0)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// contractSubmissionOf is submissionOf for a contract's submission, whose
// patient members the sandbox cannot name: the trial (canonical) and every
// member of the submission but the identifiers the sandbox files it under
// (externalSourceId: a resubmission under a new one is still the same
// referral), in one canonical encoding, so member order and whitespace do
// not tell two sends apart.
func contractSubmissionOf(trialID string, value map[string]any, op *contractdoc.Op) string {
	rest := make(map[string]any, len(value))
	for name, v := range value {
		rest[name] = v
	}
	for _, name := range op.RequestMembers {
		delete(rest, name)
	}
	canonical, _ := json.Marshal(rest) // decoded JSON always marshals, keys sorted
	h := sha256.New()
	h.Write([]byte(trialID))
	h.Write([]byte{0})
	h.Write(canonical)
	return hex.EncodeToString(h.Sum(nil)[:12])
}
