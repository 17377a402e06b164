package sandbox

import (
	"context"
	"fmt"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// seed loads the fixtures' records into an empty store. A store that already
// holds data (a --data file from an earlier run) is left as it is.
func seed(ctx context.Context, st store.Store, records *store.EncodedSet) error {
	empty, err := st.Empty(ctx)
	if err != nil {
		return fmt.Errorf("check store: %w", err)
	}
	if !empty {
		return nil
	}
	if err := store.SeedFrom(ctx, st, records); err != nil {
		return fmt.Errorf("load fixtures into the store: %w", err)
	}
	return nil
}

// checkFixtureRecords holds fixture records to the rules the API holds
// submissions to, so a hand-edited fixture file cannot seed data the API
// would refuse. Errors name the file, the entry (counted from 1, as the
// fixtures loader counts) and the field.
func checkFixtureRecords(set *fixtures.Set, now time.Time, contract contractShapes) error {
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
