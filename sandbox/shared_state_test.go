package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// sharedReplicas is n sandboxes on one Redis and one store, as replicas
// behind a load balancer: each has its own clock, identity provider and
// validation cache, and learns the others' changes only through Redis.
type sharedReplicas struct {
	all   []*testSandbox
	redis *redistest.Server
	trips *roundTrips // of the first replica's Redis client
}

// roundTrips counts the round trips a go-redis client makes: one per
// command or pipeline sent, and names them. While loseClientChange is
// set, a runtime client change runs and its reply is lost, as when Redis
// goes between the command and its answer.
type roundTrips struct {
	n                atomic.Int64
	loseClientChange atomic.Bool
	mu               sync.Mutex
	names            []string
}

// record counts one round trip named name.
func (c *roundTrips) record(name string) {
	c.n.Add(1)
	c.mu.Lock()
	c.names = append(c.names, name)
	c.mu.Unlock()
}

// since returns the names of the round trips after the first n, sorted.
func (c *roundTrips) since(n int64) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Clone(c.names[n:])
	slices.Sort(out)
	return out
}

func (c *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.record(cmd.Name())
		if c.loseClientChange.Load() && (cmd.Name() == "evalsha" || cmd.Name() == "eval") && strings.Contains(fmt.Sprint(cmd.Args()), "clients:runtime") {
			if err := next(ctx, cmd); err != nil {
				return err // NOSCRIPT: go-redis sends the script itself next
			}
			cmd.SetErr(errors.New("connection reset by test after the command ran"))
			return cmd.Err()
		}
		return next(ctx, cmd)
	}
}

func (c *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.record("pipeline")
		return next(ctx, cmds)
	}
}

func newSharedReplicas(t *testing.T, n int, opts ...sandboxOption) *sharedReplicas {
	t.Helper()
	srv := redistest.Start(t)
	st, err := store.Open(store.MemoryPath) // one store: the records are not this test's subject
	if err != nil {
		t.Fatal(err)
	}
	rs := &sharedReplicas{redis: srv, trips: &roundTrips{}}
	for i := range n {
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1})
		if i == 0 {
			rdb.AddHook(rs.trips)
		}
		t.Cleanup(func() { _ = rdb.Close() })
		shared := func(c *sandboxConfig) { c.Redis = rdb }
		rs.all = append(rs.all, newSandbox(t, append([]sandboxOption{useStore(st), shared}, opts...)...))
	}
	return rs
}

// get is GET trials with tok through one replica.
func get(s *testSandbox, tok string) *response {
	s.t.Helper()
	return s.do(request{path: trialsPath, token: tok, plain: true})
}

func TestSharedClockAdvanceThroughOneReplicaExpiresTokensOnAnother(t *testing.T) {
	rs := newSharedReplicas(t, 2)
	a, b := rs.all[0], rs.all[1]
	tok := b.token(partner)
	if r := get(b, tok); r.Status != http.StatusOK {
		t.Fatalf("fresh token on B: %d %s", r.Status, r.Body)
	}
	a.advance(2 * time.Hour)
	if r := get(b, tok); r.Status != http.StatusUnauthorized {
		t.Fatalf("token on B after a 2h advance through A: %d %s, want 401", r.Status, r.Body)
	}
	var view struct{ Offset string }
	b.admin(http.MethodGet, "/__sandbox/clock", nil).decode(t, &view)
	if view.Offset != "2h0m0s" {
		t.Errorf("B's clock offset %q, want 2h0m0s", view.Offset)
	}
	// A reset through B brings A back to real time too.
	if r := b.admin(http.MethodPost, "/__sandbox/clock", map[string]any{"reset": true}); r.Status != http.StatusOK {
		t.Fatalf("reset through B: %d %s", r.Status, r.Body)
	}
	a.admin(http.MethodGet, "/__sandbox/clock", nil).decode(t, &view)
	if view.Offset != "0s" {
		t.Errorf("A's clock offset after a reset through B: %q", view.Offset)
	}
}

