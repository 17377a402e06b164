package idp

import (
	"context"
	"fmt"
	"slices"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// SyncClients reloads the runtime clients from the store when version
// differs from the one loaded last: replicas sharing one store call it per
// request with the version the store bumps with every change
// (RedisClientsVersionKey). The same version costs nothing; at most
// MaxRuntimeClients are reloaded.
func (p *Provider) SyncClients(ctx context.Context, version int64) error {
	return p.clients.reload(ctx, version, p.cfg.Environment)
}

// reload replaces the runtime clients with the store's ones when version is
// not the one loaded. Clients that disappeared are remembered as deleted,
// so their tokens are refused with that reason, as on the replica that
// deleted them.
func (r *registry) reload(ctx context.Context, version int64, env string) error {
	r.mu.RLock()
	same := r.loaded == version
	r.mu.RUnlock()
	if same {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.loaded == version {
		return nil
	}
	stored, err := r.store.RuntimeClients(ctx)
	if err != nil {
		return fmt.Errorf("reload runtime clients: %w: %w", ErrClientStore, err)
	}
	// Creation order, as on the replica that created them.
	slices.SortStableFunc(stored, func(a, b referrals.Client) int { return a.CreatedAt.Compare(b.CreatedAt) })
	next := make(map[string]referrals.Client, len(stored))
	for _, c := range stored {
		if old, fixture := r.clients[c.ClientID]; (fixture && !old.Runtime) || c.EnvironmentOrDefault() != env {
			continue
		}
		next[c.ClientID] = c
	}
	order := make([]string, 0, len(r.order)+len(next))
	for _, id := range r.order {
		c := r.clients[id]
		if !c.Runtime {
			order = append(order, id)
			continue
		}
		if _, kept := next[id]; !kept {
			delete(r.clients, id)
			r.rememberDeletedLocked(id)
		}
	}
	for _, c := range stored {
		if _, ok := next[c.ClientID]; ok {
			r.clients[c.ClientID] = c
			order = append(order, c.ClientID)
			r.deleted = slices.DeleteFunc(r.deleted, func(id string) bool { return id == c.ClientID })
		}
	}
	r.order = order
	r.loaded = version
	return nil
}
