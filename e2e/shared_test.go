package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// jsonType is the content type of the API's and the admin API's bodies.
const jsonType = "application/json"

// replicaSet is three built binaries sharing one Redis, as three replicas
// behind a load balancer; calls go round-robin over them.
type replicaSet struct {
	t     *testing.T
	redis *redistest.Server
	procs []*sandboxProc
	c     *http.Client
}

func startReplicas(t *testing.T, n int) *replicaSet {
	t.Helper()
	rs := &replicaSet{t: t, redis: redistest.Start(t), c: newClient(16)}
	for range n {
		rs.procs = append(rs.procs, startSandbox(t, "--redis", rs.redis.URL, "--log-level", "warn"))
	}
	return rs
}

// base is replica i's root URL (round-robin over the replicas).
func (rs *replicaSet) base(i int) string { return rs.procs[i%len(rs.procs)].base }

// call sends one request and fails the test on a transport error.
func (rs *replicaSet) call(method, u, token string, body any, header http.Header) answer {
	rs.t.Helper()
	var data []byte
	contentType := ""
	if body != nil {
		var err error
		if data, err = json.Marshal(body); err != nil {
			rs.t.Fatal(err)
		}
		contentType = jsonType
	}
	a, err := do(rs.t.Context(), rs.c, method, u, token, contentType, data, header)
	if err != nil {
		rs.t.Fatal(err)
	}
	return a
}

// admin calls the admin API of replica i.
func (rs *replicaSet) admin(i int, method, path string, body any) answer {
	rs.t.Helper()
	if body == nil && method != http.MethodGet {
		body = map[string]any{}
	}
	return rs.call(method, rs.base(i)+path, "", body, nil)
}

// TestReplicasShareEverything is issue 16's end-to-end promise, with three
// sandbox processes on one Redis: records, failure-rule counts, rate
// limits, the clock, reset and the journal are the same whichever replica
// answers.
func TestReplicasShareEverything(t *testing.T) {
	rs := startReplicas(t, 3)
	token := mustToken(t, rs.c, rs.base(0), partners[0].id, partners[0].secret)

	// A referral written through A is read through B and listed through C.
	created := rs.call(http.MethodPost, rs.base(0)+"/api/v1/referrals/", token, referralRequest{
		TrialID: "TRIAL-CARDIO-001",
		Patient: referrals.Patient{FirstName: "Ann", LastName: "Lee", DateOfBirth: "1980-04-12", Gender: "female"},
		Notes:   "shared-mode",
	}, nil)
	if created.status != http.StatusCreated {
		t.Fatalf("create through A: %d %s", created.status, created.body)
	}
	if got := rs.call(http.MethodGet, rs.base(1)+created.header.Get("Location"), token, nil, nil); got.status != http.StatusOK {
		t.Errorf("read through B: %d %s", got.status, got.body)
	}
	var ref referrals.Referral
	_ = json.Unmarshal(created.body, &ref)
	listed := false
	for _, r := range listAllReferrals(t, rs.c, rs.base(2), token, 1000) {
		listed = listed || r.OutcomesID == ref.OutcomesID
	}
	if !listed {
		t.Error("the referral written through A is not listed through C")
	}

	// A times: 3 rule gives exactly three forced answers across 60
	// parallel requests spread over the three replicas.
	if a := rs.admin(0, http.MethodPost, "/__sandbox/scenarios", map[string]any{"endpoint": "api", "path": "/api/v1/referrals/trials", "status": 503, "times": 3}); a.status != http.StatusCreated {
		t.Fatalf("add rule: %d %s", a.status, a.body)
	}
	statuses := rs.parallelGets(60, "/api/v1/referrals/trials", token)
	if statuses[http.StatusServiceUnavailable] != 3 || statuses[http.StatusOK] != 57 {
		t.Errorf("60 calls over 3 replicas: %v, want exactly 3 forced 503s", statuses)
	}

	// A client's burst of 5 is shared: 10 calls spread over the replicas,
	// 5 served.
	created = rs.admin(1, http.MethodPost, "/__sandbox/clients", map[string]any{"rateLimit": 0.01, "rateBurst": 5, "ttl": "1h"})
	var client struct{ ClientID, ClientSecret string }
	if err := json.Unmarshal(created.body, &client); err != nil || created.status != http.StatusCreated {
		t.Fatalf("create client through B: %d %s", created.status, created.body)
	}
	limited := mustToken(t, rs.c, rs.base(2), client.ClientID, client.ClientSecret) // created on B, known on C
	statuses = rs.sequentialGets(10, "/health/ping", limited)
	if statuses[http.StatusOK] != 5 || statuses[http.StatusTooManyRequests] != 5 {
		t.Errorf("10 pings of a client with a burst of 5 over 3 replicas: %v, want 5 served and 5 limited", statuses)
	}

	// The journal through A shows the calls made through B and C. C
	// appends its entries in the background, so A may see one a moment
	// after C answered (docs/shared-mode.md says so): wait for it, 10 s at most.
	marker := http.Header{"X-Request-Id": {"through-c"}}
	rs.call(http.MethodGet, rs.base(2)+"/health/ping", token, nil, marker)
	testutil.Eventually(t, 10*time.Second, func() error {
		journal := rs.admin(0, http.MethodGet, "/__sandbox/requests?limit=1000", nil)
		if !strings.Contains(string(journal.body), `"requestId":"through-c"`) {
			return errors.New("the journal through A lacks a call made through C")
		}
		return nil
	})
	report := rs.admin(0, http.MethodGet, "/__sandbox/report?clientId="+client.ClientID, nil)
	if report.status != http.StatusOK || !strings.Contains(string(report.body), client.ClientID) {
		t.Errorf("the report through A on a client that called B and C: %d", report.status)
	}

	// A clock advance through A expires, on B, a token issued by C.
	if a := rs.admin(0, http.MethodPost, "/__sandbox/clock", map[string]any{"advance": "2h"}); a.status != http.StatusOK {
		t.Fatalf("advance through A: %d %s", a.status, a.body)
	}
	if a := rs.call(http.MethodGet, rs.base(1)+"/health/ping", token, nil, nil); a.status != http.StatusUnauthorized {
		t.Errorf("a token on B after the clock moved through A: %d, want 401", a.status)
	}

	// A reset through C puts A and B back: the referral is gone, the clock
	// is real time again.
	if a := rs.admin(2, http.MethodPost, "/__sandbox/reset", nil); a.status != http.StatusOK {
		t.Fatalf("reset through C: %d %s", a.status, a.body)
	}
	token = mustToken(t, rs.c, rs.base(0), partners[0].id, partners[0].secret)
	for i := range 2 {
		if a := rs.call(http.MethodGet, rs.base(i)+"/api/v1/referrals/"+ref.TrialID+"/"+ref.OutcomesID, token, nil, nil); a.status != http.StatusNotFound {
			t.Errorf("replica %d after a reset through C: %d, want 404", i, a.status)
		}
		clock := rs.admin(i, http.MethodGet, "/__sandbox/clock", nil)
		if !strings.Contains(string(clock.body), `"real":true`) {
			t.Errorf("replica %d's clock after a reset through C: %s", i, clock.body)
		}
	}
}

