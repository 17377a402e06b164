package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/collectors"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// faultRequestTimeout bounds each request of the suite: a request to a
// SIGSTOPped replica ends as a transport error, which the checkers count
// as an operation of unknown outcome.
const faultRequestTimeout = 8 * time.Second

// faultHarness is the replicas, their proxies, Redis and what the
// workers saw.
type faultHarness struct {
	t *testing.T
	// redis is the single Redis, or cluster the Redis Cluster.
	redis    *redistest.Server
	cluster  *redistest.Cluster
	replicas []*faultReplica
	c        *http.Client
	// kinds are the faults the nemesis draws from.
	kinds []string

	acked, reads, unavailable, transportErrs atomic.Int64

	mu        sync.Mutex
	history   []recordOp
	ackedKeys []string
	anomalies []string
	faults    map[string]int
	// failovers are when a cluster master was killed or stopped for its
	// replica to take over: what an unconfirmed write may be lost to.
	failovers []time.Time
}

// failoverSince reports whether a master failed over at or after t.
func (h *faultHarness) failoverSince(t time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, f := range h.failovers {
		if !f.Before(t) {
			return true
		}
	}
	return false
}

// failingOver records that a master is about to be killed or stopped.
func (h *faultHarness) failingOver() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failovers = append(h.failovers, time.Now())
}

// faultReplica is one sandbox binary and its own proxies to Redis: one to
// the single Redis, or one per cluster node, which it reaches through
// --redis-cluster-nat-map; it keeps its port across restarts, so tokens it
// issued stay valid.
type faultReplica struct {
	port    int
	proxies []*toxiproxy.Proxy
	args    []string
	// log is the replica's standard error across its restarts, where a
	// 500's trace id leads.
	log *testutil.LockedBuffer

	mu   sync.Mutex
	proc *exec.Cmd
	done chan struct{}
	// tokens are one access token per partner, issued by this replica.
	tokens []string
}

func (r *faultReplica) base() string { return "http://127.0.0.1:" + strconv.Itoa(r.port) }

func startFaultHarness(t *testing.T, n int) *faultHarness {
	t.Helper()
	h := &faultHarness{t: t, redis: redistest.Start(t), c: newClient(32), faults: map[string]int{}, kinds: faultKinds}
	h.c.Timeout = faultRequestTimeout
	server := newToxiproxyServer()
	for i := range n {
		proxy := startProxy(t, server, fmt.Sprintf("replica-%d", i), h.redis.Addr)
		h.addReplica([]*toxiproxy.Proxy{proxy}, "--redis", "redis://"+proxy.Listen+"/0")
	}
	return h
}

// newToxiproxyServer is the in-process toxiproxy the proxies belong to.
func newToxiproxyServer() *toxiproxy.ApiServer {
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	server.Metrics.ProxyMetrics = collectors.NewProxyMetricCollectors()
	return server
}

// startProxy starts a proxy named name to upstream on a free loopback
// port, stopped when the test ends.
func startProxy(t *testing.T, server *toxiproxy.ApiServer, name, upstream string) *toxiproxy.Proxy {
	t.Helper()
	proxy := toxiproxy.NewProxy(server, name, "127.0.0.1:0", upstream)
	if err := proxy.Start(); err != nil {
		t.Fatalf("start the proxy %s: %v", name, err)
	}
	t.Cleanup(proxy.Stop)
	return proxy
}

// addReplica starts one replica with the shared-mode flags given and
// fetches its partners' tokens.
func (h *faultHarness) addReplica(proxies []*toxiproxy.Proxy, shared ...string) {
	t := h.t
	r := &faultReplica{port: freePort(t), proxies: proxies, log: &testutil.LockedBuffer{}}
	// No rate limit and no store quota: the suite checks what replicas
	// acknowledge under faults, and its writers store more than a
	// client's default quota in a long run.
	r.args = append([]string{"serve", "--addr", "127.0.0.1:" + strconv.Itoa(r.port), "--rate-limit", "0", "--log-format", "json", "--log-level", "warn",
		"--redis-timeout", "2s", "--quota-records", "0", "--quota-bytes", "0"}, shared...)
	h.start(r)
	t.Cleanup(func() { h.kill(r) })
	for _, p := range partners {
		r.tokens = append(r.tokens, mustToken(t, h.c, r.base(), p.id, p.secret))
	}
	h.replicas = append(h.replicas, r)
}

// start runs r's binary and waits until it answers its health check.
func (h *faultHarness) start(r *faultReplica) {
	h.t.Helper()
	cmd := exec.Command(sandboxBinary, r.args...)
	stderr := r.log
	cmd.Stdout, cmd.Stderr = io.Discard, stderr
	if err := cmd.Start(); err != nil {
		h.t.Fatalf("start a replica: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	r.mu.Lock()
	r.proc, r.done = cmd, done
	r.mu.Unlock()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		a, err := do(h.t.Context(), h.c, http.MethodGet, r.base()+"/__sandbox/health", "", "", nil, nil)
		if err == nil && a.status == http.StatusOK {
			return
		}
		select {
		case <-done:
			h.t.Fatalf("a replica exited at start:\n%s", stderr)
		case <-time.After(50 * time.Millisecond):
		}
	}
	h.t.Fatalf("a replica did not become healthy within 60s:\n%s", stderr)
}

func (h *faultHarness) kill(r *faultReplica) {
	r.mu.Lock()
	cmd, done := r.proc, r.done
	r.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGCONT)
	_ = cmd.Process.Kill()
	<-done
}

