package sandbox_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/sandboxtest"
)

// The recording proxy reads a body before anything checks the caller, so
// what anonymous callers can make it hold at once is bounded: with 16
// bodies of 4 MiB waiting on a slow real service, one more is refused
// with 503 and Retry-After before anything of it is sent upstream, and a
// small call still goes through.
func TestRecordingProxyBoundsTheBodiesItHolds(t *testing.T) {
	const bodies, bodyBytes = 16, 4 << 20
	release := make(chan struct{})
	var arrived sync.WaitGroup
	arrived.Add(bodies)
	var forwarded atomic.Int64
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		if n >= bodyBytes && forwarded.Add(1) <= bodies {
			arrived.Done()
			<-release
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{}`)
	}))
	t.Cleanup(upstream.Close)
	sb := sandboxtest.Start(t, sandboxtest.WithUpstream(upstream.URL, upstream.URL+"/tenant"))

	// A JSON array of bodyBytes, the largest body the proxy forwards.
	body := append([]byte("["), bytes.Repeat([]byte(" "), bodyBytes-2)...)
	body = append(body, ']')
	post := func(b []byte) *http.Response {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, sb.BaseURL+"/referrals/", bytes.NewReader(b))
		if err != nil {
			t.Error(err)
			return nil
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := sb.Client().Do(req)
		if err != nil {
			t.Error(err)
			return nil
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	var held sync.WaitGroup
	for range bodies {
		held.Go(func() {
			if resp := post(body); resp != nil && resp.StatusCode != http.StatusOK {
				t.Errorf("a held body: %d, want the real service's 200 once released", resp.StatusCode)
			}
		})
	}
	all := make(chan struct{})
	go func() { arrived.Wait(); close(all) }()
	select {
	case <-all: // all 16 reached the real service and hold their bytes
	case <-time.After(2 * time.Minute):
		close(release)
		t.Fatalf("only %d of %d large bodies reached the real service", forwarded.Load(), bodies)
	}

	refused := post(body)
	if refused == nil || refused.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a 17th body of %d bytes: %v, want 503", bodyBytes, refused)
	}
	if ra, err := strconv.Atoi(refused.Header.Get("Retry-After")); err != nil || ra < 1 {
		t.Errorf("the refusal's Retry-After %q, want seconds", refused.Header.Get("Retry-After"))
	}
	if got := forwarded.Load(); got != bodies { // the last large body is sent later
		t.Errorf("the real service received %d large bodies, want %d (the refused one must not be sent)", got, bodies)
	}
	if small := post([]byte(`{}`)); small == nil || small.StatusCode != http.StatusOK {
		t.Errorf("a small call while the large ones are held: %v, want 200", small)
	}
	close(release)
	held.Wait()
	if resp := post(body); resp == nil || resp.StatusCode != http.StatusOK {
		t.Errorf("a large body once the others finished: %v, want 200", resp)
	}
}
