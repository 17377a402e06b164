package backend

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/internal/batch"
)

// sharedKeys are the keys of the versions a replica reads before each
// request, and of the shared clock.
type sharedKeys struct {
	// clock is the shared clock's keys (clock.Redis).
	clock clock.RedisKeys
	// clientsVersion grows with every runtime client change, in the same
	// script (idp.RedisClients); a replica that sees a new value reloads
	// its runtime clients.
	clientsVersion string
	// rulesVersion grows with every change of the failure rules
	// (scenarios.RedisEngine.VersionKey).
	rulesVersion string
}

// sharedState brings one replica in step with the others before each
// request. Every clock move, runtime client change and rule change bumps a
// version; one MGET of the three versions tells the replica whether its
// copies are current, and only what changed is read again.
//
// That read costs a round trip, so a replica reuses one for requests that
// arrive within sharedSettle of its start, and every change waits
// sharedSettle once stored before it is acknowledged (commit wait). A
// request that arrives after a change was acknowledged, through any
// replica, therefore always uses a read that began after the change was
// stored: exactly as strict as a read per request. A busy replica starts
// the next read in the background once the current one is half that old
// (readAhead), so its requests hardly ever wait for Redis; requests that
// find no recent read share the next one (batch.Batcher). Either way a
// busy replica reads its versions a few hundred times a second, whatever
// its request rate, and an idle one not at all.
//
// The window is measured on the monotonic real clock, never the sandbox's
// adjustable one: it is about when Redis saw what, not about token times.
type sharedState struct {
	rdb    redis.UniversalClient
	keys   sharedKeys
	clocks *clock.PerClient
	clock  *clock.Redis
	// provider reloads its runtime clients when their version moves; set
	// by Backend.Bind before the first request.
	provider *idp.Provider
	reads    *batch.Batcher[struct{}, sharedVersions]

	// readingAhead is set while a readAhead read runs.
	readingAhead atomic.Bool

	mu sync.Mutex
	// last is the newest successful read and when it began.
	last   sharedVersions
	lastAt time.Time
}

// sharedSettle is how long a read of the shared versions is reused, and so
// how long every change waits before it is acknowledged. It must be well
// above what a read takes on a loaded machine, queueing in Go's scheduler
// included (when it is not, requests wait for reads and a replica serves
// fewer of them), and short enough that admin calls hardly notice.
const sharedSettle = 10 * time.Millisecond

// sharedVersions are the versions of the shared state one read saw.
type sharedVersions struct {
	clock, clients, rules int64
}

// maxReadBatch bounds how many waiting requests share one read.
const maxReadBatch = 1024

// newSharedState returns the shared state of one replica.
func newSharedState(rdb redis.UniversalClient, keys sharedKeys, clocks *clock.PerClient) *sharedState {
	sh := &sharedState{rdb: rdb, keys: keys, clocks: clocks, clock: clock.NewRedis(rdb, keys.clock, clocks)}
	sh.reads = batch.New(maxReadBatch, sh.readBatch)
	return sh
}

// sync brings this replica's clock and runtime clients up to date with the
// shared ones, as read at most sharedSettle before the call began, and
// returns the version of the failure rules that read saw.
func (sh *sharedState) sync() (rulesVersion int64, err error) {
	arrived := time.Now()
	sh.mu.Lock()
	age := arrived.Sub(sh.lastAt)
	fresh := !sh.lastAt.IsZero() && age <= sharedSettle
	v := sh.last
	sh.mu.Unlock()
	if fresh && age > sharedSettle/2 {
		sh.readAhead()
	}
	if !fresh {
		v, err = sh.reads.Do(struct{}{})
		return v.rules, err
	}
	// The read is reused, but a runtime client change this replica failed
	// to announce makes it reload its clients from the store all the same.
	if err := sh.provider.SyncClients(context.Background(), v.clients); err != nil {
		return 0, readFailure("reload the runtime clients", err)
	}
	return v.rules, nil
}

// readAhead starts a read in the background, unless one is running, so
// that a busy replica has a new read before the one it uses grows too old
// and its requests rarely wait for Redis. An idle replica reads nothing.
func (sh *sharedState) readAhead() {
	if !sh.readingAhead.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer sh.readingAhead.Store(false)
		_, _ = sh.reads.Do(struct{}{}) // a failure shows on the next request
	}()
}

// ping checks Redis for the health check, within a short time.
func (sh *sharedState) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return sh.rdb.Ping(ctx).Err()
}

// settle waits out the window in which replicas may still reuse a read
// from before a change this replica has just stored (see sharedState).
func (sh *sharedState) settle() { time.Sleep(sharedSettle) }

// readBatch is one read shared by a batch of requests: the three versions
// in one MGET, then the clock again only when its version moved, and the
// runtime clients (from the store) only when theirs did.
func (sh *sharedState) readBatch(waiting []struct{}) ([]sharedVersions, error) {
	ctx := context.Background() // bounded by --redis-timeout
	began := time.Now()
	vals, err := sh.rdb.MGet(ctx, sh.keys.clock.Version, sh.keys.clientsVersion, sh.keys.rulesVersion).Result()
	if err != nil {
		return nil, readFailure("read the shared state", err)
	}
	var v sharedVersions
	for i, dst := range []*int64{&v.clock, &v.clients, &v.rules} {
		if *dst, err = versionOf(vals[i]); err != nil {
			return nil, fmt.Errorf("read the shared state: version %d: %w", i, err)
		}
	}
	if v.clock != sh.clocks.Version() {
		if err := sh.clock.Read(ctx); err != nil {
			return nil, readFailure("read the shared clock", err)
		}
	}
	if err := sh.provider.SyncClients(ctx, v.clients); err != nil {
		return nil, readFailure("reload the runtime clients", err)
	}
	sh.mu.Lock()
	if began.After(sh.lastAt) {
		sh.last, sh.lastAt = v, began
	}
	sh.mu.Unlock()
	out := make([]sharedVersions, len(waiting))
	for i := range out {
		out[i] = v
	}
	return out, nil
}

// versionOf decodes one value of an MGET of versions; a missing key is 0.
func versionOf(val any) (int64, error) {
	switch val := val.(type) {
	case nil:
		return 0, nil
	case string:
		return strconv.ParseInt(val, 10, 64)
	default:
		return 0, fmt.Errorf("unexpected %T", val)
	}
}

// ExpireRead makes the next request read the shared versions from Redis,
// as it does once the last read is older than sharedSettle, without
// waiting that long; tests use it to see each read. A read ahead still
// running is waited for first (see ReadingAhead), so that none lands
// after. In this process it does nothing.
func (b *Backend) ExpireRead(ctx context.Context) error {
	if b.sync == nil {
		return nil
	}
	if err := b.WaitReadAhead(ctx); err != nil {
		return err
	}
	b.sync.mu.Lock()
	b.sync.lastAt = time.Time{}
	b.sync.mu.Unlock()
	return nil
}

// WaitReadAhead returns once no read ahead of the shared versions runs, or
// with ctx's error. A request starts one before it is answered, and one
// clears its mark only after its read, so once answers are in, its return
// means their reads are done.
func (b *Backend) WaitReadAhead(ctx context.Context) error {
	if b.sync == nil {
		return nil
	}
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for b.sync.readingAhead.Load() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("a read ahead of the shared versions is still running: %w", ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}
