package idp

import (
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
)

// UseClientStore loads the runtime clients st kept and keeps every later
// change there, so runtime clients survive a restart on a --data file.
func (p *Provider) UseClientStore(st ClientStore) error {
	return p.clients.attach(st, p.cfg.Environment)
}

// UseClientClock makes each client's tokens be issued and judged on its own
// time (clock.PerClient.Now), so one client's clock can move apart. Call it
// before serving.
func (p *Provider) UseClientClock(now func(clientID string) time.Time) { p.clientClock = now }

// CreateClient registers a runtime client (POST /__sandbox/clients). An
// empty c.ClientID gets a generated one (RuntimeClientPrefix and 12 hex
// digits). It returns the client and its secret, which the sandbox never
// shows again. Errors: ErrBadClientID, ErrClientExists, ErrTooManyClients,
// and ClientFieldErrors (ErrClientTooLarge) for a field over its bound.
func (p *Provider) CreateClient(c fixtures.Client, secretExpires time.Time) (fixtures.Client, string, error) {
	if errs := CheckClientBounds(c); errs != nil {
		return fixtures.Client{}, "", errs
	}
	if c.Environment == "" {
		c.Environment = p.cfg.Environment
	}
	return p.clients.create(c, secretExpires)
}

// DeleteClient removes a runtime client; its tokens are refused from then
// on. Errors: ErrNoClient, ErrFixtureClient.
func (p *Provider) DeleteClient(id string) error { return p.clients.remove(id) }

// AddClientSecret gives a runtime client another secret (a rotation) and
// returns its stored form and its value, shown once.
func (p *Provider) AddClientSecret(id string, expires time.Time) (Secret, string, error) {
	return p.clients.addSecret(id, expires)
}

// DeleteClientSecret removes one secret of a runtime client.
func (p *Provider) DeleteClientSecret(id, secretID string) error {
	return p.clients.removeSecret(id, secretID)
}

// ExpireClients removes the runtime clients whose ttl ran out and returns
// their ids.
func (p *Provider) ExpireClients() ([]string, error) { return p.clients.expired() }

// ResetClients forgets every runtime client (a reset of the whole sandbox).
func (p *Provider) ResetClients() error { return p.clients.resetRuntime() }

// Environment is the environment the sandbox runs as.
func (p *Provider) Environment() string { return p.cfg.Environment }

// ClientNow is clientID's time: its own clock when it has one.
func (p *Provider) ClientNow(clientID string) time.Time { return p.now(clientID) }