func TestSharedClientClockMovesOneClientOnEveryReplica(t *testing.T) {
	rs := newSharedReplicas(t, 2)
	a, b := rs.all[0], rs.all[1]
	mine, other := b.token(partner), b.token(partner2)
	r := a.admin(http.MethodPost, "/__sandbox/clock", map[string]any{"clientId": partner, "advance": "2h"})
	if r.Status != http.StatusOK {
		t.Fatalf("advance %s's clock through A: %d %s", partner, r.Status, r.Body)
	}
	if r := get(b, mine); r.Status != http.StatusUnauthorized {
		t.Errorf("%s's token on B after its clock moved through A: %d, want 401", partner, r.Status)
	}
	if r := get(b, other); r.Status != http.StatusOK {
		t.Errorf("%s's token on B moved with %s's clock: %d %s", partner2, partner, r.Status, r.Body)
	}
}

func TestSharedRuntimeClientsAcrossReplicas(t *testing.T) {
	rs := newSharedReplicas(t, 3)
	a, b, c := rs.all[0], rs.all[1], rs.all[2]
	cl := a.newClient(nil)
	// Each replica issues its own tokens: their issuer is the address the
	// token was asked at, which replicas behind one balancer share.
	tokens := []string{b.clientToken(cl), c.clientToken(cl)} // B and C never saw the client created
	for i, s := range []*testSandbox{b, c} {
		if r := get(s, tokens[i]); r.Status != http.StatusOK {
			t.Fatalf("runtime client's token on replica %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	if r := b.admin(http.MethodGet, "/__sandbox/clients/"+cl.ClientID, nil); r.Status != http.StatusOK {
		t.Errorf("GET the client created on A through B: %d %s", r.Status, r.Body)
	}
	// A secret rotated through A works on C, and removing the first one
	// through A makes C refuse it.
	added := a.admin(http.MethodPost, "/__sandbox/clients/"+cl.ClientID+"/secrets", nil)
	var rotated runtimeClient
	added.decode(t, &rotated)
	if added.Status != http.StatusCreated || rotated.ClientSecret == "" {
		t.Fatalf("add a secret through A: %d %s", added.Status, added.Body)
	}
	if r := c.tokenResponse(cl.ClientID, rotated.ClientSecret, apiScope); r.Status != http.StatusOK {
		t.Errorf("the secret added through A on C: %d %s", r.Status, r.Body)
	}
	if r := a.admin(http.MethodDelete, "/__sandbox/clients/"+cl.ClientID+"/secrets/"+cl.SecretID, nil); r.Status >= 300 {
		t.Fatalf("delete the first secret through A: %d %s", r.Status, r.Body)
	}
	if r := c.tokenResponse(cl.ClientID, cl.ClientSecret, apiScope); r.Status != http.StatusUnauthorized {
		t.Errorf("the secret deleted through A on C: %d %s, want 401", r.Status, r.Body)
	}
	if r := a.admin(http.MethodDelete, "/__sandbox/clients/"+cl.ClientID, nil); r.Status != http.StatusNoContent && r.Status != http.StatusOK {
		t.Fatalf("delete through A: %d %s", r.Status, r.Body)
	}
	for i, s := range []*testSandbox{b, c} {
		r := get(s, tokens[i])
		if r.Status != http.StatusUnauthorized {
			t.Errorf("deleted client's cached token on replica %d: %d %s, want 401", i+1, r.Status, r.Body)
		} else if p := r.problem(t); !strings.Contains(p.Detail, "was deleted") {
			t.Errorf("replica %d refuses a deleted client's token without saying so: %q", i+1, p.Detail)
		}
		if r := s.tokenResponse(cl.ClientID, cl.ClientSecret, apiScope); r.Status == http.StatusOK {
			t.Errorf("deleted client got a token from replica %d", i+1)
		}
	}
}

func TestSharedRateLimitBurstAcrossReplicas(t *testing.T) {
	rs := newSharedReplicas(t, 2, withRateLimit(slowRate, 5))
	a, b := rs.all[0], rs.all[1]
	tokens := map[*testSandbox]string{a: a.token(partner), b: b.token(partner)}
	for i, s := range []*testSandbox{a, b, a, b, a} {
		r := get(s, tokens[s])
		if r.Status != http.StatusOK {
			t.Fatalf("request %d of a burst of 5: %d %s", i+1, r.Status, r.Body)
		}
		if got, want := r.Header.Get("RateLimit-Remaining"), string(rune('0'+4-i)); got != want {
			t.Errorf("request %d: RateLimit-Remaining %q, want %s", i+1, got, want)
		}
		if got := r.Header.Get("RateLimit-Limit"); got != "5" {
			t.Errorf("request %d: RateLimit-Limit %q, want 5", i+1, got)
		}
	}
	r := get(b, tokens[b])
	if r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
		t.Fatalf("6th request, on B: %d Retry-After %q, want 429 with Retry-After", r.Status, r.Header.Get("Retry-After"))
	}
	r.problem(t)
	// A reset through B refills the bucket A spends from.
	if r := b.admin(http.MethodPost, "/__sandbox/reset", map[string]any{"clientId": partner}); r.Status != http.StatusOK {
		t.Fatalf("reset %s through B: %d %s", partner, r.Status, r.Body)
	}
	if r := get(a, tokens[a]); r.Status != http.StatusOK || r.Header.Get("RateLimit-Remaining") != "4" {
		t.Errorf("on A after a reset through B: %d RateLimit-Remaining %q, want 200 and 4", r.Status, r.Header.Get("RateLimit-Remaining"))
	}
	for range 4 {
		get(b, tokens[b])
	}
	// The sandbox clock refills the shared bucket, as it does in process.
	a.advance(time.Minute)
	if r := get(b, tokens[b]); r.Status != http.StatusOK {
		t.Errorf("after a clock advance through A, on B: %d %s", r.Status, r.Body)
	}
}

func TestSharedRedisOutageAnswers503AndRecovers(t *testing.T) {
	rs := newSharedReplicas(t, 2)
	a, b := rs.all[0], rs.all[1]
	tok := a.token(partner)
	rs.redis.Stop(t)

	r := get(a, tok)
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Fatalf("API with Redis down: %d Retry-After %q, want 503 with Retry-After", r.Status, r.Header.Get("Retry-After"))
	}
	if p := r.problem(t); !strings.Contains(p.Detail, "Redis") {
		t.Errorf("problem detail %q does not say Redis is unreachable", p.Detail)
	}
	tr := tokenPlain(t, b, partner)
	if tr.Status != http.StatusServiceUnavailable || tr.Header.Get("Retry-After") == "" {
		t.Fatalf("token endpoint with Redis down: %d Retry-After %q", tr.Status, tr.Header.Get("Retry-After"))
	}
	var te idp.ErrorBody
	tr.decode(t, &te)
	if te.Error != "temporarily_unavailable" {
		t.Errorf("token endpoint error %q, want temporarily_unavailable", te.Error)
	}
	if strings.Contains(string(tr.Body), partner+"-secret") {
		t.Error("the token endpoint's 503 quotes the client secret")
	}
	h := b.do(request{path: "/__sandbox/health", plain: true})
	var health struct{ Status, Reason string }
	h.decode(t, &health)
	if h.Status != http.StatusServiceUnavailable || health.Status != "degraded" || health.Reason == "" {
		t.Errorf("health with Redis down: %d %s", h.Status, h.Body)
	}

	rs.redis.Restart(t)
	if h := b.do(request{path: "/__sandbox/health", plain: true}); h.Status != http.StatusOK {
		t.Errorf("health after Redis returned: %d %s", h.Status, h.Body)
	}
	if r := get(a, tok); r.Status != http.StatusOK {
		t.Errorf("API after Redis returned: %d %s", r.Status, r.Body)
	}
	if r := tokenPlain(t, b, partner); r.Status != http.StatusOK {
		t.Errorf("token endpoint after Redis returned: %d %s", r.Status, r.Body)
	}
}

