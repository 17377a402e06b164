package idp

import (
	"fmt"
	"slices"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
)

// ClientChanged is told, after the store has the change, that a runtime
// client was created, changed or deleted through this replica, so other
// replicas reload theirs (a shared sandbox bumps a version in Redis).
type ClientChanged func() error

// UseClientSync makes every runtime client change call changed after the
// store has it. A change whose call fails is reported to the caller: the
// store has it, but other replicas may not see it yet.
func (p *Provider) UseClientSync(changed ClientChanged) { p.clients.changed = changed }

// SyncClients reloads the runtime clients from the store when version
// differs from the one loaded last: replicas sharing one store call it per
// request with the version other replicas bump (see UseClientSync). The
// same version costs nothing; at most MaxRuntimeClients are reloaded.
func (p *Provider) SyncClients(version int64) error {
	return p.clients.reload(version, p.cfg.Environment)
}

// reload replaces the runtime clients with the store's ones when version is
// not the one loaded. Clients that disappeared are remembered as deleted,
// so their tokens are refused with that reason, as on the replica that
// deleted them.
func (r *registry) reload(version int64, env string) error {
	r.mu.RLock()
	same := r.loaded == version
	r.mu.RUnlock()
	if same || r.store == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.loaded == version {
		return nil
	}
	stored, err := r.store.RuntimeClients()
	if err != nil {
		return fmt.Errorf("reload runtime clients: %w", err)
	}
	// Creation order, as on the replica that created them.
	slices.SortStableFunc(stored, func(a, b fixtures.Client) int { return a.CreatedAt.Compare(b.CreatedAt) })
	next := make(map[string]fixtures.Client, len(stored))
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

// notifyLocked tells the other replicas of a change the store has.
func (r *registry) notifyLocked(id string) error {
	if r.changed == nil {
		return nil
	}
	if err := r.changed(); err != nil {
		// The store has the change and this replica's map may not: reload
		// from the store on the next request whatever the version says.
		r.loaded = -1
		return fmt.Errorf("announce the change of client %s to other replicas: %w", id, err)
	}
	return nil
}
