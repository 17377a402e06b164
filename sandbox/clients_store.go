package sandbox

import (
	"context"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// recordStoreClients keeps the runtime clients of a sandbox that runs
// alone in its record store, so that they survive a restart on a --data
// file. It is the embedded idp.ClientStore; replicas use idp.RedisClients,
// which announces each change to the others in the same step.
type recordStoreClients struct {
	st store.Store
}

func (c recordStoreClients) PutClient(_ context.Context, cl fixtures.Client) error {
	return c.st.PutClient(cl)
}

func (c recordStoreClients) DeleteClient(_ context.Context, id string) error {
	return c.st.DeleteClient(id)
}

func (c recordStoreClients) RuntimeClients(context.Context) ([]fixtures.Client, error) {
	return c.st.RuntimeClients()
}

// clientStore is where the runtime clients live: in Redis for every
// replica in shared mode, in the record store otherwise.
func clientStore(cfg Config) idp.ClientStore {
	if cfg.Redis != nil {
		return idp.NewRedisClients(cfg.Redis, cfg.RedisPrefix)
	}
	return recordStoreClients{st: cfg.Store}
}
