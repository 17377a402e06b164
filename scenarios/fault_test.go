package scenarios

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"
)

// faultServer serves every request with ApplyFault(f) and closes done when
// the handler returns.
func faultServer(t *testing.T, f Fault, http2 bool) (srv *httptest.Server, done chan struct{}) {
	t.Helper()
	done = make(chan struct{})
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		ApplyFault(w, r, f)
	}))
	if http2 {
		srv.EnableHTTP2 = true
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, done
}

func TestApplyFault(t *testing.T) {
	tests := []struct {
		name  string
		fault Fault
		http2 bool
		check func(t *testing.T, resp *http.Response, err error)
	}{
		{"reset", FaultReset, false, func(t *testing.T, _ *http.Response, err error) {
			if !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("err = %v, want connection reset", err)
			}
		}},
		{"empty", FaultEmpty, false, func(t *testing.T, _ *http.Response, err error) {
			if !errors.Is(err, io.EOF) {
				t.Errorf("err = %v, want EOF", err)
			}
		}},
		{"hang", FaultHang, false, func(t *testing.T, _ *http.Response, err error) {
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				t.Errorf("err = %v, want a client timeout", err)
			}
		}},
		{"malformed", FaultMalformed, false, func(t *testing.T, resp *http.Response, err error) {
			if err != nil {
				t.Fatalf("transport error %v, want a 200", err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			var v any
			if err := json.NewDecoder(resp.Body).Decode(&v); err == nil {
				t.Errorf("body decoded as %v, want a JSON error", v)
			}
		}},
		// HTTP/2 cannot hijack: the handler aborts and the client sees a
		// stream error instead of an answer.
		{"reset over HTTP/2", FaultReset, true, func(t *testing.T, resp *http.Response, err error) {
			if err == nil {
				resp.Body.Close()
				t.Errorf("got status %d, want a transport error", resp.StatusCode)
			}
		}},
		{"empty over HTTP/2", FaultEmpty, true, func(t *testing.T, resp *http.Response, err error) {
			if err == nil {
				resp.Body.Close()
				t.Errorf("got status %d, want a transport error", resp.StatusCode)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, done := faultServer(t, tt.fault, tt.http2)
			client := srv.Client()
			client.Timeout = 200 * time.Millisecond
			resp, err := client.Get(srv.URL + "/api/v1/referrals/trials")
			t.Logf("client error: %v", err)
			tt.check(t, resp, err)
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("handler still running after the client gave up")
			}
		})
	}
}

func TestApplyFaultNone(t *testing.T) {
	rec := httptest.NewRecorder()
	ApplyFault(rec, httptest.NewRequest(http.MethodGet, "/", nil), FaultNone)
	if rec.Body.Len() != 0 || rec.Code != http.StatusOK || len(rec.Header()) != 0 {
		t.Errorf("FaultNone wrote something: %d %v %q", rec.Code, rec.Header(), rec.Body)
	}
}