// tokenPlain asks s for a token without the contract check (a 503 from
// the shared state is not one of the token endpoint's documented answers
// to check a body against).
func tokenPlain(t *testing.T, s *testSandbox, clientID string) *response {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {clientID}, "client_secret": {clientID + "-secret"}, "scope": {apiScope}}
	return s.do(request{method: http.MethodPost, path: "/" + idp.DefaultTenant + "/oauth2/v2.0/token", body: form.Encode(),
		headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, plain: true})
}

func TestSharedRoundTripsPerAuthenticatedGet(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  []sandboxOption
		trips []string // sorted
	}{
		// One MGET of the versions (clock, clients, rules), one EVALSHA
		// for the bucket when limiting is on, and one script appending
		// the journal entry (in the background, after the answer).
		{name: "rate-limited", opts: []sandboxOption{withRateLimit(1000, 2000)}, trips: []string{"evalsha", "evalsha", "mget"}},
		{name: "no rate limit", opts: []sandboxOption{withRateLimit(0, 0)}, trips: []string{"evalsha", "mget"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := newSharedReplicas(t, 1, tc.opts...)
			a := rs.all[0]
			tok := a.token(partner)
			if r := get(a, tok); r.Status != http.StatusOK { // caches the validated token, loads the script
				t.Fatalf("first GET: %d %s", r.Status, r.Body)
			}
			// Reading the journal waits for the first GET's entry.
			if r := a.admin(http.MethodGet, "/__sandbox/requests", nil); r.Status != http.StatusOK {
				t.Fatalf("journal: %d %s", r.Status, r.Body)
			}
			// As past the window in which a read is reused (once any read
			// ahead the journal read started is over): this GET reads.
			sandbox.ExpireSharedRead(t, a.server)
			before := rs.trips.n.Load()
			if r := get(a, tok); r.Status != http.StatusOK {
				t.Fatalf("second GET: %d %s", r.Status, r.Body)
			}
			waitForTrips(t, rs.trips, before, int64(len(tc.trips)))
			// Its journal entry stored and no read ahead running, the GET
			// has made every round trip it will: one too many shows.
			sandbox.WaitBackground(t, a.server)
			if got := rs.trips.since(before); !slices.Equal(got, tc.trips) {
				t.Errorf("Redis round trips of one authenticated GET: %v, want %v", got, tc.trips)
			}
		})
	}
}

