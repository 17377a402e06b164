package idp

import (
	"context"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// UseClientStore loads the runtime clients st kept and keeps every later
// change there: the record store of a sandbox on a --data file, so that
// they survive a restart, or Redis for replicas. Without one, runtime
// clients live in memory.
func (p *Provider) UseClientStore(ctx context.Context, st ClientStore) error {
	return p.clients.attach(ctx, st, p.cfg.Environment)
}

// UseClientClock makes each client's tokens be issued and judged on its own
// time (clock.PerClient.Now), so one client's clock can move apart. Call it
// before serving.
func (p *Provider) UseClientClock(now func(clientID string) time.Time) { p.clientClock = now }

// CreateClient registers a runtime client (POST /__sandbox/clients). An
// empty c.ClientID gets a generated one (RuntimeClientPrefix and 12 hex
// digits). It returns the client and its secret, which the sandbox never
// shows again. Errors: ErrBadClientID, ErrClientIDCase, ErrClientExists,
// ErrTooManyClients, ClientFieldErrors (ErrClientTooLarge) for a field over
// its bound, and ErrClientStore when the store failed (the client may then
// exist or not).
func (p *Provider) CreateClient(ctx context.Context, c referrals.Client, secretExpires time.Time) (referrals.Client, string, error) {
	if errs := CheckClientBounds(c); errs != nil {
		return referrals.Client{}, "", errs
	}
	if c.Environment == "" {
		c.Environment = p.cfg.Environment
	}
	return p.clients.create(ctx, c, secretExpires)
}

// DeleteClient removes a runtime client; its tokens are refused from then
// on. Errors: ErrNoClient, ErrFixtureClient, ErrClientStore.
func (p *Provider) DeleteClient(ctx context.Context, id string) error {
	return p.clients.remove(ctx, id)
}

// AddClientSecret gives a runtime client another secret (a rotation) and
// returns its stored form and its value, shown once.
func (p *Provider) AddClientSecret(ctx context.Context, id string, expires time.Time) (Secret, string, error) {
	return p.clients.addSecret(ctx, id, expires)
}

// DeleteClientSecret removes one secret of a runtime client.
func (p *Provider) DeleteClientSecret(ctx context.Context, id, secretID string) error {
	return p.clients.removeSecret(ctx, id, secretID)
}

// ExpireClients removes the runtime clients whose ttl ran out and returns
// the ids removed, those before a failure when there is one.
func (p *Provider) ExpireClients(ctx context.Context) ([]string, error) {
	return p.clients.expired(ctx)
}

// ResetClients forgets every runtime client (a reset of the whole sandbox).
func (p *Provider) ResetClients(ctx context.Context) error { return p.clients.resetRuntime(ctx) }

// Environment is the environment the sandbox runs as.
func (p *Provider) Environment() string { return p.cfg.Environment }

// ClientNow is clientID's time: its own clock when it has one.
func (p *Provider) ClientNow(clientID string) time.Time { return p.now(clientID) }
