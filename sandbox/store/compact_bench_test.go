package store

import (
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// BenchmarkEncodeReferral encodes a generated referral as CreateReferral
// and EncodeSet store it, and reports the stored value's size
// (stored-B/record): the part of a record's memory the stored form decides.
func BenchmarkEncodeReferral(b *testing.B) {
	r := referrals.Referral{
		TrialID: "TRIAL-ONCO-002", OutcomesID: "2974bed8-bec1-40f6-80b6-c64b1da4ed99", ClientID: "sandbox-partner",
		Status: "rejected", SubmittedAt: "2025-12-02T00:00:01.201626Z",
		Patient: referrals.Patient{FirstName: "Eleanora", LastName: "Grant", DateOfBirth: "2003-06-13", Gender: "female",
			Email: "eleanora.grant79@example.com", Phone: "+14525550196", PostalCode: "64221"},
		Notes: "Automate part recovery rightfully.",
	}
	var value string
	for b.Loop() {
		var err error
		if _, value, err = encodeReferral(r); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(value)), "stored-B/record")
}
