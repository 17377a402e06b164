package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
)

// TestServeRedisUsageErrors: --redis or --redis-cluster with --data, both
// at once, a URL that is not redis:// or rediss://, a negative
// --redis-wait or a malformed --redis-cluster-nat-map is a usage error
// (exit 2) that names the flag.
func TestServeRedisUsageErrors(t *testing.T) {
	tests := []struct {
		name    string
		environ map[string]string
		args    []string
		want    string
	}{
		{"with --data", nil, []string{"serve", "--redis", "redis://127.0.0.1:6379/0", "--data", "x.db"}, "--data and --redis"},
		{"from the environment with --data", map[string]string{"SANDBOX_REDIS": "redis://127.0.0.1:6379/0", "SANDBOX_DATA": "x.db"}, []string{"serve"}, "--data and --redis"},
		{"http scheme", nil, []string{"serve", "--redis", "http://127.0.0.1:6379"}, "--redis must start with redis://"},
		{"empty prefix", nil, []string{"serve", "--redis", "redis://127.0.0.1:6379", "--redis-prefix", ""}, "--redis-prefix"},
		{"cluster: with --redis", nil, []string{"serve", "--redis-cluster", "redis://127.0.0.1:7000", "--redis", "redis://127.0.0.1:6379"}, "--redis and --redis-cluster"},
		{"cluster: from the environment with --data", map[string]string{"SANDBOX_REDIS_CLUSTER": "redis://127.0.0.1:7000", "SANDBOX_DATA": "x.db"}, []string{"serve"}, "--data and --redis-cluster"},
		{"cluster: http scheme", nil, []string{"serve", "--redis-cluster", "http://127.0.0.1:7000"}, "--redis-cluster must start with redis://"},
		{"cluster: negative wait", nil, []string{"serve", "--redis-cluster", "redis://127.0.0.1:7000", "--redis-wait", "-1"}, "--redis-wait"},
		{"NAT map without a cluster", nil, []string{"serve", "--redis", "redis://127.0.0.1:6379", "--redis-cluster-nat-map", "10.0.0.5:6379=127.0.0.1:7001"}, "--redis-cluster-nat-map needs --redis-cluster"},
		{"NAT map entry without =", map[string]string{"SANDBOX_REDIS_CLUSTER_NAT_MAP": "10.0.0.5:6379"}, []string{"serve", "--redis-cluster", "redis://127.0.0.1:7000"}, `entry "10.0.0.5:6379"`},
		{"NAT map entry not host:port", nil, []string{"serve", "--redis-cluster", "redis://127.0.0.1:7000", "--redis-cluster-nat-map", "10.0.0.5:6379=proxy"}, `"proxy" is not host:port`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			cancel() // a serve that wrongly got past the checks stops at once
			res := runCLIContext(ctx, tc.environ, tc.args...)
			if res.code != 2 || !strings.Contains(res.stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", res.code, res.stderr, tc.want)
			}
		})
	}
}

// TestServeRedisUnreachable: a Redis that does not answer stops start-up
// at once (exit 1) with a message naming host:port and not the password.
func TestServeRedisUnreachable(t *testing.T) {
	addr := "127.0.0.1:" + closedPort(t)
	res := runCLI(t, nil, "serve", "--addr", "127.0.0.1:0", "--redis", "redis://:hunter2-secret@"+addr+"/3")
	if res.code != 1 {
		t.Fatalf("exit %d, want 1; stderr %q", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "redis at "+addr+" does not answer") {
		t.Errorf("stderr %q does not say which Redis did not answer", res.stderr)
	}
	if strings.Contains(res.stderr+res.stdout, "hunter2") {
		t.Errorf("the password is in the output: %q", res.stderr)
	}
}

// TestServeRedisSharedBinaries runs two built binaries on one Redis that
// wants a password: both say so in their ready line without it, and a
// referral submitted through A is read through B.
func TestServeRedisSharedBinaries(t *testing.T) {
	srv := redistest.Start(t)
	const password = "s3cret-redis-pass"
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr})
	if err := admin.ConfigSet(t.Context(), "requirepass", password).Err(); err != nil {
		t.Fatal(err)
	}
	_ = admin.Close()
	environ := []string{"SANDBOX_ADDR=127.0.0.1:0", "SANDBOX_LOG_FORMAT=json", "SANDBOX_REDIS=redis://:" + password + "@" + srv.Addr + "/2"}
	var urls []string
	var logs, tokens []string
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
		if ready.SharedMode != "redis://"+srv.Addr+"/2" {
			t.Errorf("ready line shared_mode %q, want redis://%s/2", ready.SharedMode, srv.Addr)
		}
		urls = append(urls, ready.RootURL)
		tokens = append(tokens, partnerToken(t, ready.TokenURL))
		logs = append(logs, line)
		t.Cleanup(func() {
			_, rest := s.stop(t)
			if all := strings.Join(append(rest, logs...), "\n"); strings.Contains(all, password) {
				t.Errorf("the Redis password is in the logs:\n%s", all)
			}
		})
	}

	// A referral submitted through A, read through B with B's own token
	// (a token names the address that issued it).
	body := `{"trialId":"NCT05550001","patient":{"firstName":"Ann","lastName":"Lee","dateOfBirth":"1980-04-12","gender":"female"}}`
	resp := call(t, http.MethodPost, urls[0]+"/api/v1/referrals/", tokens[0], "application/json", body)
	if resp.code != http.StatusCreated || resp.location == "" {
		t.Fatalf("create through A: %d %s", resp.code, resp.body)
	}
	got := call(t, http.MethodGet, urls[1]+resp.location, tokens[1], "", "")
	if got.code != http.StatusOK || got.body != resp.body {
		t.Errorf("read through B: %d %s, want 200 %s", got.code, got.body, resp.body)
	}
}

// callResult is what call saw.
type callResult struct {
	code           int
	body, location string
}

// call sends one request with a bearer token and returns status, body and
// Location.
func call(t *testing.T, method, target, token, contentType, body string) callResult {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return callResult{code: resp.StatusCode, body: string(b), location: resp.Header.Get("Location")}
}

// partnerToken gets a token for the embedded sandbox-partner client.
func partnerToken(t *testing.T, tokenURL string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"sandbox-partner"},
		"client_secret": {"sandbox-partner-secret"}, "scope": {"api://referrals-sandbox/.default"}}
	resp, err := http.PostForm(tokenURL, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("token from %s: %d %v", tokenURL, resp.StatusCode, err)
	}
	return tok.AccessToken
}
