package contractdoc

import "slices"

// Member is a record member the sandbox owns: it sets the value, whatever
// the submission held. A response schema gets a member when it has a
// property of that name, or a property annotated `x-sandbox: <member>`.
type Member string

// The sandbox-owned members.
const (
	SubmittedAt      Member = "submittedAt"
	Status           Member = "status"
	OutcomesID       Member = "outcomesId"
	ClientID         Member = "clientId"
	TrialID          Member = "trialId"
	ExternalSourceID Member = "externalSourceId"
	AuditTrail       Member = "auditTrail"
	AuditTrailTotal  Member = "auditTrailTotal"
	NextCursor       Member = "nextCursor"
)

// Annotation is the schema extension that names the sandbox member a
// property holds.
const Annotation = "x-sandbox"

// Members lists every sandbox-owned member.
func Members() []Member {
	return []Member{SubmittedAt, Status, OutcomesID, ClientID, TrialID, ExternalSourceID, AuditTrail, AuditTrailTotal, NextCursor}
}

func knownMember(s string) bool { return slices.Contains(Members(), Member(s)) }
