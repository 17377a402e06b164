package backend

import (
	"context"
	"fmt"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// recordStoreClients keeps the runtime clients of a sandbox that runs
// alone in its record store, so that they survive a restart on a --data
// file. It is the embedded idp.ClientStore; replicas use idp.RedisClients,
// which announces each change to the others in the same step.
type recordStoreClients struct {
	st store.Store
}

func (c recordStoreClients) PutClient(ctx context.Context, cl referrals.Client) error {
	return c.st.PutClient(ctx, cl)
}

func (c recordStoreClients) DeleteClient(ctx context.Context, id string) error {
	return c.st.DeleteClient(ctx, id)
}

func (c recordStoreClients) RuntimeClients(ctx context.Context) ([]referrals.Client, error) {
	return c.st.RuntimeClients(ctx)
}

// RecordStoreClients is the idp.ClientStore of a sandbox that runs alone:
// its runtime clients in its record store st.
func RecordStoreClients(st store.Store) idp.ClientStore { return recordStoreClients{st: st} }

// carryOverClients moves the runtime clients an earlier release kept in
// the record store into the shared mode's client store, once: each is put
// there (unless a client of its id is there already) and then deleted
// from the record store, so a client deleted later never comes back from
// it. A failure part way is reported, and the next start carries on.
func carryOverClients(ctx context.Context, from store.Store, to idp.ClientStore) error {
	legacy, err := from.RuntimeClients(ctx)
	if err != nil || len(legacy) == 0 {
		return err
	}
	current, err := to.RuntimeClients(ctx)
	if err != nil {
		return err
	}
	have := make(map[string]bool, len(current))
	for _, c := range current {
		have[c.ClientID] = true
	}
	for _, c := range legacy {
		if !have[c.ClientID] {
			if err := to.PutClient(ctx, c); err != nil {
				return fmt.Errorf("carry over runtime client %s: %w", c.ClientID, err)
			}
		}
		if err := from.DeleteClient(ctx, c.ClientID); err != nil {
			return fmt.Errorf("carry over runtime client %s: %w", c.ClientID, err)
		}
	}
	return nil
}
