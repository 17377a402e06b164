package idp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/internal/lazyregexp"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// Bounds of the runtime client registry. A shared sandbox serves many CI
// jobs; a job that crashes never deletes its client, so clients carry a ttl
// and their number is capped.
const (
	// MaxRuntimeClients is how many clients may be created at run time.
	MaxRuntimeClients = 1000
	// MaxSecretsPerClient is how many secrets a runtime client may hold at
	// once (Entra allows a few for rotation).
	MaxSecretsPerClient = 5
	// maxDeletedRemembered bounds the ids remembered as deleted, so that a
	// token of a deleted client is refused with that reason.
	maxDeletedRemembered = 4096
	// RuntimeClientPrefix starts every generated client id, so a runtime
	// client is recognisable in journals and reports.
	RuntimeClientPrefix = "ci-"
)

// Errors of the registry; the admin API maps them to statuses.
var (
	// ErrClientExists: a client with that id already exists.
	ErrClientExists = errors.New("client already exists")
	// ErrNoClient: no such client.
	ErrNoClient = errors.New("no such client")
	// ErrFixtureClient: fixture clients cannot be changed at run time.
	ErrFixtureClient = errors.New("fixture clients cannot be changed at run time")
	// ErrTooManyClients: MaxRuntimeClients reached.
	ErrTooManyClients = errors.New("too many runtime clients")
	// ErrTooManySecrets: MaxSecretsPerClient reached.
	ErrTooManySecrets = errors.New("too many secrets")
	// ErrNoSecret: no secret with that id.
	ErrNoSecret = errors.New("no such secret")
	// ErrLastSecret: a client keeps at least one secret.
	ErrLastSecret = errors.New("a client keeps at least one secret")
	// ErrBadClientID: the requested client id has characters a client id
	// cannot have.
	ErrBadClientID = errors.New("invalid client id")
	// ErrClientIDCase: the requested client id differs from an existing
	// client's only by case, which would make the two easy to confuse in
	// journals and reports (and is one client for Entra).
	ErrClientIDCase = errors.New("client id differs from an existing one only by case")
)

// fixtureInstance is the instance of every fixture client: a fixture
// client cannot be deleted or created again at run time.
const fixtureInstance = "fixtures"

// instanceOf is the instance a token of c must carry (see Client.Instance).
func instanceOf(c referrals.Client) string {
	if !c.Runtime {
		return fixtureInstance
	}
	return c.Instance
}

// clientIDPattern is what a requested client id may hold: it appears in
// URLs, logs and store keys.
var clientIDPattern = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// registry is the clients that exist in the sandbox's environment: the
// fixtures' and those created at run time, kept in a ClientStore. It is
// safe for concurrent use; it calls the store under its own lock, so the
// store sees changes in order.
type registry struct {
	clock clock.Clock
	store ClientStore

	mu      sync.RWMutex
	order   []string // fixture clients first, in fixture order, then runtime ones
	clients map[string]referrals.Client
	deleted []string // most recent last, at most maxDeletedRemembered
	// loaded is the version of the store last reloaded, -1 after a change
	// failed, whose outcome is unknown (registry_sync.go).
	loaded int64
}

func newRegistry(env string, fixtureClients []referrals.Client, c clock.Clock) *registry {
	r := &registry{clock: c, store: NewMemoryClients(), clients: make(map[string]referrals.Client)}
	for _, cl := range fixtureClients {
		if cl.EnvironmentOrDefault() == env {
			r.clients[cl.ClientID] = cl
			r.order = append(r.order, cl.ClientID)
		}
	}
	return r
}

// attach loads the runtime clients a store kept, and makes the registry
// keep every later change there. Clients of another environment stay in
// the store, unseen, as fixture clients do.
func (r *registry) attach(ctx context.Context, st ClientStore, env string) error {
	stored, err := st.RuntimeClients(ctx)
	if err != nil {
		return fmt.Errorf("load runtime clients: %w: %w", ErrClientStore, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.store = st
	for _, c := range stored {
		if _, fixture := r.clients[c.ClientID]; fixture || c.EnvironmentOrDefault() != env {
			continue
		}
		r.clients[c.ClientID] = c
		r.order = append(r.order, c.ClientID)
	}
	return nil
}

// live reports whether c exists at now: a runtime client with a ttl is gone
// once it expires.
func live(c referrals.Client, now time.Time) bool {
	return c.ExpiresAt.IsZero() || now.Before(c.ExpiresAt)
}

// get returns the client under id, if it exists now.
func (r *registry) get(id string) (referrals.Client, bool) {
	r.mu.RLock()
	c, ok := r.clients[id]
	r.mu.RUnlock()
	if !ok || !live(c, r.clock.Now()) {
		return referrals.Client{}, false
	}
	return c, true
}

// wasDeleted reports whether id named a client that was deleted or ran out
// of time, so a refusal can say so.
func (r *registry) wasDeleted(id string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if c, ok := r.clients[id]; ok {
		return !live(c, r.clock.Now())
	}
	return slices.Contains(r.deleted, id)
}

// list returns the clients that exist now: fixture clients in fixture
// order, then runtime clients by creation.
func (r *registry) list() []referrals.Client {
	now := r.clock.Now()
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]referrals.Client, 0, len(r.order))
	for _, id := range r.order {
		if c := r.clients[id]; live(c, now) {
			out = append(out, c)
		}
	}
	return out
}

