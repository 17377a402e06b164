package partnerapi

import "github.com/referrals-sandbox/referrals-sandbox/referrals"

// referralRequest is the body of POST /api/v1/referrals/.
type referralRequest struct {
	// TrialID names the trial by trialId or altTrialId; the stored referral
	// carries the canonical trialId.
	TrialID string            `json:"trialId"`
	Patient referrals.Patient `json:"patient"`
	Notes   string            `json:"notes"`
}

// qualifiedReferralRequest is the body of POST /api/v1/referrals/qualified.
// Optional objects are pointers so an absent object is not validated as an
// empty one.
type qualifiedReferralRequest struct {
	// ExternalSourceID is the partner's own identifier of the referral and
	// the key it is read back by.
	ExternalSourceID string                   `json:"externalSourceId"`
	TrialID          string                   `json:"trialId"`
	Patient          referrals.Patient        `json:"patient"`
	Address          *referrals.Address       `json:"address"`
	Conditions       []referrals.Coding       `json:"conditions"`
	Medications      []referrals.Coding       `json:"medications"`
	Qualification    *referrals.Qualification `json:"qualification"`
}
