package idp

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// ClientStore keeps the runtime clients: in memory (MemoryClients), in the
// record store of a sandbox that runs alone, so that clients survive a
// restart on a --data file, or in Redis for replicas (RedisClients). Every
// method takes a context and reports the backend's failure: a client that
// cannot be read is never taken for one that does not exist. A change that
// returns nil has been taken; one that fails may or may not have been, and
// the registry reloads before it trusts its own copy again. Where replicas
// share the store, a change and its announcement to the other replicas
// (a version they read before each request) are one atomic step. Every
// implementation passes the conformance suite in idp/clientstest.
type ClientStore interface {
	// PutClient stores or replaces a runtime client.
	PutClient(ctx context.Context, c referrals.Client) error
	// DeleteClient removes a runtime client; deleting a missing one is not
	// an error.
	DeleteClient(ctx context.Context, clientID string) error
	// RuntimeClients returns every stored runtime client.
	RuntimeClients(ctx context.Context) ([]referrals.Client, error)
}

// ErrClientStore marks a failure of the ClientStore: the sandbox answers
// 503 with Retry-After, as the change may be retried.
var ErrClientStore = errors.New("the runtime client store failed")

// MemoryClients is a ClientStore in this process, for a sandbox that runs
// alone without a record store that keeps clients.
type MemoryClients struct {
	mu      sync.Mutex
	clients map[string]referrals.Client
}

// NewMemoryClients returns an empty MemoryClients.
func NewMemoryClients() *MemoryClients {
	return &MemoryClients{clients: map[string]referrals.Client{}}
}

// PutClient stores or replaces c.
func (m *MemoryClients) PutClient(_ context.Context, c referrals.Client) error {
	if c.ClientID == "" {
		return errors.New("store client: clientId is empty")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.clients[c.ClientID] = c
	return nil
}

// DeleteClient removes a client.
func (m *MemoryClients) DeleteClient(_ context.Context, clientID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.clients, clientID)
	return nil
}

// RuntimeClients returns every client, by id.
func (m *MemoryClients) RuntimeClients(context.Context) ([]referrals.Client, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := slices.Sorted(maps.Keys(m.clients))
	out := make([]referrals.Client, 0, len(ids))
	for _, id := range ids {
		out = append(out, m.clients[id])
	}
	return out, nil
}