func (h *faultHarness) signal(r *faultReplica, sig syscall.Signal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_ = r.proc.Process.Signal(sig)
}

func (h *faultHarness) replica(i int) *faultReplica { return h.replicas[i%len(h.replicas)] }

func (h *faultHarness) anomaly(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.anomalies = append(h.anomalies, fmt.Sprintf(format, args...))
}

// logged returns the replicas' log lines that name the trace id of a
// problem answer, so that an unexplained 500 arrives with its cause.
func (h *faultHarness) logged(a answer) string {
	var problem struct {
		TraceID string `json:"traceId"`
	}
	if json.Unmarshal(a.body, &problem) != nil || problem.TraceID == "" {
		return ""
	}
	var lines []string
	for _, r := range h.replicas {
		for line := range strings.Lines(r.log.String()) {
			if strings.Contains(line, problem.TraceID) {
				lines = append(lines, strings.TrimSpace(line))
			}
		}
	}
	return "\n\tlogged: " + strings.Join(lines, "\n\tlogged: ")
}

// check503 holds a 503 to the documented shape: Retry-After set.
func (h *faultHarness) check503(a answer, what string) {
	h.unavailable.Add(1)
	if a.header.Get("Retry-After") == "" {
		h.anomaly("%s: 503 without Retry-After: %s", what, truncate(a.body))
	}
}

func (h *faultHarness) get(r *faultReplica, path, token string) (answer, error) {
	a, err := do(h.t.Context(), h.c, http.MethodGet, r.base()+path, token, "", nil, nil)
	if err != nil {
		h.transportErrs.Add(1)
	}
	return a, err
}

// writeOne submits a referral through a random replica and records the
// acknowledged write, then reads it back through another.
func (h *faultHarness) writeOne(w, n int, rng *rand.Rand) {
	r := h.replica(rng.IntN(len(h.replicas)))
	req := referralRequest{TrialID: "TRIAL-CARDIO-001", Notes: fmt.Sprintf("faults-w%d-%d", w, n),
		Patient: referrals.Patient{FirstName: "Kim", LastName: fmt.Sprintf("Writer%d", w), DateOfBirth: "1970-01-01", Gender: "unknown"}}
	body, _ := json.Marshal(req)
	call := time.Now().UnixNano()
	a, err := do(h.t.Context(), h.c, http.MethodPost, r.base()+"/api/v1/referrals/", r.tokens[0], jsonType, body, nil)
	ret := time.Now().UnixNano()
	switch {
	case err != nil:
		h.transportErrs.Add(1)
		return // unknown outcome: its id is unknown, so no read can name it
	case a.status == http.StatusServiceUnavailable:
		h.check503(a, "POST /api/v1/referrals/")
		return
	case a.status != http.StatusCreated:
		h.anomaly("POST /api/v1/referrals/ through %s: %d %s%s", r.base(), a.status, truncate(a.body), h.logged(a))
		return
	}
	key := a.header.Get("Location")
	if key == "" {
		h.anomaly("POST /api/v1/referrals/ answered 201 without Location")
		return
	}
	h.acked.Add(1)
	h.mu.Lock()
	h.history = append(h.history, recordOp{client: w, key: key, write: true, value: normalise(a.body), call: call, ret: ret})
	h.ackedKeys = append(h.ackedKeys, key)
	h.mu.Unlock()
	h.readOne(w, key, rng)
}

func (h *faultHarness) randomAcked(rng *rand.Rand) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.ackedKeys) == 0 {
		return "", false
	}
	return h.ackedKeys[rng.IntN(len(h.ackedKeys))], true
}

// readOne reads key through a random replica and records what it saw.
func (h *faultHarness) readOne(w int, key string, rng *rand.Rand) {
	r := h.replica(rng.IntN(len(h.replicas)))
	call := time.Now().UnixNano()
	a, err := h.get(r, key, r.tokens[0])
	ret := time.Now().UnixNano()
	if err != nil {
		return
	}
	h.reads.Add(1)
	op := recordOp{client: w, key: key, call: call, ret: ret}
	switch a.status {
	case http.StatusOK:
		op.value = normalise(a.body)
	case http.StatusNotFound:
		op.value = "" // missing
	case http.StatusServiceUnavailable:
		h.check503(a, "GET "+key)
		return
	default:
		h.anomaly("GET %s through %s: %d %s%s", key, r.base(), a.status, truncate(a.body), h.logged(a))
		return
	}
	h.mu.Lock()
	h.history = append(h.history, op)
	h.mu.Unlock()
}

// normalise is a referral's body without fields a read may add (none
// today; the whole body is compared).
func normalise(b []byte) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return string(b)
	}
	return buf.String()
}