// parallelGets sends n GETs at once, round-robin over the replicas, and
// counts the statuses.
func (rs *replicaSet) parallelGets(n int, path, token string) map[int]int {
	rs.t.Helper()
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := do(rs.t.Context(), rs.c, http.MethodGet, rs.base(i)+path, token, "", nil, nil)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				statuses[0]++
				return
			}
			statuses[a.status]++
		}()
	}
	wg.Wait()
	return statuses
}

// sequentialGets sends n GETs one after another, round-robin.
func (rs *replicaSet) sequentialGets(n int, path, token string) map[int]int {
	rs.t.Helper()
	statuses := map[int]int{}
	for i := range n {
		statuses[rs.call(http.MethodGet, rs.base(i)+path, token, nil, nil).status]++
	}
	return statuses
}

// TestReplicaKilledMidLoadLosesNothing: writers post referrals round-robin
// to two replicas; one is killed with SIGKILL mid-load; every referral
// either acknowledged is readable through the survivor, which keeps
// serving.
func TestReplicaKilledMidLoadLosesNothing(t *testing.T) {
	rs := startReplicas(t, 2)
	token := mustToken(t, rs.c, rs.base(0), partners[0].id, partners[0].secret)
	var mu sync.Mutex
	var acked []referrals.Referral
	var through [2]int // acknowledgements per replica
	// A bound for a loaded machine: the load stops below, once A has
	// acknowledged enough writes alone.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				body, _ := json.Marshal(referralRequest{TrialID: "TRIAL-ONCO-002",
					Patient: referrals.Patient{FirstName: "Kim", LastName: "Roe", DateOfBirth: "1970-01-02", Gender: "other"},
					Notes:   fmt.Sprintf("kill-%d-%d", w, i)})
				a, err := do(ctx, rs.c, http.MethodPost, rs.base(w+i)+"/api/v1/referrals/", token, jsonType, body, nil)
				if err != nil || a.status != http.StatusCreated {
					continue // the killed replica, or the end of the test
				}
				var r referrals.Referral
				if json.Unmarshal(a.body, &r) == nil {
					mu.Lock()
					acked = append(acked, r)
					through[(w+i)%2]++
					mu.Unlock()
				}
			}
		}()
	}
	// Load on both (until each acknowledged 10 writes), B killed in the
	// middle of it, then A alone (until it acknowledged 10 more).
	acknowledged := func(replica, want int) func() error {
		return func() error {
			mu.Lock()
			defer mu.Unlock()
			if through[replica] < want {
				return fmt.Errorf("replica %d acknowledged %d writes, want %d", replica, through[replica], want)
			}
			return nil
		}
	}
	testutil.Eventually(t, 15*time.Second, acknowledged(0, 10))
	testutil.Eventually(t, 15*time.Second, acknowledged(1, 10))
	rs.procs[1].kill()
	mu.Lock()
	after := through[0] + 10
	mu.Unlock()
	testutil.Eventually(t, 15*time.Second, acknowledged(0, after))
	cancel()
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	if len(acked) == 0 {
		t.Fatal("no referral was acknowledged")
	}
	stored := map[string]referrals.Referral{}
	for _, r := range listAllReferrals(t, rs.c, rs.base(0), token, 100000) {
		stored[r.OutcomesID] = r
	}
	for _, r := range acked {
		if got, ok := stored[r.OutcomesID]; !ok || !reflect.DeepEqual(got, r) {
			t.Errorf("acknowledged referral %s (%s) is missing or changed after the kill", r.OutcomesID, r.Notes)
		}
	}
	t.Logf("%d referrals acknowledged, all readable through the survivor", len(acked))
}

