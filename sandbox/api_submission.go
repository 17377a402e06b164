package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
)

// submissionOf is the digest the journal keeps of what a referral was
// submitted for: its trial and its patient's names and date of birth, case
// folded. Two submissions with the same digest refer the same patient to
// the same trial, which is what the resubmits-safely check looks for after
// a lost answer. It is a digest so the journal never holds patient data.
func submissionOf(trialID string, p fixtures.Patient) string {
	h := sha256.New()
	for _, part := range []string{trialID, p.FirstName, p.LastName, p.DateOfBirth} {
		h.Write([]byte(strings.ToLower(strings.TrimSpace(part))))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// noteSubmission records the submission r made, for its journal entry.
func noteSubmission(r *http.Request, trialID string, p fixtures.Patient) {
	infoFrom(r.Context()).submission = submissionOf(trialID, p)
}
