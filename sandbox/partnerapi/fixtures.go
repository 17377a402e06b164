package partnerapi

import "github.com/referrals-sandbox/referrals-sandbox/fixtures"

// CheckFixtures holds fixture records to the rules the API holds
// submissions to, so a hand-edited fixture file cannot seed data the API
// would refuse. Errors name the file, the entry (counted from 1, as the
// fixtures loader counts) and the field.
func (a *API) CheckFixtures(set *fixtures.Set) error {
	now, contract := a.clocks.Now(""), a.contract
	var problems fixtures.Problems
	for i, ref := range set.Referrals {
		if len(ref.Submission) > 0 {
			contract.checkFixture(&problems, fixtures.ReferralsFile, i, referralKind, ref.Submission)
			continue
		}
		var fieldErrs fieldErrors
		fieldErrs.patient(ref.Patient, now)
		for _, fe := range fieldErrs {
			problems.Add(fixtures.ReferralsFile, i, fe.Field, "%s", fe.Message)
		}
	}
	for i, q := range set.QualifiedReferrals {
		if len(q.Submission) > 0 {
			contract.checkFixture(&problems, fixtures.QualifiedReferralsFile, i, qualifiedKind, q.Submission)
			continue
		}
		req := qualifiedReferralRequest{
			ExternalSourceID: q.ExternalSourceID, TrialID: q.TrialID, Patient: q.Patient, Address: q.Address,
			Conditions: q.Conditions, Medications: q.Medications, Qualification: q.Qualification,
		}
		// Fixtures may hold referrals to trials that have since closed.
		req.TrialID = ""
		_, fieldErrs := validateQualifiedReferral(req, now, set.Trials)
		for _, fe := range fieldErrs {
			problems.Add(fixtures.QualifiedReferralsFile, i, fe.Field, "%s", fe.Message)
		}
	}
	return problems.Err()
}