// TestRedisOutageAnswers503AndRecovers: while Redis is down every replica
// answers 503 with Retry-After and its health is degraded (healthcheck
// exits 1); once Redis is back, the same token works again and nothing
// acknowledged before is lost.
func TestRedisOutageAnswers503AndRecovers(t *testing.T) {
	rs := startReplicas(t, 1)
	base := rs.base(0)
	token := mustToken(t, rs.c, base, partners[0].id, partners[0].secret)
	created := rs.call(http.MethodPost, base+"/api/v1/referrals/", token, referralRequest{TrialID: "TRIAL-DIAB-003",
		Patient: referrals.Patient{FirstName: "Al", LastName: "Ng", DateOfBirth: "1990-03-04", Gender: "male"}}, nil)
	if created.status != http.StatusCreated {
		t.Fatalf("create: %d %s", created.status, created.body)
	}

	rs.redis.Stop(t)
	api := rs.call(http.MethodGet, base+"/api/v1/referrals/trials", token, nil, nil)
	if api.status != http.StatusServiceUnavailable || api.header.Get("Retry-After") == "" || !strings.HasPrefix(api.header.Get("Content-Type"), "application/problem+json") {
		t.Errorf("API with Redis down: %d Retry-After %q %s", api.status, api.header.Get("Retry-After"), api.header.Get("Content-Type"))
	}
	tok := rs.call(http.MethodPost, base+"/oauth2/v2.0/token", "", nil, nil)
	if tok.status != http.StatusServiceUnavailable || !strings.Contains(string(tok.body), "temporarily_unavailable") {
		t.Errorf("token endpoint with Redis down: %d %s", tok.status, tok.body)
	}
	health := rs.call(http.MethodGet, base+"/__sandbox/health", "", nil, nil)
	if health.status != http.StatusServiceUnavailable || !strings.Contains(string(health.body), `"degraded"`) {
		t.Errorf("health with Redis down: %d %s", health.status, health.body)
	}
	if err := exec.Command(sandboxBinary, "healthcheck", "--url", base).Run(); err == nil {
		t.Error("healthcheck with Redis down exited 0, want 1")
	}

	rs.redis.Restart(t)
	// Recovered, and the referral acknowledged before is there.
	testutil.Eventually(t, 10*time.Second, func() error {
		if a := rs.call(http.MethodGet, base+created.header.Get("Location"), token, nil, nil); a.status != http.StatusOK {
			return fmt.Errorf("the replica has not recovered since Redis returned, or lost the referral: %d", a.status)
		}
		return nil
	})
}
