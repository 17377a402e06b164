package partnerapi

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/contractdoc"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/request"
)

// recordKind is a kind of record: trial-based referrals, or qualified ones.
// A contract that takes over any operation of a kind shapes every answer of
// that kind, so a record reads back in one shape whichever way it came in.
type recordKind struct {
	create, list, get contractdoc.Operation
	members           []contractdoc.Member // the kind's sandbox-owned members
	items             string               // the built-in page member
}

var (
	referralKind = recordKind{contractdoc.CreateReferral, contractdoc.ListReferrals, contractdoc.GetReferral,
		[]contractdoc.Member{contractdoc.TrialID, contractdoc.OutcomesID, contractdoc.ClientID, contractdoc.Status, contractdoc.SubmittedAt}, "referrals"}
	qualifiedKind = recordKind{contractdoc.CreateQualified, contractdoc.ListQualified, contractdoc.GetQualified,
		[]contractdoc.Member{contractdoc.ExternalSourceID, contractdoc.TrialID, contractdoc.ClientID, contractdoc.Status, contractdoc.SubmittedAt, contractdoc.AuditTrail, contractdoc.AuditTrailTotal}, "qualifiedReferrals"}
)

// contractShapes is what a --contract changes: the operations it takes over
// and the shapes answers of each kind take. The zero value (no contract)
// changes nothing.
type contractShapes struct {
	doc    *contractdoc.Contract
	active map[contractdoc.Operation]bool // kinds with a taken-over operation, by their create operation
}

func newContractShapes(c *contractdoc.Contract) contractShapes {
	cs := contractShapes{doc: c, active: map[contractdoc.Operation]bool{}}
	for _, k := range []recordKind{referralKind, qualifiedKind} {
		for _, o := range []contractdoc.Operation{k.create, k.list, k.get} {
			if c.TakesOver(o) != nil {
				cs.active[k.create] = true
			}
		}
	}
	return cs
}

// takes returns the operation when the contract takes it over.
func (cs contractShapes) takes(o contractdoc.Operation) *contractdoc.Op {
	if cs.doc == nil {
		return nil
	}
	return cs.doc.TakesOver(o)
}

// shapes reports whether answers of kind k are shaped by the contract.
func (cs contractShapes) shapes(k recordKind) bool { return cs.active[k.create] }

// builtinOp is the built-in document's operation.
func builtinOp(o contractdoc.Operation) *contractdoc.Op {
	b, err := contractdoc.Builtin()
	if err != nil {
		return nil
	}
	return b.Op(o)
}

// recordShape is the shape a single record of kind k is answered in: the
// answering operation's own, else the contract's read, submission or
// listing item (one record, one shape), else the built-in document's.
func (cs contractShapes) recordShape(k recordKind, answering contractdoc.Operation) *contractdoc.Shape {
	for _, find := range []func(contractdoc.Operation) *contractdoc.Op{cs.doc.Op, builtinOp} {
		if op := find(answering); op != nil && op.Response != nil && answering != k.list {
			return op.Response
		}
		for _, o := range []contractdoc.Operation{k.get, k.create} {
			if op := find(o); op != nil && op.Response != nil {
				return op.Response
			}
		}
		if op := find(k.list); op != nil && op.Item != nil {
			return op.Item
		}
	}
	return contractdoc.OpenShape(k.members...)
}

// itemShape is the shape of a listing page of kind k, of each record in
// it, and the page member holding them: the contract's listing, else the
// built-in page of records in the contract's record shape.
func (cs contractShapes) itemShape(k recordKind) (*contractdoc.Shape, *contractdoc.Shape, string) {
	if op := cs.doc.Op(k.list); op != nil && op.Item != nil {
		return op.Response, op.Item, op.Items
	}
	return contractdoc.OpenShape(contractdoc.NextCursor), cs.recordShape(k, k.get), k.items
}

// renderReferral answers a referral in shape sh. A record stored without a
// submission (a built-in record: fixtures, or one submitted before the
// contract) offers its built-in members instead.
func renderReferral(sh *contractdoc.Shape, ref referrals.Referral) (map[string]any, error) {
	sub := ref.Submission
	if len(sub) == 0 {
		sub, _ = json.Marshal(ref) // a struct of strings always marshals
	}
	return sh.Render(sub, map[contractdoc.Member]any{
		contractdoc.TrialID: ref.TrialID, contractdoc.OutcomesID: ref.OutcomesID, contractdoc.ClientID: ref.ClientID,
		contractdoc.Status: ref.Status, contractdoc.SubmittedAt: ref.SubmittedAt,
	})
}