// expired removes the runtime clients whose ttl has run out and returns
// their ids, so the sandbox can drop their records, rules and journal.
func (r *registry) expired(ctx context.Context) ([]string, error) {
	now := r.clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	var gone []string
	for _, id := range r.order {
		if c := r.clients[id]; c.Runtime && !live(c, now) {
			gone = append(gone, id)
		}
	}
	for i, id := range gone {
		if err := r.removeLocked(ctx, id); err != nil {
			return gone[:i], err
		}
	}
	return gone, nil
}

// NewClientSecret makes a secret shaped like Entra's (three characters,
// "8Q~", then 34 more), so clients that must url-encode a "~" are tested.
func NewClientSecret() (string, error) {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 37)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate client secret: %w", err)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:3]) + "8Q~" + string(b[3:]), nil
}

// newInstance names one creation of a runtime client.
func newInstance() (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate client instance: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// newClientID generates a readable runtime client id: ci-<12 hex>.
func newClientID() (string, error) {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate client id: %w", err)
	}
	return RuntimeClientPrefix + hex.EncodeToString(b), nil
}

// secretDigest is the stored form of a secret.
func secretDigest(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// newSecret makes the stored form of a new secret.
func newSecret(value string, now, expires time.Time) (Secret, error) {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return Secret{}, fmt.Errorf("generate secret id: %w", err)
	}
	return Secret{ID: hex.EncodeToString(b), Hint: value[:3], SHA256: secretDigest(value), CreatedAt: now, ExpiresAt: expires}, nil
}

// Secret is the stored form of a runtime client's secret.
type Secret = referrals.Secret

// secretCheck is what the token endpoint learns of a presented secret.
type secretCheck int

const (
	secretWrong secretCheck = iota
	secretOK
	secretExpired
)

// checkSecret compares a presented secret with a client's, in constant time
// per secret. A secret that matches but has expired is reported as such,
// as Entra answers AADSTS7000222 rather than a plain wrong secret.
func checkSecret(c referrals.Client, presented string, now time.Time) secretCheck {
	if c.ClientSecret != "" && secretsEqual(c.ClientSecret, presented) {
		return secretOK
	}
	digest := secretDigest(presented)
	result := secretWrong
	for _, s := range c.Secrets {
		if subtle.ConstantTimeCompare([]byte(s.SHA256), []byte(digest)) == 1 {
			if !s.ExpiresAt.IsZero() && !now.Before(s.ExpiresAt) {
				result = secretExpired
				continue
			}
			return secretOK
		}
	}
	return result
}

// create registers a runtime client. c.ClientID may be empty (one is
// generated); secretExpires may be zero. It returns the client and its
// first secret, which is never shown again. The client gets a new
// instance, which its tokens carry: a token of an earlier client of the
// same id is refused.
func (r *registry) create(ctx context.Context, c referrals.Client, secretExpires time.Time) (referrals.Client, string, error) {
	if c.ClientID == "" {
		id, err := newClientID()
		if err != nil {
			return referrals.Client{}, "", err
		}
		c.ClientID = id
	} else if !clientIDPattern().MatchString(c.ClientID) {
		return referrals.Client{}, "", ErrBadClientID
	}
	value, err := NewClientSecret()
	if err != nil {
		return referrals.Client{}, "", err
	}
	now := r.clock.Now()
	secret, err := newSecret(value, now, secretExpires)
	if err != nil {
		return referrals.Client{}, "", err
	}
	instance, err := newInstance()
	if err != nil {
		return referrals.Client{}, "", err
	}
	c.Runtime, c.CreatedAt, c.ClientSecret, c.Instance = true, now, "", instance
	c.Secrets = []Secret{secret}

	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.clients[c.ClientID]; ok {
		if !old.Runtime || live(old, now) {
			return referrals.Client{}, "", ErrClientExists
		}
		if err := r.removeLocked(ctx, c.ClientID); err != nil { // an expired client's id is free again
			return referrals.Client{}, "", err
		}
	}
	for id, other := range r.clients {
		if id != c.ClientID && strings.EqualFold(id, c.ClientID) && (!other.Runtime || live(other, now)) {
			return referrals.Client{}, "", ErrClientIDCase
		}
	}
	if r.runtimeCountLocked() >= MaxRuntimeClients {
		return referrals.Client{}, "", ErrTooManyClients
	}
	if err := r.store.PutClient(ctx, c); err != nil {
		r.loaded = -1 // the client may be stored all the same: reload
		return referrals.Client{}, "", fmt.Errorf("store client %s: %w: %w", c.ClientID, ErrClientStore, err)
	}
	r.clients[c.ClientID] = c
	r.order = append(r.order, c.ClientID)
	r.deleted = slices.DeleteFunc(r.deleted, func(id string) bool { return id == c.ClientID })
	return c, value, nil
}

