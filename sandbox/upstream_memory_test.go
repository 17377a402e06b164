package sandbox_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandboxtest"
)

// A partner's JSON body is redacted for the journal before anything checks
// the caller, so its cost must not grow with what the body holds: a 4 MB
// array of empty objects, the cheapest JSON to send and dozens of times
// its size once decoded into Go values, costs the proxy a small multiple
// of the body (reading it and sending it on), whatever its shape.
func TestRecordingProxyRedactsAHostileBodyInBoundedMemory(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{}`)
	}))
	t.Cleanup(upstream.Close)
	sb := sandboxtest.Start(t, sandboxtest.WithUpstream(upstream.URL, upstream.URL+"/tenant"))

	const bodyBytes = 4 << 20 // what the proxy forwards at most
	body := append([]byte("["), bytes.Repeat([]byte("{},"), bodyBytes/3-1)...)
	body = append(body, "{}]"...)
	send := func() {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, sb.BaseURL+"/referrals/", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := sb.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("the proxy answered %d, want the real service's 200", resp.StatusCode)
		}
	}
	send() // connections and the validator's first use
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	send()
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("%.1f times the body", float64(allocated)/float64(len(body)))
	if allocated > 6*uint64(len(body)) {
		t.Errorf("forwarding and journaling a %d-byte body allocated %d bytes (%.1f times the body)", len(body), allocated, float64(allocated)/float64(len(body)))
	}
	entries := sb.Requests(t, sandboxtest.JournalFilter{})
	if last := entries[len(entries)-1]; last.Upstream == nil || len(last.Upstream.RequestBody) != 0 {
		t.Errorf("the journal kept a body over its limit: %+v", last.Upstream)
	}
}
