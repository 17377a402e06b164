// Package lifecycle moves qualified referrals' statuses: the one place a
// status changes together with the audit entry that explains it (the admin
// API's moves and the personas' both go through ChangeStatus), and the
// lifecycle personas' moves, applied when a record is read (Settler).
//
// It sits below the partner API and the admin API, which both read
// qualified referrals, so that neither depends on the other.
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package lifecycle

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// Lifecycle personas (fixtures.Lifecycles) move on their own: a qualified
// referral of a persona patient takes the status moves due on its client's
// clock when it is next read, listed or shown in the console, before the
// answer is written. Applying moves when read, rather than from a timer,
// makes a clock move take effect at the very next read, on every replica,
// and needs nothing running in the background.
//
// Each move goes through ChangeStatus inside the store's update, as the
// admin API's moves do, so the returned status is always the one the
// audit trail's last status-changed entry names. The update decides from
// the stored status which moves are still due: when two replicas settle one
// record at once, the store runs the loser's function again on the winner's
// record, which finds nothing left to do, so each move is written once.

// Settler applies the lifecycle personas' due moves to the records it is
// given, in Records, on each client's clock in Clocks.
type Settler struct {
	// Records is the store the moves are written to.
	Records store.Store
	// Clocks say, per client, how long ago a record was submitted.
	Clocks *clock.PerClient
}

// Settle returns q after the lifecycle moves now due, stored with their
// audit entries (stamped now, by requestID). A record that is no persona,
// or has nothing due, is returned as it is without a write. A store error
// is returned, never swallowed.
func (s Settler) Settle(ctx context.Context, q referrals.QualifiedReferral, requestID string) (referrals.QualifiedReferral, error) {
	life, ok := fixtures.LifecycleOf(q.Patient)
	if !ok {
		return q, nil
	}
	elapsed, err := s.sinceSubmitted(q)
	if err != nil || len(life.Due(q.Status, elapsed)) == 0 {
		return q, err
	}
	settled, err := s.Records.UpdateQualified(ctx, q.ClientID, q.ExternalSourceID, func(rec *referrals.QualifiedReferral) error {
		elapsed, err := s.sinceSubmitted(*rec)
		if err != nil {
			return err
		}
		at := s.Clocks.Now(rec.ClientID)
		for _, step := range life.Due(rec.Status, elapsed) {
			if err := ChangeStatus(rec, Change{
				To: step.Status, At: at, Actor: fixtures.PersonaActor, RequestID: requestID, Reason: step.Reason,
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return q, fmt.Errorf("persona %s: move %q: %w", life.Name, q.ExternalSourceID, err)
	}
	return settled, nil
}

// SettleAll returns items with every record settled. The slice it was
// given is left alone (a store may share it between readers); a copy is
// made only when a record moved.
func (s Settler) SettleAll(ctx context.Context, items []referrals.QualifiedReferral, requestID string) ([]referrals.QualifiedReferral, error) {
	out := items
	for i := range items {
		settled, err := s.Settle(ctx, items[i], requestID)
		if err != nil {
			return nil, err
		}
		if settled.Status != items[i].Status {
			if &out[0] == &items[0] {
				out = slices.Clone(items)
			}
			out[i] = settled
		}
	}
	return out, nil
}

// sinceSubmitted is how long ago, on its client's clock, q was submitted.
func (s Settler) sinceSubmitted(q referrals.QualifiedReferral) (time.Duration, error) {
	at, err := time.Parse(time.RFC3339Nano, q.SubmittedAt)
	if err != nil {
		return 0, fmt.Errorf("qualified referral %q: submittedAt %q: %w", q.ExternalSourceID, q.SubmittedAt, err)
	}
	return s.Clocks.Now(q.ClientID).Sub(at), nil
}
