package sandbox

import (
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/contractdoc"
)

// adminReferral is a referral as the admin API answers it: as stored (the
// sandbox's members, and under a --contract the submission as sent), plus,
// when a contract shapes referrals, the record as its partner reads it.
type adminReferral struct {
	referrals.Referral
	Record map[string]any `json:"record,omitempty"`
}

// adminQualified is adminReferral for qualified referrals.
type adminQualified struct {
	referrals.QualifiedReferral
	Record map[string]any `json:"record,omitempty"`
}

func (s *Server) adminReferral(ref referrals.Referral) (adminReferral, error) {
	out := adminReferral{Referral: ref}
	if !s.contract.shapes(referralKind) {
		return out, nil
	}
	var err error
	out.Record, err = renderReferral(s.contract.recordShape(referralKind, contractdoc.GetReferral), ref)
	return out, err
}

func (s *Server) adminQualified(q referrals.QualifiedReferral) (adminQualified, error) {
	q.AuditTrail = orEmpty(q.AuditTrail)
	out := adminQualified{QualifiedReferral: q}
	if !s.contract.shapes(qualifiedKind) {
		return out, nil
	}
	var err error
	out.Record, err = renderQualified(s.contract.recordShape(qualifiedKind, contractdoc.GetQualified), q)
	return out, err
}