// waitForTrips waits (5 s at most) until n round trips follow the first
// before: the journal appends its entries in the background.
func waitForTrips(t *testing.T, c *roundTrips, before, n int64) {
	t.Helper()
	testutil.Eventually(t, 5*time.Second, func() error {
		if got := c.n.Load() - before; got < n {
			return fmt.Errorf("%d Redis round trips, want %d: %v", got, n, c.since(before))
		}
		return nil
	})
}

// Requests on B run while A moves the clock and creates clients: B's
// copies change under its own requests (run with -race). Once A's last
// move is acknowledged, B's next request sees all of them.
func TestSharedStateChangesUnderConcurrentRequests(t *testing.T) {
	rs := newSharedReplicas(t, 2)
	a, b := rs.all[0], rs.all[1]
	tok := b.token(partner)
	stop := loadOn(func() bool {
		if r := get(b, tok); r.Status != http.StatusOK && r.Status != http.StatusUnauthorized {
			t.Errorf("GET on B during moves: %d %s", r.Status, r.Body)
			return false
		}
		return true
	})
	for range 5 {
		a.advance(time.Minute)
		a.newClient(nil)
	}
	stop()
	var view struct{ Offset string }
	b.admin(http.MethodGet, "/__sandbox/clock", nil).decode(t, &view)
	if view.Offset != "5m0s" {
		t.Errorf("B's offset after five 1m advances through A: %q", view.Offset)
	}
	var list struct{ Clients []struct{ Origin string } }
	b.admin(http.MethodGet, "/__sandbox/clients", nil).decode(t, &list)
	runtime := 0
	for _, c := range list.Clients {
		if c.Origin == "runtime" {
			runtime++
		}
	}
	if runtime != 5 {
		t.Errorf("B lists %d runtime clients, want the 5 created on A", runtime)
	}
}

