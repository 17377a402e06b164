package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redisslot"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
)

// TestServeRedisClusterFailover runs two built binaries on a cluster of
// three masters with a replica each, with --redis-wait 1. A referral
// submitted through A is read through B; then the master holding the
// partner's slot (its records) is killed. Until its replica has taken over and the old
// master has come back as its replica, every request answers 503 with
// Retry-After, never another error; then writes succeed again and the
// referral acknowledged before the kill is still there.
func TestServeRedisClusterFailover(t *testing.T) {
	cluster := redistest.StartCluster(t, 3, 1)
	environ := []string{"SANDBOX_ADDR=127.0.0.1:0", "SANDBOX_LOG_FORMAT=json", "SANDBOX_REDIS_CLUSTER=" + cluster.URL,
		"SANDBOX_REDIS_WAIT=1", "SANDBOX_REDIS_TIMEOUT=1s", "SANDBOX_RATE_LIMIT=0"}
	var urls, tokens []string
	for range 2 {
		s := startServer(t, t.TempDir(), environ)
		line := s.lineContaining(t, `"msg":"referrals-sandbox ready"`)
		var ready struct {
			RootURL    string `json:"root_url"`
			TokenURL   string `json:"token_url"`
			SharedMode string `json:"shared_mode"`
		}
		if err := json.Unmarshal([]byte(line), &ready); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(ready.SharedMode, "cluster redis://") {
			t.Errorf("ready line shared_mode %q, want cluster redis://...", ready.SharedMode)
		}
		urls = append(urls, ready.RootURL)
		tokens = append(tokens, partnerToken(t, ready.TokenURL))
		t.Cleanup(func() { s.stop(t) })
	}
	body := `{"trialId":"NCT05550001","patient":{"firstName":"Ann","lastName":"Lee","dateOfBirth":"1980-04-12","gender":"female"}}`
	created := call(t, http.MethodPost, urls[0]+"/api/v1/referrals/", tokens[0], "application/json", body)
	if created.code != http.StatusCreated || created.location == "" {
		t.Fatalf("create through A: %d %s", created.code, created.body)
	}
	if got := call(t, http.MethodGet, urls[1]+created.location, tokens[1], "", ""); got.code != http.StatusOK || got.body != created.body {
		t.Fatalf("read through B: %d %s, want 200 %s", got.code, got.body, created.body)
	}

	master := cluster.MasterOf(t, "referrals-sandbox:"+redisslot.ClientTag("sandbox-partner"))
	master.Kill(t)
	// Until the replica has taken over, and while the new master has no
	// replica to WAIT for, every write of the partner's records answers
	// 503 with Retry-After.
	if code := status(t, request(t, http.MethodPost, urls[0]+"/api/v1/referrals/", tokens[0], body)); code != http.StatusServiceUnavailable {
		t.Errorf("a write right after the master's kill: %d, want 503", code)
	}
	// The old master comes back as the new master's replica.
	master.Restart(t)
	until(t, "a write after the old master rejoined", func(i int) bool {
		return status(t, request(t, http.MethodPost, urls[i%2]+"/api/v1/referrals/", tokens[i%2], body)) == http.StatusCreated
	})
	for i, u := range urls {
		if got := call(t, http.MethodGet, u+created.location, tokens[i], "", ""); got.code != http.StatusOK || got.body != created.body {
			t.Errorf("after the failover, read through replica %d: %d %s, want 200 %s", i, got.code, got.body, created.body)
		}
	}
}

// until calls try (with its attempt number) until it reports success,
// for at most a minute.
func until(t *testing.T, what string, try func(i int) bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for i := 0; !try(i); i++ {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not succeed within a minute (%d attempts)", what, i+1)
		}
	}
}

// status sends req and returns its status code, failing t on any answer
// other than a success or a 503 with Retry-After: what a client may see
// while a cluster fails over.
func status(t *testing.T, req *http.Request) int {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 300 && (resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "") {
		t.Fatalf("%s %s: %d (Retry-After %q) %s; want a success or 503 with Retry-After", req.Method, req.URL.Path, resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
	return resp.StatusCode
}

func request(t *testing.T, method, target, token, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	return req
}