func (r *registry) runtimeCountLocked() int {
	n := 0
	for _, c := range r.clients {
		if c.Runtime {
			n++
		}
	}
	return n
}

// remove deletes a runtime client: its tokens are refused from then on.
func (r *registry) remove(ctx context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.runtimeLocked(id); err != nil {
		return err
	}
	return r.removeLocked(ctx, id)
}

// runtimeLocked returns the live runtime client id: ErrNoClient when there
// is none, ErrFixtureClient for a fixture client, which cannot change. The
// caller holds mu.
func (r *registry) runtimeLocked(id string) (referrals.Client, error) {
	c, ok := r.clients[id]
	switch {
	case !ok || !live(c, r.clock.Now()):
		return referrals.Client{}, ErrNoClient
	case !c.Runtime:
		return referrals.Client{}, ErrFixtureClient
	}
	return c, nil
}

func (r *registry) removeLocked(ctx context.Context, id string) error {
	if err := r.store.DeleteClient(ctx, id); err != nil {
		r.loaded = -1 // the client may be deleted all the same: reload
		return fmt.Errorf("delete client %s: %w: %w", id, ErrClientStore, err)
	}
	delete(r.clients, id)
	r.order = slices.DeleteFunc(r.order, func(o string) bool { return o == id })
	r.rememberDeletedLocked(id)
	return nil
}

// rememberDeletedLocked keeps id among the deleted ones, within bounds.
func (r *registry) rememberDeletedLocked(id string) {
	r.deleted = append(r.deleted, id)
	if len(r.deleted) > maxDeletedRemembered {
		r.deleted = slices.Delete(r.deleted, 0, len(r.deleted)-maxDeletedRemembered)
	}
}

// addSecret gives a runtime client another secret and returns its stored
// form and value; the old secrets keep working.
func (r *registry) addSecret(ctx context.Context, id string, expires time.Time) (Secret, string, error) {
	value, err := NewClientSecret()
	if err != nil {
		return Secret{}, "", err
	}
	now := r.clock.Now()
	secret, err := newSecret(value, now, expires)
	if err != nil {
		return Secret{}, "", err
	}
	err = r.update(ctx, id, func(c *referrals.Client) error {
		if len(c.Secrets) >= MaxSecretsPerClient {
			return ErrTooManySecrets
		}
		c.Secrets = append(slices.Clone(c.Secrets), secret)
		return nil
	})
	return secret, value, err
}

// removeSecret deletes one secret of a runtime client; it keeps one.
func (r *registry) removeSecret(ctx context.Context, id, secretID string) error {
	return r.update(ctx, id, func(c *referrals.Client) error {
		i := slices.IndexFunc(c.Secrets, func(s Secret) bool { return s.ID == secretID })
		switch {
		case i < 0:
			return ErrNoSecret
		case len(c.Secrets) == 1:
			return ErrLastSecret
		}
		c.Secrets = slices.Delete(slices.Clone(c.Secrets), i, i+1)
		return nil
	})
}

// update changes a live runtime client under the lock and stores it.
func (r *registry) update(ctx context.Context, id string, fn func(*referrals.Client) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.runtimeLocked(id)
	if err != nil {
		return err
	}
	if err := fn(&c); err != nil {
		return err
	}
	if err := r.store.PutClient(ctx, c); err != nil {
		r.loaded = -1 // the change may be stored all the same: reload
		return fmt.Errorf("store client %s: %w: %w", id, ErrClientStore, err)
	}
	r.clients[id] = c
	return nil
}

// resetRuntime forgets every runtime client (a whole-sandbox reset back to
// the fixtures).
func (r *registry) resetRuntime(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range slices.Clone(r.order) {
		if r.clients[id].Runtime {
			if err := r.removeLocked(ctx, id); err != nil {
				return err
			}
		}
	}
	return nil
}