// Redis failing after the per-request read, once the runtime client
// change ran: the admin API answers 503 with Retry-After, not 500, and
// the replica reloads what Redis has rather than trust its own copy.
func TestSharedRedisFailingMidRequestAnswers503(t *testing.T) {
	rs := newSharedReplicas(t, 1)
	a := rs.all[0]
	rs.trips.loseClientChange.Store(true)
	r := a.do(request{method: http.MethodPost, path: "/__sandbox/clients", body: map[string]any{}, plain: true})
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Fatalf("create a client while Redis fails: %d Retry-After %q %s", r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	r.problem(t)
	if strings.Contains(string(r.Body), "8Q~") {
		t.Error("the 503 shows the new client's secret")
	}
	// The store kept the client; once Redis answers, this replica lists
	// what the store has rather than its own stale copy.
	rs.trips.loseClientChange.Store(false)
	var list struct{ Clients []struct{ Origin string } }
	a.admin(http.MethodGet, "/__sandbox/clients", nil).decode(t, &list)
	if n := len(list.Clients); n != 6 {
		t.Errorf("%d clients listed after the failed announcement, want the 5 fixtures and the stored one", n)
	}
}

// A change acknowledged through one replica is seen by the very next
// request through another, even while that replica is busy and reuses
// recent reads of the shared state: every change waits out the reuse
// window before it is acknowledged. Rounds of rule, clock and runtime
// client changes run while a load keeps B's read fresh.
func TestSharedAcknowledgedChangesAreSeenAtOnceUnderLoad(t *testing.T) {
	t.Parallel() // on its own Redis
	rs := newSharedReplicas(t, 2)
	a, b := rs.all[0], rs.all[1]
	tok := b.token(partner)
	stop := loadOn(func() bool {
		b.do(request{path: "/health/ping", token: tok, plain: true})
		return true
	})
	defer stop()
	for round := range 10 {
		id := a.addRule(map[string]any{"endpoint": "api", "status": 503})
		if r := get(b, tok); r.Status != http.StatusServiceUnavailable {
			t.Fatalf("round %d: GET on B right after A added a 503 rule: %d, want 503", round, r.Status)
		}
		if r := a.admin(http.MethodDelete, "/__sandbox/scenarios/"+id, nil); r.Status != http.StatusNoContent {
			t.Fatalf("round %d: delete the rule through A: %d %s", round, r.Status, r.Body)
		}
		if r := get(b, tok); r.Status != http.StatusOK {
			t.Fatalf("round %d: GET on B right after A deleted the rule: %d, want 200", round, r.Status)
		}
		a.advance(2 * time.Hour)
		if r := get(b, tok); r.Status != http.StatusUnauthorized {
			t.Fatalf("round %d: GET on B right after a 2h advance through A: %d, want 401", round, r.Status)
		}
		if r := a.admin(http.MethodPost, "/__sandbox/clock", map[string]any{"reset": true}); r.Status != http.StatusOK {
			t.Fatalf("round %d: clock reset through A: %d %s", round, r.Status, r.Body)
		}
		if r := get(b, tok); r.Status != http.StatusOK {
			t.Fatalf("round %d: GET on B right after the clock reset through A: %d, want 200", round, r.Status)
		}
		c := a.newClient(nil)
		if r := b.tokenResponse(c.ClientID, c.ClientSecret, apiScope); r.Status != http.StatusOK {
			t.Fatalf("round %d: token on B right after A created client %s: %d %s", round, c.ClientID, r.Status, r.Body)
		}
		if r := a.admin(http.MethodDelete, "/__sandbox/clients/"+c.ClientID, nil); r.Status != http.StatusNoContent {
			t.Fatalf("round %d: delete client through A: %d %s", round, r.Status, r.Body)
		}
		if r := b.tokenResponse(c.ClientID, c.ClientSecret, apiScope); r.Status == http.StatusOK {
			t.Fatalf("round %d: token on B right after A deleted client %s: 200", round, c.ClientID)
		}
	}
}

// Two sandboxes with their own --redis-prefix on one Redis database share
// nothing: rules, clocks, runtime clients, rate limits, records and
// journal each stay under their own prefix, and no key lies outside both.
func TestSharedPrefixesSeparateSandboxesOnOneRedis(t *testing.T) {
	srv := redistest.Start(t)
	prefixes := []string{"team-a:", "team-b:"}
	var boxes []*testSandbox
	for _, prefix := range prefixes {
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1})
		t.Cleanup(func() { _ = rdb.Close() })
		st, err := store.OpenRedis(rdb, store.WithRedisPrefix(prefix))
		if err != nil {
			t.Fatal(err)
		}
		boxes = append(boxes, newSandbox(t, useStore(st), withRateLimit(1000, 5), func(c *sandboxConfig) {
			c.Redis, c.RedisPrefix = rdb, prefix
		}))
	}
	a, b := boxes[0], boxes[1]
	tokA, tokB := a.token(partner), b.token(partner)

	a.addRule(map[string]any{"endpoint": "api", "status": 503})
	if r := get(b, tokB); r.Status != http.StatusOK {
		t.Errorf("B with a rule on A: %d, want 200", r.Status)
	}
	if r := get(a, tokA); r.Status != http.StatusServiceUnavailable {
		t.Errorf("A with its own rule: %d, want 503", r.Status)
	}
	a.advance(2 * time.Hour)
	if r := get(b, tokB); r.Status != http.StatusOK {
		t.Errorf("B after A's clock moved 2h: %d, want 200", r.Status)
	}
	var list struct{ Clients []struct{ ClientID string } }
	if r := a.do(request{method: http.MethodPost, path: "/__sandbox/clients", body: map[string]any{}, plain: true}); r.Status != http.StatusCreated {
		t.Fatalf("create a client on A: %d %s", r.Status, r.Body)
	}
	b.admin(http.MethodGet, "/__sandbox/clients", nil).decode(t, &list)
	if len(list.Clients) != 5 {
		t.Errorf("B lists %d clients, want its 5 fixtures only", len(list.Clients))
	}
	// B's burst of 5 is its own: A spent nothing from it.
	for i := range 5 {
		if r := get(b, tokB); r.Status != http.StatusOK {
			t.Fatalf("B's request %d of its burst of 5: %d", i+1, r.Status)
		}
	}
	var journal struct{ Requests []struct{ Status int } }
	b.admin(http.MethodGet, "/__sandbox/requests", nil).decode(t, &journal)
	for _, e := range journal.Requests {
		if e.Status == http.StatusServiceUnavailable {
			t.Errorf("B's journal shows A's forced 503")
		}
	}

	var keys []string
	iter := srv.NewClient(t).Scan(context.Background(), 0, "*", 1000).Iterator()
	for iter.Next(context.Background()) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, k := range keys {
		p, _, _ := strings.Cut(k, ":")
		seen[p+":"] = true
		if !slices.Contains(prefixes, p+":") {
			t.Errorf("key %q is under neither sandbox's prefix", k)
		}
	}
	if !seen["team-a:"] || !seen["team-b:"] {
		t.Errorf("keys %v: want keys under both prefixes", keys)
	}
}

// loadOn runs call on four goroutines, over and over until it returns
// false or the returned stop is called; stop waits for them.
func loadOn(call func() bool) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				if !call() {
					return
				}
			}
		})
	}
	return sync.OnceFunc(func() { close(done); wg.Wait() })
}
