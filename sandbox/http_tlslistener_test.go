package sandbox_test

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// TestTLSListener_PlainHTTPIsRefusedAndReported serves --tls as the binary
// does: HTTPS works, a plain-HTTP request on the same port gets a clear 400
// instead of a TLS error, and the conformance report's https-only check
// fails with that request as its evidence.
func TestTLSListener_PlainHTTPIsRefusedAndReported(t *testing.T) {
	in, err := sandbox.Open(sandbox.Config{TLS: true})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := sandbox.NewHTTPServer(in.Server, nil)
	go func() { _ = srv.Serve(sandbox.NewTLSListener(ln, in.TLS, nil)) }()
	defer srv.Close()
	host := ln.Addr().String()

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(in.CACertPEM)
	secure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}

	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"sandbox-partner"},
		"client_secret": {"sandbox-partner-secret"}, "scope": {idp.DefaultResource + "/.default"}}
	resp, err := secure.PostForm("https://"+host+"/oauth2/v2.0/token", form)
	if err != nil {
		t.Fatalf("token over HTTPS: %v", err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	err = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("token over HTTPS: %d %v", resp.StatusCode, err)
	}

	req, _ := http.NewRequest(http.MethodGet, "http://"+host+"/api/v1/referrals/trials", nil)
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	plain, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("plain HTTP on the TLS port should get an answer, got %v", err)
	}
	body, _ := io.ReadAll(plain.Body)
	plain.Body.Close()
	if plain.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "HTTPS only") ||
		!strings.HasPrefix(plain.Header.Get("Content-Type"), sandbox.ProblemContentType) {
		t.Fatalf("plain HTTP: %d %s %s, want a 400 problem saying HTTPS only", plain.StatusCode, plain.Header.Get("Content-Type"), body)
	}
	plainID := plain.Header.Get(sandbox.RequestIDHeader)

	// The token endpoint refuses plain HTTP in Entra's error shape, which
	// is all a token client parses.
	plainToken, err := http.PostForm("http://"+host+"/oauth2/v2.0/token", form)
	if err != nil {
		t.Fatalf("plain HTTP token request should get an answer, got %v", err)
	}
	var entra struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	err = json.NewDecoder(plainToken.Body).Decode(&entra)
	plainToken.Body.Close()
	if plainToken.StatusCode != http.StatusBadRequest || err != nil || entra.Error != "invalid_request" || !strings.Contains(entra.Description, "HTTPS only") {
		t.Fatalf("plain HTTP token request: %d %v %+v, want Entra's invalid_request saying HTTPS only", plainToken.StatusCode, err, entra)
	}
	tokenID := plainToken.Header.Get(sandbox.RequestIDHeader)

	report, err := secure.Get("https://" + host + "/__sandbox/report?clientId=sandbox-partner")
	if err != nil {
		t.Fatal(err)
	}
	defer report.Body.Close()
	var rep struct {
		Clients []struct {
			Checks []struct {
				ID, Result string
				Evidence   []string
			}
		}
	}
	if err := json.NewDecoder(report.Body).Decode(&rep); err != nil || len(rep.Clients) != 1 {
		t.Fatalf("report: %v %+v", err, rep)
	}
	for _, c := range rep.Clients[0].Checks {
		if c.ID != "https-only" {
			continue
		}
		if c.Result != "fail" || !slices.Equal(c.Evidence, []string{plainID, tokenID}) {
			t.Fatalf("https-only = %s with evidence %v, want fail with %s and %s", c.Result, c.Evidence, plainID, tokenID)
		}
		return
	}
	t.Fatal("the report has no https-only check")
}

// failingListener fails its first n Accepts with EMFILE, as a process at
// its open-files limit sees, then accepts as the listener it wraps.
type failingListener struct {
	net.Listener
	mu   sync.Mutex
	left int
}

func (l *failingListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	fail := l.left > 0
	l.left--
	l.mu.Unlock()
	if fail {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Addr: l.Addr(), Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

// TestTLSListener_SurvivesTemporaryAcceptErrors: an Accept that fails with
// a temporary error (once, or a burst) is retried with backoff and logged
// once per burst; HTTPS is served after it. Before, one such error stopped
// the listener for good.
func TestTLSListener_SurvivesTemporaryAcceptErrors(t *testing.T) {
	in, err := sandbox.Open(sandbox.Config{TLS: true})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(in.CACertPEM)
	for _, failures := range []int{1, 4} {
		t.Run(fmt.Sprintf("%d failures", failures), func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			var logs testutil.LockedBuffer
			logger := slog.New(slog.NewTextHandler(&logs, nil))
			srv := sandbox.NewHTTPServer(in.Server, nil)
			go func() {
				_ = srv.Serve(sandbox.NewTLSListener(&failingListener{Listener: ln, left: failures}, in.TLS, logger))
			}()
			defer srv.Close()

			client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
			defer client.CloseIdleConnections()
			for range 2 {
				resp, err := client.Get("https://" + ln.Addr().String() + "/__sandbox/health")
				if err != nil {
					t.Fatalf("HTTPS after %d failed Accepts: %v", failures, err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("health: %d", resp.StatusCode)
				}
			}
			if n := strings.Count(logs.String(), "accept failed"); n != 1 {
				t.Errorf("%d log lines about the failed Accepts, want 1 for the burst:\n%s", n, logs.String())
			}
		})
	}
}

// TestTLSListener_HandsOnAcceptedConnectionsAfterClose: a connection the
// listener accepted before it was closed (a request sent just before
// SIGTERM) is still handed to Accept, so Shutdown serves its request
// rather than cutting it off; TestSIGTERMDrainsRequestsInFlight met
// such a dropped connection on a loaded machine.
func TestTLSListener_HandsOnAcceptedConnectionsAfterClose(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan struct{}, 1)
	l := sandbox.NewTLSListener(&notifyingListener{Listener: ln, accepted: accepted}, &tls.Config{}, nil)
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET /sent-before-close HTTP/1.1\r\nHost: sandbox\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	<-accepted
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := l.Accept()
	if err != nil {
		t.Fatalf("Accept after Close = %v, want the connection accepted before it", err)
	}
	defer got.Close()
	req, err := http.ReadRequest(bufio.NewReader(got))
	if err != nil || req.URL.Path != "/sent-before-close" {
		t.Fatalf("read %v, %v from the handed-on connection; want the request sent before Close", req, err)
	}
	if _, err := l.Accept(); err == nil {
		t.Error("a second Accept after Close returned a connection; want the listener closed")
	}
}

// notifyingListener tells accepted of each connection it accepts.
type notifyingListener struct {
	net.Listener
	accepted chan<- struct{}
}

func (l *notifyingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted <- struct{}{}
	}
	return c, err
}
