package admin

import "github.com/referrals-sandbox/referrals-sandbox/referrals"

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

// adminReferral is ref as the admin API answers it.
func (a *API) adminReferral(ref referrals.Referral) (adminReferral, error) {
	out := adminReferral{Referral: ref}
	if a.cfg.Shapes.Referral == nil {
		return out, nil
	}
	var err error
	out.Record, err = a.cfg.Shapes.Referral(ref)
	return out, err
}

// adminQualified is q as the admin API answers it, with an empty audit
// trail shown as [].
func (a *API) adminQualified(q referrals.QualifiedReferral) (adminQualified, error) {
	q.AuditTrail = orEmpty(q.AuditTrail)
	out := adminQualified{QualifiedReferral: q}
	if a.cfg.Shapes.Qualified == nil {
		return out, nil
	}
	var err error
	out.Record, err = a.cfg.Shapes.Qualified(q)
	return out, err
}