func renderQualified(sh *contractdoc.Shape, q referrals.QualifiedReferral) (map[string]any, error) {
	sub := q.Submission
	if len(sub) == 0 {
		var err error
		if sub, err = json.Marshal(q); err != nil {
			return nil, fmt.Errorf("render qualified referral %q: %w", q.ExternalSourceID, err)
		}
	}
	values := map[contractdoc.Member]any{
		contractdoc.ExternalSourceID: q.ExternalSourceID, contractdoc.ClientID: q.ClientID,
		contractdoc.Status: q.Status, contractdoc.SubmittedAt: q.SubmittedAt,
		contractdoc.AuditTrail: q.AuditTrail, contractdoc.AuditTrailTotal: q.AuditTrailTotal,
	}
	if q.TrialID != "" {
		values[contractdoc.TrialID] = q.TrialID
	}
	if q.AuditTrail == nil {
		values[contractdoc.AuditTrail] = []referrals.AuditEntry{}
	}
	return sh.Render(sub, values)
}

// writeReferral answers one referral: as the built-in struct, or shaped by
// the contract.
func (a *API) writeReferral(w http.ResponseWriter, r *http.Request, status int, answering contractdoc.Operation, ref referrals.Referral) {
	if !a.contract.shapes(referralKind) {
		reply.JSON(w, status, ref)
		return
	}
	body, err := renderReferral(a.contract.recordShape(referralKind, answering), ref)
	if err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	reply.JSON(w, status, body)
}

func (a *API) writeQualified(w http.ResponseWriter, r *http.Request, status int, answering contractdoc.Operation, q referrals.QualifiedReferral) {
	if !a.contract.shapes(qualifiedKind) {
		reply.JSON(w, status, q)
		return
	}
	body, err := renderQualified(a.contract.recordShape(qualifiedKind, answering), q)
	if err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	reply.JSON(w, status, body)
}

// writePage answers a listing shaped by the contract.
func writePage[T any](a *API, w http.ResponseWriter, r *http.Request, k recordKind, items []T, next string, render func(*contractdoc.Shape, T) (map[string]any, error)) {
	page, item, member := a.contract.itemShape(k)
	var cursor any
	if c := request.NextCursor(next); c != nil {
		cursor = *c
	}
	body, err := page.Render(nil, map[contractdoc.Member]any{contractdoc.NextCursor: cursor})
	if err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	rendered := make([]map[string]any, 0, len(items))
	for _, it := range items {
		m, err := render(item, it)
		if err != nil {
			a.reply.Fail(w, r, err)
			return
		}
		rendered = append(rendered, m)
	}
	body[member] = rendered
	reply.JSON(w, http.StatusOK, body)
}

// checkFixture holds a fixture record that carries a submission to the
// contract: only a contract that shapes its kind can answer it, and its
// submission must satisfy the request schema when the contract takes the
// submission over. entry counts from 0; problems collects what is wrong.
func (cs contractShapes) checkFixture(problems *fixtures.Problems, file string, entry int, k recordKind, submission json.RawMessage) {
	if !cs.shapes(k) {
		problems.Add(file, entry, "submission", "it carries a contract's submission: start the sandbox with that --contract")
		return
	}
	op := cs.takes(k.create)
	if op == nil {
		return
	}
	var v any
	if err := decodeNumbers(submission, &v); err != nil {
		problems.Add(file, entry, "submission", "%v", err)
		return
	}
	for _, fe := range op.Validate(v) {
		problems.Add(file, entry, "submission"+fe.Pointer, "%s", fe.Message)
	}
}

// ReferralRecord is ref as its partner reads it under --contract, or
// nil when the contract does not shape referrals.
func (a *API) ReferralRecord(ref referrals.Referral) (map[string]any, error) {
	if !a.contract.shapes(referralKind) {
		return nil, nil
	}
	return renderReferral(a.contract.recordShape(referralKind, contractdoc.GetReferral), ref)
}

// QualifiedRecord is ReferralRecord for qualified referrals.
func (a *API) QualifiedRecord(q referrals.QualifiedReferral) (map[string]any, error) {
	if !a.contract.shapes(qualifiedKind) {
		return nil, nil
	}
	return renderQualified(a.contract.recordShape(qualifiedKind, contractdoc.GetQualified), q)
}
