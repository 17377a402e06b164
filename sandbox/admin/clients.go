package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"time"

	"github.com/gorilla/mux"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/backend"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
)

// Bounds of a runtime client's settings, so one careless call cannot make
// a client that outlives the sandbox's purpose or floods it.
const (
	maxClientTTL          = 30 * 24 * time.Hour
	maxSecretLifetime     = 2 * 365 * 24 * time.Hour
	maxClientTokenSeconds = 24 * 60 * 60
)

// clientRequest is the body of POST /__sandbox/clients; every field is
// optional.
type clientRequest struct {
	ClientID             *string  `json:"clientId"`
	Roles                []string `json:"roles"`
	Resources            []string `json:"resources"`
	TokenLifetimeSeconds int      `json:"tokenLifetimeSeconds"`
	RateLimit            *float64 `json:"rateLimit"`
	RateBurst            *int     `json:"rateBurst"`
	Environment          *string  `json:"environment"`
	Description          string   `json:"description"`
	// TTL is how long the client lives (a Go duration such as 1h); empty
	// means until deleted or reset.
	TTL *string `json:"ttl"`
	// SecretExpiresIn ends the first secret after this long; absent: never.
	SecretExpiresIn *string `json:"secretExpiresIn"`
}

// secretRequest is the body of POST /__sandbox/clients/{id}/secrets.
type secretRequest struct {
	ExpiresIn *string `json:"expiresIn"`
}

// emptyGiven names the string fields a body gave empty: a field given ""
// is a mistake to report, not an absent one (pointers tell them apart).
func emptyGiven(fields map[string]*string) []reply.FieldError {
	var errs []reply.FieldError
	for name, v := range fields {
		if v != nil && *v == "" {
			errs = append(errs, reply.FieldError{Field: name, Message: "must not be empty; leave the field out instead"})
		}
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Field < errs[j].Field })
	return errs
}

