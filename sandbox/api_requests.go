package sandbox

import "github.com/referrals-sandbox/referrals-sandbox/fixtures"

// referralRequest is the body of POST /api/v1/referrals/.
type referralRequest struct {
	// TrialID names the trial by trialId or altTrialId; the stored referral
	// carries the canonical trialId.
	TrialID string           `json:"trialId"`
	Patient fixtures.Patient `json:"patient"`
	Notes   string           `json:"notes"`
}

// qualifiedReferralRequest is the body of POST /api/v1/referrals/qualified.
// Optional objects are pointers so an absent object is not validated as an
// empty one.
type qualifiedReferralRequest struct {
	// ExternalSourceID is the partner's own identifier of the referral and
	// the key it is read back by.
	ExternalSourceID string                  `json:"externalSourceId"`
	TrialID          string                  `json:"trialId"`
	Patient          fixtures.Patient        `json:"patient"`
	Address          *fixtures.Address       `json:"address"`
	Conditions       []fixtures.Coding       `json:"conditions"`
	Medications      []fixtures.Coding       `json:"medications"`
	Qualification    *fixtures.Qualification `json:"qualification"`
}
