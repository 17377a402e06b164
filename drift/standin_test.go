package drift_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandboxtest"
)

// standIn is an upstream written for the tests: an Entra-shaped token
// endpoint and the API, served by a sandbox behind a proxy that changes
// chosen answers, each one a deliberate difference of a kind drift must
// report. Tokens it hands out are rewritten (another JWT header and claims)
// and mapped back when a probe presents them.
type standIn struct {
	*httptest.Server
	backing *sandboxtest.Sandbox
	authURL string
	// mutate changes the answer to the probe a request is; nil for none.
	mutate map[string]func(*http.Response, map[string]any)
	// status429 answers the first request of this probe 429.
	status429 string

	mu       sync.Mutex
	tokens   map[string]string // rewritten -> real
	seen     map[string]int
	received []string // every request's raw form and Authorization, to check what was sent
}

func newStandIn(t *testing.T, backing *sandboxtest.Sandbox) *standIn {
	t.Helper()
	target, err := url.Parse(backing.RootURL)
	if err != nil {
		t.Fatal(err)
	}
	s := &standIn{backing: backing, tokens: map[string]string{}, seen: map[string]int{}, mutate: map[string]func(*http.Response, map[string]any){}}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = backing.Client().Transport
	proxy.ModifyResponse = s.modify
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		probe := s.classify(r)
		s.mu.Lock()
		s.seen[probe]++
		first := s.seen[probe] == 1
		s.mu.Unlock()
		if probe == s.status429 && first {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			s.mu.Lock()
			if real, ok := s.tokens[bearer]; ok {
				r.Header.Set("Authorization", "Bearer "+real)
			}
			s.mu.Unlock()
		}
		r.Header.Set("X-Drift-Probe", probe)
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	s.authURL = s.URL + "/" + backing.Tenant
	return s
}

// classify names the probe a request is, the way drift names them.
func (s *standIn) classify(r *http.Request) string {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	s.mu.Lock()
	s.received = append(s.received, string(body)+" "+r.Header.Get("Authorization"))
	s.mu.Unlock()
	if strings.HasSuffix(r.URL.Path, "/oauth2/v2.0/token") {
		form, _ := url.ParseQuery(string(body))
		switch {
		case r.Method == http.MethodGet:
			return "token.get"
		case len(form["scope"]) > 1:
			return "token.repeated-scope"
		case form.Get("client_secret") == "drift-wrong-secret":
			return "token.wrong-secret"
		case strings.Contains(form.Get("scope"), "drift-no-such-api"):
			return "token.unknown-scope"
		case form.Get("grant_type") == "client_credentials" && form.Get("client_id") == "sandbox-partner":
			return "token"
		}
		return "token.other"
	}
	auth := r.Header.Get("Authorization")
	suffix := ""
	switch {
	case auth == "":
		suffix = ".no-token"
	case strings.Contains(auth, "garbled"):
		suffix = ".garbled-token"
	case !s.issued(strings.TrimPrefix(auth, "Bearer ")):
		suffix = ".other-token" // another audience or expired
	}
	path := strings.TrimPrefix(r.URL.Path, "/api/v1")
	name := r.Method + " " + path
	switch {
	case path == "/health/ping" && r.Method == http.MethodGet:
		name = "ping"
	case path == "/referrals/trials" && r.Method == http.MethodGet:
		name = "trials-list"
	case path == "/referrals/" && r.URL.RawQuery == "limit=1":
		name = "referrals-list.paged"
	case path == "/referrals/" && r.Method == http.MethodGet && r.URL.RawQuery == "":
		name = "referrals-list"
	case path == "/referrals/qualified" && r.Method == http.MethodGet && r.URL.RawQuery == "":
		name = "qualified-list"
	case strings.HasPrefix(path, "/referrals/qualified/drift-no-such"):
		name = "qualified-read.unknown"
	case strings.HasPrefix(path, "/referrals/DRIFT-NO-SUCH-TRIAL/"):
		name = "referral-read.unknown"
	case r.URL.Path == "/api/v1/drift-no-such-path":
		name = "unknown-path"
	}
	if suffix != "" {
		name = strings.TrimSuffix(name, ".unknown") + suffix
	}
	return name
}

// issued is true for a token the stand-in handed out.
func (s *standIn) issued(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.tokens[token]
	return ok
}

func (s *standIn) modify(resp *http.Response) error {
	probe := resp.Request.Header.Get("X-Drift-Probe")
	if probe == "token" {
		if err := s.rewriteToken(resp); err != nil {
			return err
		}
	}
	change := s.mutate[probe]
	if change == nil {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var v map[string]any
	_ = json.Unmarshal(body, &v)
	change(resp, v)
	if v != nil {
		if body, err = json.Marshal(v); err != nil {
			return err
		}
	}
	setBody(resp, body)
	return nil
}

func setBody(resp *http.Response, body []byte) {
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
}

// rewriteToken swaps a real access token for one with another header (no
// kid) and one claim more, as another identity provider might issue.
func (s *standIn) rewriteToken(resp *http.Response) error {
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var v map[string]any
	if json.Unmarshal(body, &v) != nil || v["access_token"] == nil {
		setBody(resp, body)
		return nil
	}
	real := v["access_token"].(string)
	parts := strings.Split(real, ".")
	claims, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var c map[string]any
	_ = json.Unmarshal(claims, &c)
	c["appid"] = c["azp"]
	newClaims, _ := json.Marshal(c)
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`))
	rewritten := header + "." + base64.RawURLEncoding.EncodeToString(newClaims) + "." + parts[2]
	s.mu.Lock()
	s.tokens[rewritten] = real
	s.mu.Unlock()
	v["access_token"] = rewritten
	if resp.Request.Header.Get("X-Drift-Probe") == "token" {
		v["token_type"] = "bearer"
		v["expires_in"] = 5399
		resp.Header.Set("Cache-Control", "no-store")
	}
	out, _ := json.Marshal(v)
	setBody(resp, out)
	return nil
}