// value is a pointer's string, "" when absent.
func value(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// secretView is a secret as the admin API lists it: never the value.
type secretView struct {
	ID        string `json:"id"`
	Hint      string `json:"hint"`
	CreatedAt string `json:"createdAt"`
	ExpiresAt string `json:"expiresAt,omitempty"`
	Expired   bool   `json:"expired"`
}

// registeredClient is a client as GET /__sandbox/clients shows it: never a
// secret. Fixture clients are marked so.
type registeredClient struct {
	ClientID             string       `json:"clientId"`
	Origin               string       `json:"origin"` // "fixtures" or "runtime"
	Roles                []string     `json:"roles"`
	Resources            []string     `json:"resources"`
	Environment          string       `json:"environment"`
	TokenLifetimeSeconds int          `json:"tokenLifetimeSeconds,omitempty"`
	RateLimit            *float64     `json:"rateLimit,omitempty"`
	RateBurst            *int         `json:"rateBurst,omitempty"`
	Description          string       `json:"description,omitempty"`
	CreatedAt            string       `json:"createdAt,omitempty"`
	ExpiresAt            string       `json:"expiresAt,omitempty"`
	Secrets              []secretView `json:"secrets,omitempty"`
}

// createdClient is the answer to POST /__sandbox/clients: the client, its
// secret (shown this once) and the addresses a job configures.
type createdClient struct {
	registeredClient
	ClientSecret string `json:"clientSecret"`
	SecretID     string `json:"secretId"`
	Scope        string `json:"scope"`
	TokenURL     string `json:"tokenUrl"`
	AuthURL      string `json:"authUrl"`
	BaseURL      string `json:"baseUrl"`
	RootURL      string `json:"rootUrl"`
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func (a *API) clientViewOf(c referrals.Client) registeredClient {
	v := registeredClient{
		ClientID: c.ClientID, Origin: "fixtures", Roles: orEmpty(c.Roles), Resources: orEmpty(c.Resources),
		Environment: c.EnvironmentOrDefault(), TokenLifetimeSeconds: c.TokenLifetimeSeconds,
		RateLimit: c.RateLimit, RateBurst: c.RateBurst, Description: c.Description,
	}
	if !c.Runtime {
		return v
	}
	v.Origin, v.CreatedAt, v.ExpiresAt = "runtime", formatTime(c.CreatedAt), formatTime(c.ExpiresAt)
	now := a.clocks.Now(c.ClientID)
	v.Secrets = make([]secretView, 0, len(c.Secrets))
	for _, sec := range c.Secrets {
		v.Secrets = append(v.Secrets, secretViewOf(sec, now))
	}
	return v
}

func secretViewOf(sec idp.Secret, now time.Time) secretView {
	return secretView{
		ID: sec.ID, Hint: sec.Hint, CreatedAt: formatTime(sec.CreatedAt), ExpiresAt: formatTime(sec.ExpiresAt),
		Expired: !sec.ExpiresAt.IsZero() && !now.Before(sec.ExpiresAt),
	}
}

// listClients answers GET /__sandbox/clients: every client that exists now.
func (a *API) listClients(w http.ResponseWriter, r *http.Request) {
	a.logExpiryFailure(r, a.forgetExpiredClients(r))
	out := []registeredClient{}
	for _, c := range a.cfg.Provider.Clients() {
		out = append(out, a.clientViewOf(c))
	}
	reply.JSON(w, http.StatusOK, map[string]any{"clients": out})
}

// getClient answers GET /__sandbox/clients/{id}.
func (a *API) getClient(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["id"]
	c, ok := a.cfg.Provider.Client(id)
	if !ok {
		a.reply.Problem(w, r, reply.New(http.StatusNotFound, fmt.Sprintf("no client %q in this sandbox", id)))
		return
	}
	reply.JSON(w, http.StatusOK, a.clientViewOf(c))
}

// createClient answers POST /__sandbox/clients.
func (a *API) createClient(w http.ResponseWriter, r *http.Request) {
	var req clientRequest
	if err := a.decodeAdminBody(r, &req); err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	a.logExpiryFailure(r, a.forgetExpiredClients(r))
	client, secretExpires, errs := a.clientFrom(req)
	if len(errs) > 0 {
		a.reply.Problem(w, r, reply.Validation(errs))
		return
	}
	if err := a.forgetLeftovers(r.Context(), client.ClientID); err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	created, secret, err := a.cfg.Provider.CreateClient(r.Context(), client, secretExpires)
	a.backend.Settle()
	switch {
	case errors.Is(err, idp.ErrClientIDCase):
		a.reply.Problem(w, r, reply.Validation([]reply.FieldError{{Field: "clientId", Message: fmt.Sprintf("%q differs from an existing client's id only by case; choose another id", client.ClientID)}}))
		return
	case errors.Is(err, idp.ErrClientExists):
		a.reply.Problem(w, r, reply.New(http.StatusConflict, fmt.Sprintf("a client %q already exists; leave clientId out for a generated one", client.ClientID)))
		return
	case errors.Is(err, idp.ErrBadClientID):
		a.reply.Problem(w, r, reply.Validation([]reply.FieldError{{Field: "clientId", Message: "1 to 64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit"}}))
		return
	case errors.Is(err, idp.ErrTooManyClients):
		a.reply.Problem(w, r, reply.Validation([]reply.FieldError{{Field: "clientId", Message: fmt.Sprintf("this sandbox already has %d runtime clients, its limit: delete some, or give new ones a ttl", idp.MaxRuntimeClients)}}))
		return
	case err != nil:
		a.reply.Fail(w, r, fmt.Errorf("create client: %w", err))
		return
	}
	a.log.Info("client created", "client_id", created.ClientID, "expires_at", formatTime(created.ExpiresAt))
	base := a.cfg.Provider.BaseURL(r)
	w.Header().Set("Location", "/__sandbox/clients/"+url.PathEscape(created.ClientID))
	reply.JSON(w, http.StatusCreated, createdClient{
		registeredClient: a.clientViewOf(created),
		ClientSecret:     secret, SecretID: created.Secrets[0].ID,
		Scope:    created.Resources[0] + "/.default",
		TokenURL: a.cfg.Provider.TokenURL(base), AuthURL: a.cfg.Provider.AuthURL(base),
		BaseURL: base + "/api/v1", RootURL: base,
	})
}

// clientFrom checks a creation request and builds the client, naming every
// field that is wrong.
func (a *API) clientFrom(req clientRequest) (referrals.Client, time.Time, []reply.FieldError) {
	errs := emptyGiven(map[string]*string{"clientId": req.ClientID, "environment": req.Environment, "ttl": req.TTL, "secretExpiresIn": req.SecretExpiresIn})
	add := func(field, msg string) { errs = append(errs, reply.FieldError{Field: field, Message: msg}) }
	now := a.clocks.Now("")
	c := referrals.Client{
		ClientID: value(req.ClientID), Roles: req.Roles, Resources: req.Resources, TokenLifetimeSeconds: req.TokenLifetimeSeconds,
		RateLimit: req.RateLimit, RateBurst: req.RateBurst, Environment: value(req.Environment), Description: req.Description,
	}
	if c.Roles == nil {
		c.Roles = a.cfg.PartnerRoles
	}
	if len(c.Resources) == 0 {
		c.Resources = []string{a.cfg.Audience}
	}
	// Bounds first: an over-long list is one error, not one per item.
	for _, fe := range idp.CheckClientBounds(c) {
		add(fe.Field, fe.Message)
	}
	noneEmpty := func(field string, items []string, maxItems int) {
		if len(items) > maxItems {
			return // reported once above
		}
		for i, item := range items {
			if item == "" {
				add(fmt.Sprintf("%s[%d]", field, i), "must not be empty")
			}
		}
	}
	noneEmpty("roles", c.Roles, idp.MaxClientRoles)
	noneEmpty("resources", c.Resources, idp.MaxClientResources)
	if c.TokenLifetimeSeconds < 0 || c.TokenLifetimeSeconds > maxClientTokenSeconds {
		add("tokenLifetimeSeconds", fmt.Sprintf("must be from 1 to %d (0 or absent: the sandbox's --token-lifetime)", maxClientTokenSeconds))
	}
	if c.RateLimit != nil && *c.RateLimit < 0 {
		add("rateLimit", "must not be negative (0 turns limiting off for this client)")
	}
	if c.RateBurst != nil && *c.RateBurst < 0 {
		add("rateBurst", "must not be negative")
	}
	env := a.cfg.Provider.Environment()
	if c.Environment != "" && c.Environment != env {
		add("environment", fmt.Sprintf("this sandbox runs as %s; a client of another environment would not exist here", env))
	}
	if value(req.TTL) != "" {
		ttl, err := time.ParseDuration(*req.TTL)
		if err != nil || ttl < time.Second || ttl > maxClientTTL {
			add("ttl", fmt.Sprintf("a Go duration from 1s to %s, such as 1h; absent: until deleted", maxClientTTL))
		} else {
			c.ExpiresAt = now.Add(ttl)
		}
	}
	secretExpires, msg := expiryOf(value(req.SecretExpiresIn), a.clocks.Now(c.ClientID))
	if msg != "" {
		add("secretExpiresIn", msg)
	}
	return c, secretExpires, errs
}

// expiryOf reads a secret lifetime: "" is never; it returns a message when
// the value is wrong.
func expiryOf(in string, now time.Time) (time.Time, string) {
	if in == "" {
		return time.Time{}, ""
	}
	d, err := time.ParseDuration(in)
	if err != nil || d < time.Second || d > maxSecretLifetime {
		return time.Time{}, fmt.Sprintf("a Go duration from 1s to %s, such as 720h; absent: never expires", maxSecretLifetime)
	}
	return now.Add(d), ""
}

// deleteClient answers DELETE /__sandbox/clients/{id}: the client's tokens
// are refused from now on, and its records, rules, journal entries, rate
// limit and clock go with it.
func (a *API) deleteClient(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["id"]
	// The client's data goes first: when that fails the client is still
	// there, and the DELETE the 503 invites finds it.
	if c, ok := a.cfg.Provider.Client(id); ok && c.Runtime {
		if err := a.forgetClient(r.Context(), id); err != nil {
			a.reply.Fail(w, r, err)
			return
		}
	}
	err := a.cfg.Provider.DeleteClient(r.Context(), id)
	a.backend.Settle()
	switch {
	case errors.Is(err, idp.ErrNoClient):
		a.reply.Problem(w, r, reply.New(http.StatusNotFound, fmt.Sprintf("no client %q in this sandbox", id)))
		return
	case errors.Is(err, idp.ErrFixtureClient):
		a.reply.Problem(w, r, reply.New(http.StatusConflict, fmt.Sprintf("%q is a fixture client; only clients created at run time can be deleted", id)))
		return
	case err != nil:
		a.reply.Fail(w, r, err)
		return
	}
	a.log.Info("client deleted", "client_id", id)
	w.WriteHeader(http.StatusNoContent)
}

// addClientSecret answers POST /__sandbox/clients/{id}/secrets: a second
// secret for a rotation; the old ones keep working until deleted or until
// they expire.
func (a *API) addClientSecret(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["id"]
	var req secretRequest
	if err := a.decodeAdminBody(r, &req); err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	now := a.clocks.Now(id)
	if errs := emptyGiven(map[string]*string{"expiresIn": req.ExpiresIn}); len(errs) > 0 {
		a.reply.Problem(w, r, reply.Validation(errs))
		return
	}
	expires, msg := expiryOf(value(req.ExpiresIn), now)
	if msg != "" {
		a.reply.Problem(w, r, reply.Validation([]reply.FieldError{{Field: "expiresIn", Message: msg}}))
		return
	}
	sec, value, err := a.cfg.Provider.AddClientSecret(r.Context(), id, expires)
	a.backend.Settle()
	if a.clientChangeFailed(w, r, id, err) {
		return
	}
	w.Header().Set("Location", "/__sandbox/clients/"+url.PathEscape(id)+"/secrets/"+url.PathEscape(sec.ID))
	reply.JSON(w, http.StatusCreated, struct {
		secretView
		ClientSecret string `json:"clientSecret"`
	}{secretViewOf(sec, now), value})
}

// deleteClientSecret answers DELETE /__sandbox/clients/{id}/secrets/{secretId}.
func (a *API) deleteClientSecret(w http.ResponseWriter, r *http.Request) {
	vars := mux.Vars(r)
	err := a.cfg.Provider.DeleteClientSecret(r.Context(), vars["id"], vars["secretId"])
	a.backend.Settle()
	if a.clientChangeFailed(w, r, vars["id"], err) {
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// clientChangeFailed answers the errors of a secret change.
func (a *API) clientChangeFailed(w http.ResponseWriter, r *http.Request, id string, err error) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, idp.ErrNoClient):
		a.reply.Problem(w, r, reply.New(http.StatusNotFound, fmt.Sprintf("no client %q in this sandbox", id)))
	case errors.Is(err, idp.ErrNoSecret):
		a.reply.Problem(w, r, reply.New(http.StatusNotFound, fmt.Sprintf("client %q has no secret with that id", id)))
	case errors.Is(err, idp.ErrFixtureClient):
		a.reply.Problem(w, r, reply.New(http.StatusConflict, fmt.Sprintf("%q is a fixture client; its secret is fixed", id)))
	case errors.Is(err, idp.ErrLastSecret):
		a.reply.Problem(w, r, reply.New(http.StatusConflict, "a client keeps at least one secret: add the new one first, or delete the client"))
	case errors.Is(err, idp.ErrTooManySecrets):
		a.reply.Problem(w, r, reply.New(http.StatusConflict, fmt.Sprintf("a client holds at most %d secrets: delete an old one first", idp.MaxSecretsPerClient)))
	default:
		a.reply.Fail(w, r, err)
	}
	return true
}

// forgetClient drops everything the sandbox holds for one client: records,
// rules and scenario bindings, journal entries, rate-limit bucket, clock.
func (a *API) forgetClient(ctx context.Context, id string) error {
	if err := a.backend.Records.ResetClient(context.WithoutCancel(ctx), id, nil); err != nil {
		return a.backend.Failure("delete records of "+id, err)
	}
	return a.forgetClientState(ctx, id)
}

// forgetLeftovers drops what the sandbox may still hold for a client id
// that is about to be created, when no client of that id exists: the data
// of an earlier client of the id whose deletion or expiry failed part way.
// A new client starts with nothing.
func (a *API) forgetLeftovers(ctx context.Context, id string) error {
	if id == "" {
		return nil
	}
	if _, exists := a.cfg.Provider.Client(id); exists {
		return nil
	}
	return a.forgetClient(ctx, id)
}

// forgetClientState clears what the sandbox keeps for a client outside the
// store: rules and bindings, journal entries, rate limit, clock.
func (a *API) forgetClientState(ctx context.Context, id string) error {
	if err := a.backend.Rules.ClearClient(ctx, id); err != nil {
		return fmt.Errorf("clear the rules of %s: %w", id, err)
	}
	if err := a.backend.Journal.ClearClient(ctx, id); err != nil {
		return fmt.Errorf("clear the journal of %s: %w", id, err)
	}
	if err := a.cfg.RateLimits.Forget(ctx, id); err != nil {
		return fmt.Errorf("forget the rate limit of %s: %w", id, err)
	}
	// A client without a clock of its own (as this replica, brought in
	// step before the request, sees it) has none to reset.
	if _, own := a.clocks.Offset(id); !own {
		return nil
	}
	if err := a.backend.Clocks.Reset(ctx, id); err != nil {
		return backend.Unavailable("reset the clock of "+id, err)
	}
	a.backend.Settle()
	return nil
}

// forgetExpiredClients drops the clients whose ttl ran out, and their data.
// It runs when clients are listed or created, which is when a shared
// sandbox's client count matters, and before every clock move, so that
// moving the clock back cannot revive a client that has run out (an
// expired client's tokens are refused at once in any case). Its error is
// the caller's to report or to log.
func (a *API) forgetExpiredClients(r *http.Request) error {
	gone, err := a.cfg.Provider.ExpireClients(r.Context())
	for _, id := range gone {
		if ferr := a.forgetClient(r.Context(), id); ferr != nil {
			err = errors.Join(err, ferr)
		}
	}
	if len(gone) > 0 {
		a.log.Info("runtime clients expired", "count", len(gone))
	}
	if err != nil {
		return backend.Unavailable("expire runtime clients", err)
	}
	return nil
}

// logExpiryFailure logs a failed clean-up of expired clients that the
// request can do without: a list or a creation judges expiry itself.
func (a *API) logExpiryFailure(r *http.Request, err error) {
	if err != nil {
		a.log.Error("expire runtime clients", "request_id", reply.RequestID(r), "err", err)
	}
}
