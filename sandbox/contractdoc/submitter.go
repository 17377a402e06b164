package contractdoc

import (
	"encoding/json"

	"github.com/brianvoe/gofakeit/v7"
)

// Submitter draws fixture submissions from the contract (fixtures generate
// --contract): for each kind of record whose submission operation the
// contract takes over, a submission its request schema accepts.
func (c *Contract) Submitter() *Submitter { return &Submitter{c: c} }

// Submitter implements fixtures.Submitter for a contract.
type Submitter struct{ c *Contract }

// Referral draws a trial-based referral's submission naming trialID, or
// nil when the contract keeps the built-in shape.
func (s *Submitter) Referral(f *gofakeit.Faker, trialID string) (json.RawMessage, error) {
	op := s.c.TakesOver(CreateReferral)
	if op == nil {
		return nil, nil
	}
	return op.Example(f, map[Member]string{TrialID: trialID})
}

// Qualified draws a qualified referral's submission.
func (s *Submitter) Qualified(f *gofakeit.Faker, externalSourceID, trialID string) (json.RawMessage, error) {
	op := s.c.TakesOver(CreateQualified)
	if op == nil {
		return nil, nil
	}
	return op.Example(f, map[Member]string{ExternalSourceID: externalSourceID, TrialID: trialID})
}
