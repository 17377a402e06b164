package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// Keys of the runtime state replicas share in Redis (Config.Redis).
const (
	// keyClockVersion grows with every clock move, so a replica never
	// replaces a newer clock with an older read (clock.PerClient.Apply).
	keyClockVersion = "sandbox:clock:version"
	// keyClockGlobal is the sandbox-wide offset from real time, in ns.
	keyClockGlobal = "sandbox:clock:global"
	// keyClockClients holds the clients' own offsets, in ns, by client id.
	keyClockClients = "sandbox:clock:clients"
	// keyClientsVersion grows with every runtime client change; a replica
	// that sees a new value reloads its runtime clients from the store.
	keyClientsVersion = "sandbox:clients:version"
)

// errSharedState marks a failed Redis call: the request answers 503 with
// Retry-After (unavailable), never a 500, even when Redis fails between the
// per-request read and a later write.
var errSharedState = errors.New("the shared state (redis) failed")

// sharedFailure wraps err, a failed Redis call while doing what.
func sharedFailure(what string, err error) error {
	return fmt.Errorf("%s: %w: %w", what, errSharedState, err)
}

// sharedRetryAfter is the Retry-After, in seconds, of an answer refused
// because Redis cannot be reached.
const sharedRetryAfter = 1

// sharedState brings one replica in step with the others before each
// request: one MULTI/EXEC round trip reads the clock (global and per
// client) and the runtime clients' version.
type sharedState struct {
	rdb      *redis.Client
	clocks   *clock.PerClient
	provider *idp.Provider
}

// clockRead is the clock part of a pipelined read.
type clockRead struct {
	version, global *redis.StringCmd
	clients         *redis.MapStringStringCmd
}

// queueClockRead adds the reads of the whole shared clock to p.
func queueClockRead(ctx context.Context, p redis.Pipeliner) clockRead {
	return clockRead{
		version: p.Get(ctx, keyClockVersion),
		global:  p.Get(ctx, keyClockGlobal),
		clients: p.HGetAll(ctx, keyClockClients),
	}
}

// state decodes what queueClockRead read; a missing key is zero.
func (c clockRead) state() (clock.State, error) {
	version, err := int64Of(c.version)
	if err != nil {
		return clock.State{}, fmt.Errorf("clock version: %w", err)
	}
	global, err := int64Of(c.global)
	if err != nil {
		return clock.State{}, fmt.Errorf("global clock offset: %w", err)
	}
	fields, err := c.clients.Result()
	if err != nil {
		return clock.State{}, fmt.Errorf("client clock offsets: %w", err)
	}
	st := clock.State{Version: version, Global: time.Duration(global), Clients: make(map[string]time.Duration, len(fields))}
	for id, v := range fields {
		ns, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return clock.State{}, fmt.Errorf("clock offset of client %s: %w", id, err)
		}
		st.Clients[id] = time.Duration(ns)
	}
	return st, nil
}

// int64Of reads an integer a GET returned; a missing key is 0.
func int64Of(cmd *redis.StringCmd) (int64, error) {
	n, err := cmd.Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	return n, err
}

// sync reads the shared clock and runtime clients' version in one round
// trip and brings this replica's copies up to date.
func (sh *sharedState) sync(ctx context.Context) error {
	var read clockRead
	var clients *redis.StringCmd
	_, err := sh.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		read = queueClockRead(ctx, p)
		clients = p.Get(ctx, keyClientsVersion)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return sharedFailure("read the shared state", err)
	}
	st, err := read.state()
	if err != nil {
		return fmt.Errorf("read the shared clock: %w", err)
	}
	sh.clocks.Apply(st)
	version, err := int64Of(clients)
	if err != nil {
		return fmt.Errorf("read the runtime clients' version: %w", err)
	}
	return sh.provider.SyncClients(version)
}

// clientsChanged tells the other replicas to reload their runtime clients.
func (sh *sharedState) clientsChanged() error {
	if err := sh.rdb.Incr(context.Background(), keyClientsVersion).Err(); err != nil {
		return sharedFailure("bump the runtime clients' version", err)
	}
	return nil
}

// ping checks Redis for the health check, within a short time.
func (sh *sharedState) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return sh.rdb.Ping(ctx).Err()
}

// withShared brings the replica in step with the others before serving a
// request, and answers 503 with Retry-After when Redis cannot be reached:
// serving from this replica's own copy would silently disagree with the
// others. The health check answers for itself (serveHealth).
func (s *Server) withShared(next http.Handler) http.Handler {
	if s.shared == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/__sandbox/health" {
			next.ServeHTTP(w, r)
			return
		}
		if err := s.shared.sync(r.Context()); err != nil {
			s.log.Error("shared state unavailable", "request_id", requestID(r), "err", err)
			s.unavailable(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// unavailable answers a request that needs Redis while it is unreachable:
// 503 with Retry-After, in Entra's shape (temporarily_unavailable) on the
// token endpoint, problem+json elsewhere.
func (s *Server) unavailable(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Retry-After", strconv.Itoa(sharedRetryAfter))
	if endpointOf(r) == scenarios.EndpointToken {
		idp.WriteTokenError(w, r, s.cfg.Clock.Now(), idp.Unavailable())
		return
	}
	s.problem(w, r, newProblem(http.StatusServiceUnavailable,
		"the sandbox's shared state (Redis) cannot be reached; retry after "+strconv.Itoa(sharedRetryAfter)+" second(s)"))
}

// useSharedState picks where the clocks, runtime clients' changes and rate
// limit buckets live: in this process, or in Redis (Config.Redis).
func (s *Server) useSharedState() {
	if s.cfg.Redis == nil {
		s.clocks = localClocks{global: s.cfg.Clock, per: s.cfg.ClientClocks}
		s.limiter = newRateLimiter(s.cfg.Provider, s.cfg.RateLimit, s.cfg.RateBurst, newMemoryBuckets())
		return
	}
	s.shared = &sharedState{rdb: s.cfg.Redis, clocks: s.cfg.ClientClocks, provider: s.cfg.Provider}
	s.cfg.Provider.UseClientSync(s.shared.clientsChanged)
	s.clocks = sharedClocks{sh: s.shared}
	s.limiter = newRateLimiter(s.cfg.Provider, s.cfg.RateLimit, s.cfg.RateBurst, sharedBuckets{rdb: s.cfg.Redis})
}

// healthDegraded is the health check's body when shared state is missing.
type healthDegraded struct {
	Status string `json:"status"`
	Reason string `json:"reason"`
}

// degraded answers the health check 503 {"status":"degraded"} with
// Retry-After when the shared state (Redis) cannot be reached, so a load
// balancer stops sending requests this replica would refuse. The reason
// names Redis, never its URL (it may hold a password).
func (s *Server) degraded(w http.ResponseWriter, r *http.Request) bool {
	if s.shared == nil {
		return false
	}
	if err := s.shared.ping(r.Context()); err != nil {
		s.log.Warn("health check: redis unreachable", "err", err)
		w.Header().Set("Retry-After", strconv.Itoa(sharedRetryAfter))
		writeJSON(w, http.StatusServiceUnavailable, healthDegraded{Status: "degraded", Reason: "redis unreachable: the shared state of this replica cannot be read"})
		return true
	}
	return false
}
