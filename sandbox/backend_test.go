package sandbox_test

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// The black-box tests run against both backends: the embedded store with
// everything else in memory, and the shared mode, where records, rules,
// journal, clocks, clients and rate limits live in Redis. The backend is a
// property of the harness (newSandbox), so a test needs no change to run
// in both. SANDBOX_TEST_BACKEND picks:
//
//	memory  the embedded store only
//	redis   Redis only (redis-server must be installed)
//	(unset) memory, then Redis for every test that used the harness, where
//	        redis-server is installed; with REDIS_REQUIRED (CI) a missing
//	        redis-server fails the run instead of skipping Redis
//
// The Redis pass shares one redis-server (no persistence) between the
// package's tests; each sandbox gets a key prefix of its own.
const backendEnv = "SANDBOX_TEST_BACKEND"

// pass is the backend newSandbox builds on in the current pass.
type pass struct {
	name string
	// redisURL is the package's redis-server in the Redis pass, "" in the
	// memory pass.
	redisURL string
}

// The harness state of one pass. TestMain sets it between passes, while
// no test runs; tests only read it (and add to harnessTests).
var (
	current      pass
	prefixes     atomic.Uint64
	harnessTests sync.Map // top-level test names that built a sandbox on the pass's backend
)

func TestMain(m *testing.M) {
	flag.Parse()
	passes, err := backendPasses(os.Getenv(backendEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	parallelByDefault()
	code := 0
	for i, name := range passes {
		if i > 0 {
			// Run again only the tests that used the harness: the others
			// do not depend on the backend.
			names := recordedTests()
			if len(names) == 0 {
				break
			}
			// Keep a subtest pattern given with -run (A/B runs B of A).
			_, sub, nested := strings.Cut(flag.Lookup("test.run").Value.String(), "/")
			pattern := "^(" + strings.Join(names, "|") + ")$"
			if nested {
				pattern += "/" + sub
			}
			must(flag.Set("test.run", pattern))
			// Benchmarks and fuzzing ran once, in the first pass.
			must(flag.Set("test.bench", ""))
			must(flag.Set("test.fuzz", ""))
		}
		code = max(code, runPass(m, name))
	}
	os.Exit(code)
}

// waitingParallel is how many parallel tests run at once per CPU unless
// -parallel says otherwise. Most of the package's parallel tests wait, on
// the server's read-header timeout, on Redis pauses and faults, and on
// held connections, rather than compute: with go test's default of one
// per CPU, two such waits on a 2-core machine held the rest of the
// package back while the CPU sat idle.
const waitingParallel = 4

// parallelByDefault raises -parallel to waitingParallel per CPU when the
// command line did not set it.
func parallelByDefault() {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		must(flag.Set("test.parallel", strconv.Itoa(waitingParallel*runtime.GOMAXPROCS(0))))
	}
}

// backendPasses are the backends to run, in order, for the value of
// SANDBOX_TEST_BACKEND.
func backendPasses(env string) ([]string, error) {
	switch env {
	case "memory":
		return []string{"memory"}, nil
	case "redis":
		if !redistest.Installed() {
			return nil, fmt.Errorf("%s=redis, but redis-server is not installed", backendEnv)
		}
		return []string{"redis"}, nil
	case "":
		if redistest.Installed() {
			return []string{"memory", "redis"}, nil
		}
		if redistest.Required() {
			return nil, fmt.Errorf("REDIS_REQUIRED is set, but redis-server is not installed: the Redis pass of the sandbox tests cannot run")
		}
		fmt.Println("sandbox tests: redis-server is not installed; the Redis backend pass is skipped")
		return []string{"memory"}, nil
	default:
		return nil, fmt.Errorf("%s=%q: want memory, redis, or unset for both", backendEnv, env)
	}
}

// runPass runs the selected tests with newSandbox on the named backend.
func runPass(m *testing.M, name string) int {
	current = pass{name: name}
	harnessTests.Clear()
	if name == "redis" {
		srv, err := redistest.StartMain("")
		if err != nil {
			fmt.Fprintln(os.Stderr, "sandbox tests, redis backend:", err)
			return 1
		}
		defer srv.Close()
		current.redisURL = srv.URL
	}
	fmt.Printf("sandbox tests: %s backend\n", name)
	return m.Run()
}

// recordedTests are the tests of the last pass that used the harness's
// backend, sorted and quoted for -test.run.
func recordedTests() []string {
	var names []string
	harnessTests.Range(func(name, _ any) bool {
		names = append(names, regexp.QuoteMeta(name.(string)))
		return true
	})
	slices.Sort(names)
	return names
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// onBackend puts cfg on the current pass's backend: a fresh in-memory
// store, or in the Redis pass a Redis client, store and shared state under
// a key prefix of this sandbox's own. It returns how to release them.
func onBackend(t *testing.T, cfg *sandboxConfig) (release func()) {
	t.Helper()
	if current.redisURL == "" {
		st, err := store.Open(store.MemoryPath)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Store = st
		return func() { _ = st.Close() }
	}
	opts, err := redis.ParseURL(current.redisURL)
	if err != nil {
		t.Fatal(err)
	}
	opts.ContextTimeoutEnabled = true
	rdb := redis.NewClient(opts)
	prefix := fmt.Sprintf("sandbox-test:%d:", prefixes.Add(1))
	st, err := store.OpenRedis(rdb, store.WithRedisPrefix(prefix))
	if err != nil {
		_ = rdb.Close()
		t.Fatal(err)
	}
	t.Logf("backend: redis at %s, prefix %q", current.redisURL, prefix)
	cfg.Store, cfg.Redis, cfg.RedisPrefix = st, rdb, prefix
	return func() { _ = st.Close(); _ = rdb.Close() }
}

// ownsBackend reports whether the test's options replaced the harness's
// store or Redis with its own (a file store, replicas on a Redis it
// controls): such a test tests its own backend, and runs once, in the
// memory pass.
func ownsBackend(cfg sandboxConfig, harnessStore store.Store, harnessRedis redis.UniversalClient) bool {
	_, onPass := passStores.Load(cfg.Store)
	return (cfg.Store != harnessStore && !onPass) || cfg.Redis != harnessRedis
}

// passStores holds the stores tests opened on the pass's own backend with
// options of their own (withQuota): such a test still runs in both passes.
var passStores sync.Map

// withQuota reopens the sandbox's store on the pass's backend, under the
// same Redis prefix in the Redis pass, bounded by q.
func withQuota(t *testing.T, q store.Quota) sandboxOption {
	return func(cfg *sandboxConfig) {
		var st store.Store
		var err error
		if rdb, ok := cfg.Redis.(*redis.Client); ok && cfg.Redis != nil {
			st, err = store.OpenRedis(rdb, store.WithRedisPrefix(cfg.RedisPrefix), store.WithRedisQuota(q))
		} else {
			st, err = store.Open(store.MemoryPath, store.WithQuota(q))
		}
		if err != nil {
			t.Fatal(err)
		}
		_ = cfg.Store.Close() // the harness's, unused: nothing to lose
		cfg.Store = st
		passStores.Store(st, true)
		t.Cleanup(func() { passStores.Delete(st) })
	}
}

// memoryOnly skips the test in the Redis pass, saying why: for a test of
// behaviour only the in-memory backend has, or one too slow on Redis for
// ./test whose point another test makes there.
func memoryOnly(t *testing.T, reason string) {
	t.Helper()
	if current.name == "redis" {
		t.Skip("memory backend only: " + reason)
	}
}

// recordHarnessTest notes that t built a sandbox on the pass's backend, so
// the Redis pass runs it again.
func recordHarnessTest(t *testing.T) {
	name, _, _ := strings.Cut(t.Name(), "/")
	harnessTests.Store(name, true)
}
