//go:build unix

// Unix only: the idle-connections test sizes itself by RLIMIT_NOFILE.

package sandbox_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// Hostile requests: huge bodies and headers, deep JSON, slow and idle
// connections. Each is answered with a clear 4xx or dropped, and the server
// keeps serving a well-behaved partner meanwhile.

// liveSandbox is the sandbox behind the http.Server the binary runs
// (sandbox.NewHTTPServer) on a real TCP listener: httptest.NewServer would
// not apply the header size limit and read-header timeout under test.
type liveSandbox struct {
	addr string // host:port
	base string // http://host:port
}

// startLiveSandbox serves a fresh sandbox on a loopback port; configure, if
// given, adjusts the http.Server before it starts serving (a test that
// watches connection states sets ConnState).
func startLiveSandbox(t *testing.T, configure ...func(*http.Server)) *liveSandbox {
	t.Helper()
	in, err := sandbox.Open(sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = in.Close()
		t.Fatal(err)
	}
	srv := sandbox.NewHTTPServer(in.Server, nil)
	for _, c := range configure {
		c(srv)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		_ = srv.Close() // closes the listener and every connection still open
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
		_ = in.Close()
	})
	return &liveSandbox{addr: ln.Addr().String(), base: "http://" + ln.Addr().String()}
}

// wellBehavedClient makes each request on a fresh connection, so it never
// reuses one the server is busy with; the timeout only bounds a failure.
func wellBehavedClient() *http.Client {
	return &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
}

// token fetches an access token for one of the default clients.
func (l *liveSandbox) token(client *http.Client, clientID string) (string, error) {
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {clientID}, "client_secret": {clientID + "-secret"}, "scope": {apiScope}}
	resp, err := client.PostForm(l.base+"/"+idp.DefaultTenant+"/oauth2/v2.0/token", form)
	if err != nil {
		return "", fmt.Errorf("token request: %w", err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != http.StatusOK || tok.AccessToken == "" {
		return "", fmt.Errorf("token request: status %d, decode error %v", resp.StatusCode, err)
	}
	return tok.AccessToken, nil
}

// checkResponsive is a well-behaved partner: it gets a token and lists the
// trials, each on a new connection; both must succeed.
func (l *liveSandbox) checkResponsive(t *testing.T) {
	t.Helper()
	client := wellBehavedClient()
	token, err := l.token(client, partner)
	if err != nil {
		t.Fatalf("a well-behaved partner cannot get a token: %v", err)
	}
	req, err := http.NewRequest(http.MethodGet, l.base+"/api/v1/referrals/trials", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("a well-behaved partner cannot list trials: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"trials"`)) {
		t.Fatalf("a well-behaved partner lists trials: %d %s, want 200 with trials", resp.StatusCode, body)
	}
}

// rawResponse is what came back on a raw connection.
type rawResponse struct {
	status int
	header http.Header
	body   []byte
}

// rawExchange sends head and then body on a new connection while reading
// the response concurrently, as a hostile client does: it does not wait for
// the server to read what it sends. The server may stop reading at any
// point, so errors writing are expected and ignored.
func (l *liveSandbox) rawExchange(head string, body io.Reader) (*rawResponse, error) {
	conn, err := net.DialTimeout("tcp", l.addr, 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	// Bounds a failure (a server that never answers), not a timing claim.
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		if _, err := io.WriteString(conn, head); err != nil || body == nil {
			return
		}
		_, _ = io.Copy(conn, body)
	}()
	defer func() {
		_ = conn.Close() // also unblocks a writer stuck on a full socket
		<-wrote
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read response body: %w", err)
	}
	return &rawResponse{status: resp.StatusCode, header: resp.Header, body: data}, nil
}

// repeatedByte reads as an endless stream of one byte.
type repeatedByte byte

func (b repeatedByte) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// chunkedBody frames n bytes of one value in HTTP/1.1 chunks, lazily.
type chunkedBody struct {
	left int // bytes still to frame; -1 once the last chunk is out
	b    byte
	buf  []byte
}

func (c *chunkedBody) Read(p []byte) (int, error) {
	if len(c.buf) == 0 {
		switch {
		case c.left < 0:
			return 0, io.EOF
		case c.left == 0:
			c.buf, c.left = []byte("0\r\n\r\n"), -1
		default:
			n := min(c.left, 32<<10)
			c.buf = fmt.Appendf(nil, "%x\r\n%s\r\n", n, bytes.Repeat([]byte{c.b}, n))
			c.left -= n
		}
	}
	n := copy(p, c.buf)
	c.buf = c.buf[n:]
	return n, nil
}

// signalAtEOF reads as empty and closes done when it is reached: placed in
// an io.MultiReader, it tells that everything before it was written.
type signalAtEOF struct{ done chan struct{} }

func (s signalAtEOF) Read([]byte) (int, error) {
	close(s.done)
	return 0, io.EOF
}

// gate reads as empty once open is closed, holding the stream until then.
type gate struct{ open <-chan struct{} }

func (g gate) Read([]byte) (int, error) {
	<-g.open
	return 0, io.EOF
}

// tenMB is the hostile body size.
const tenMB = 10 << 20

// TestHostile_TenMegabyteBody: a 10 MB body, declared or chunked, is refused
// with 413 on every route that reads a body.
func TestHostile_TenMegabyteBody(t *testing.T) {
	l := startLiveSandbox(t)
	token, err := l.token(wellBehavedClient(), partner)
	if err != nil {
		t.Fatal(err)
	}
	routes := []struct {
		name, path, contentType, authorization string
		problem                                bool // a problem+json body (the IdP answers like Entra)
	}{
		{"submit referral", "/api/v1/referrals/", "application/json", "Bearer " + token, true},
		{"submit qualified referral", "/api/v1/referrals/qualified", "application/json", "Bearer " + token, true},
		{"admin: add scenario rule", "/__sandbox/scenarios", "application/json", "", true},
		{"token endpoint", "/" + idp.DefaultTenant + "/oauth2/v2.0/token", "application/x-www-form-urlencoded", "", false},
	}
	framings := []struct {
		name   string
		header string
		body   func() io.Reader
	}{
		{"Content-Length", fmt.Sprintf("Content-Length: %d\r\n", tenMB), func() io.Reader { return io.LimitReader(repeatedByte('a'), tenMB) }},
		{"chunked", "Transfer-Encoding: chunked\r\n", func() io.Reader { return &chunkedBody{left: tenMB, b: 'a'} }},
	}
	for _, rt := range routes {
		for _, fr := range framings {
			t.Run(rt.name+" "+fr.name, func(t *testing.T) {
				head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\n%s", rt.path, l.addr, rt.contentType, fr.header)
				if rt.authorization != "" {
					head += "Authorization: " + rt.authorization + "\r\n"
				}
				r, err := l.rawExchange(head+"\r\n", fr.body())
				if err != nil {
					t.Fatal(err)
				}
				if r.status != http.StatusRequestEntityTooLarge {
					t.Fatalf("status %d, want 413; body %.300s", r.status, r.body)
				}
				if !rt.problem {
					return
				}
				var p sandbox.Problem
				if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, sandbox.ProblemContentType) {
					t.Errorf("Content-Type %q, want %s", ct, sandbox.ProblemContentType)
				}
				if err := json.Unmarshal(r.body, &p); err != nil || p.Status != http.StatusRequestEntityTooLarge || p.Type != sandbox.ProblemTypePayloadTooLarge {
					t.Errorf("body %s (%v), want a 413 problem of type %s", r.body, err, sandbox.ProblemTypePayloadTooLarge)
				}
			})
		}
	}
	l.checkResponsive(t)
}

// TestHostile_ServesOthersDuringLargeUpload: while a 10 MB body is half
// sent (the handler is waiting for more), another partner is served; the
// upload then ends in a 413.
func TestHostile_ServesOthersDuringLargeUpload(t *testing.T) {
	l := startLiveSandbox(t)
	token, err := l.token(wellBehavedClient(), partner)
	if err != nil {
		t.Fatal(err)
	}
	const sentFirst = 512 << 10 // under the 1 MiB limit: the handler keeps reading
	halfway, resume := make(chan struct{}), make(chan struct{})
	body := io.MultiReader(
		io.LimitReader(repeatedByte('a'), sentFirst),
		signalAtEOF{halfway},
		gate{resume},
		io.LimitReader(repeatedByte('a'), tenMB-sentFirst),
	)
	head := fmt.Sprintf("POST /api/v1/referrals/ HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n", l.addr, token, tenMB)
	type result struct {
		r   *rawResponse
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := l.rawExchange(head, body)
		done <- result{r, err}
	}()
	select {
	case <-halfway:
	case res := <-done:
		close(resume)
		t.Fatalf("the upload ended before half of it was sent: %+v", res)
	}
	l.checkResponsive(t)
	close(resume)
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	if res.r.status != http.StatusRequestEntityTooLarge {
		t.Errorf("the upload got %d %.300s, want 413", res.r.status, res.r.body)
	}
}

// nested is inner wrapped n times in open and close.
func nested(open, close string, n int, inner string) string {
	return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
}

// withMember adds a raw JSON member to the encoding of body.
func withMember(t *testing.T, body map[string]any, name, raw string) string {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b[:len(b)-1]) + `,"` + name + `":` + raw + "}"
}

// TestHostile_DeepJSON: JSON nested 10,000 deep and more is a 400, on the
// API and the admin API, and the sandbox keeps answering.
func TestHostile_DeepJSON(t *testing.T) {
	s := newSandbox(t)
	token := s.token(partner)
	const deep = 10000
	arrays := nested("[", "]", deep, "1")
	objects := nested(`{"a":`, "}", deep, "1")
	tests := []struct {
		name, path, body string
		admin            bool
	}{
		{"referral: unknown member holding 10,000 nested arrays", "/api/v1/referrals/", withMember(t, referralBody("TRIAL-CARDIO-001"), "extra", arrays), false},
		{"referral: unknown member holding 10,000 nested objects", "/api/v1/referrals/", withMember(t, referralBody("TRIAL-CARDIO-001"), "extra", objects), false},
		{"referral: patient holding 10,000 nested objects", "/api/v1/referrals/", `{"trialId":"TRIAL-CARDIO-001","patient":` + objects + "}", false},
		{"referral: the whole body 10,000 nested arrays", "/api/v1/referrals/", arrays, false},
		{"referral: 100,000 unclosed arrays", "/api/v1/referrals/", `{"extra":` + strings.Repeat("[", 100*deep), false},
		{"referral: 200,000 nested arrays", "/api/v1/referrals/", withMember(t, referralBody("TRIAL-CARDIO-001"), "extra", nested("[", "]", 20*deep, "")), false},
		{"qualified: conditions holding 10,000 nested arrays", "/api/v1/referrals/qualified", withMember(t, qualifiedBody("deep-1"), "conditions", arrays), false},
		{"qualified: unknown member holding 10,000 nested objects", "/api/v1/referrals/qualified", withMember(t, qualifiedBody("deep-2"), "extra", objects), false},
		{"admin: scenario rule holding 10,000 nested objects", "/__sandbox/scenarios", `{"match":` + objects + "}", true},
		{"admin: clock move holding 10,000 nested arrays", "/__sandbox/clock", `{"advance":` + arrays + "}", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := request{method: http.MethodPost, path: tt.path, body: tt.body, token: token, invalid: true}
			if tt.admin {
				req.token, req.plain = "", true
			}
			r := s.as(t).do(req)
			wantProblem(t, r, http.StatusBadRequest, sandbox.ProblemTypeBadRequest)
		})
	}
	// Control: the same shape a little less deep is accepted, so the 400s
	// above are about depth and not about an unknown member.
	t.Run("control: unknown member holding 100 nested arrays", func(t *testing.T) {
		r := s.as(t).do(request{method: http.MethodPost, path: "/api/v1/referrals/", token: token,
			body: withMember(t, referralBody("TRIAL-CARDIO-001"), "extra", nested("[", "]", 100, "1"))})
		if r.Status != http.StatusCreated || !strings.Contains(r.Header.Get(sandbox.WarningHeader), "extra") {
			t.Errorf("got %d (warning %q) %s, want 201 warning about extra", r.Status, r.Header.Get(sandbox.WarningHeader), r.Body)
		}
	})
	if r := s.do(request{path: "/api/v1/referrals/trials", token: token}); r.Status != http.StatusOK {
		t.Errorf("after the deep bodies, trials: %d %s", r.Status, r.Body)
	}
}

// TestHostile_HugeHeaders: a request head over MaxHeaderBytes gets net/http's
// 431; one under it is served.
func TestHostile_HugeHeaders(t *testing.T) {
	l := startLiveSandbox(t)
	token, err := l.token(wellBehavedClient(), partner)
	if err != nil {
		t.Fatal(err)
	}
	const oneMB = 1 << 20
	manyHeaders := strings.Repeat("X-Many: 0123456789\r\n", 20000) // 400 KB in small headers
	tests := []struct {
		name   string
		target string
		extra  string
		want   int
	}{
		{"one 1 MB header", "/api/v1/referrals/trials", "X-Big: " + strings.Repeat("a", oneMB) + "\r\n", http.StatusRequestHeaderFieldsTooLarge},
		{"a 1 MB Authorization header", "/api/v1/referrals/trials", "Authorization: Bearer " + strings.Repeat("a", oneMB) + "\r\n", http.StatusRequestHeaderFieldsTooLarge},
		{"20,000 small headers", "/api/v1/referrals/trials", manyHeaders, http.StatusRequestHeaderFieldsTooLarge},
		{"a 1 MB request target", "/api/v1/referrals/trials?x=" + strings.Repeat("a", oneMB), "", http.StatusRequestHeaderFieldsTooLarge},
		// Control: a large head within the limit is served, so the 431s are
		// the limit's doing.
		{"control: a 32 KB header", "/api/v1/referrals/trials", "X-Pad: " + strings.Repeat("a", sandbox.MaxHeaderBytes/2) + "\r\n", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			head := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n", tt.target, l.addr)
			if !strings.HasPrefix(tt.extra, "Authorization") {
				head += "Authorization: Bearer " + token + "\r\n"
			}
			r, err := l.rawExchange(head+tt.extra+"\r\n", nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.status != tt.want {
				t.Errorf("status %d, want %d; body %.300s", r.status, tt.want, r.body)
			}
		})
	}
	l.checkResponsive(t)
}

// TestHostile_SlowHeaders: a client that sends its head one byte every
// 500 ms is dropped once ReadHeaderTimeout has passed, and a partner is
// served while it dribbles.
func TestHostile_SlowHeaders(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the server's read-header timeout (10 s)")
	}
	t.Parallel()
	held := newConnLifetimes()
	l := startLiveSandbox(t, func(srv *http.Server) { srv.ConnState = held.observe })
	conn, err := net.DialTimeout("tcp", l.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	stream := io.MultiReader(strings.NewReader("GET /api/v1/referrals/trials HTTP/1.1\r\nHost: "+l.addr+"\r\nX-Slow: "), repeatedByte('a'))
	dribbling, stop, stopped := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		b := make([]byte, 1)
		for sent := 1; ; sent++ {
			if _, err := stream.Read(b); err != nil {
				return
			}
			if _, err := conn.Write(b); err != nil {
				return // the server hung up
			}
			if sent == 3 {
				close(dribbling)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	defer func() {
		close(stop)
		<-stopped
	}()

	<-dribbling
	l.checkResponsive(t)

	// How long the server held the connection is read off its own clock,
	// from accept to close (see TestHostile_IdleConnections for why).
	const longest = 2 * sandbox.ReadHeaderTimeout
	lifetimes, missing := held.wait([]string{conn.LocalAddr().String()}, longest+30*time.Second)
	if missing > 0 {
		t.Fatalf("the slow client is still connected %s after the server accepted it (ReadHeaderTimeout %s)", longest+30*time.Second, sandbox.ReadHeaderTimeout)
	}
	switch d := lifetimes[0]; {
	case d < sandbox.ReadHeaderTimeout-100*time.Millisecond: // timer granularity
		t.Errorf("dropped after %s, before ReadHeaderTimeout %s: a slow but legal client was cut off early", d, sandbox.ReadHeaderTimeout)
	case d > longest:
		t.Errorf("held %s, longer than %s: ReadHeaderTimeout did not drop the slow client", d, longest)
	}
	// The server has closed the connection, so the read ends at once (in
	// EOF, or a reset if a dribbled byte arrived after the close); the
	// deadline only bounds a failure.
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(conn)
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		t.Fatalf("the server closed the slow client's connection, but reading it timed out")
	case len(got) > 0 && !bytes.HasPrefix(got, []byte("HTTP/1.1 4")):
		t.Errorf("the slow client got %.200q, want a 4xx or a dropped connection", got)
	}
	answer, _, _ := bytes.Cut(got, []byte("\r\n"))
	t.Logf("slow client dropped after %s, answered %q", lifetimes[0].Round(time.Millisecond), answer)
}

// idleConnectionCount is how many idle connections the test opens: 2000, or
// fewer when the open-files limit would not leave room for the rest of the
// test binary (each connection is two descriptors: client and server end).
func idleConnectionCount(t *testing.T) int {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatalf("getrlimit: %v", err)
	}
	const want, reserve = 2000, 512
	n := want
	if lim.Cur < uint64(2*want+reserve) {
		n = int((lim.Cur - min(lim.Cur, reserve)) / 2)
	}
	if n < 100 {
		t.Skipf("open-files limit %d leaves room for only %d connections", lim.Cur, n)
	}
	return n
}

// TestHostile_IdleConnections: thousands of connections that never send a
// byte do not stop a partner being served, and the server drops each of
// them once ReadHeaderTimeout has passed rather than holding it for ever.
//
// How long the server held each connection is read off its own ConnState
// hook: from accepting it (StateNew) to closing it (StateClosed). A
// client-side clock would also count the time a connection waited in the
// kernel's accept queue and the time the test's own goroutines waited to
// run, which on a loaded machine are seconds (a CI run saw 278 of 2000
// connections outlive a deadline taken from the moment they were dialled).
func TestHostile_IdleConnections(t *testing.T) {
	t.Parallel()
	held := newConnLifetimes()
	l := startLiveSandbox(t, func(srv *http.Server) { srv.ConnState = held.observe })
	n := idleConnectionCount(t)
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for i := range n {
		conn, err := net.DialTimeout("tcp", l.addr, 5*time.Second)
		if err != nil {
			t.Fatalf("dial idle connection %d of %d: %v", i+1, n, err)
		}
		conns = append(conns, conn)
	}
	l.checkResponsive(t)
	if testing.Short() {
		t.Logf("%d idle connections open; not waiting %s for them to be dropped under -short", n, sandbox.ReadHeaderTimeout)
		return
	}

	// Twice ReadHeaderTimeout tells the header timeout apart from the
	// server's next limits (ReadTimeout and IdleTimeout, two minutes) while
	// leaving a loaded machine seconds to run the server's goroutines.
	const longest = 2 * sandbox.ReadHeaderTimeout
	addrs := make([]string, len(conns))
	for i, c := range conns {
		addrs[i] = c.LocalAddr().String()
	}
	lifetimes, missing := held.wait(addrs, longest+30*time.Second)
	if missing > 0 {
		t.Errorf("%d of %d idle connections were not closed by the server within %s of the last one being dialled", missing, n, longest+30*time.Second)
	}
	var early, late int
	var shortest, longestSeen time.Duration
	for i, d := range lifetimes {
		if i == 0 || d < shortest {
			shortest = d
		}
		longestSeen = max(longestSeen, d)
		switch {
		case d < sandbox.ReadHeaderTimeout-100*time.Millisecond: // timer granularity
			early++
		case d > longest:
			late++
		}
	}
	if early > 0 {
		t.Errorf("%d idle connections dropped before ReadHeaderTimeout %s (shortest held %s): slow but legal clients would be cut off", early, sandbox.ReadHeaderTimeout, shortest)
	}
	if late > 0 {
		t.Errorf("%d idle connections held longer than %s (longest %s): ReadHeaderTimeout did not drop them", late, longest, longestSeen)
	}

	// The server has closed every connection, so each read below ends at
	// once; the deadline only bounds a failure.
	var answered int
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, err := io.ReadAll(c)
		switch {
		case err != nil:
			t.Errorf("reading an idle connection the server closed: %v", err)
		case len(got) > 0 && !bytes.HasPrefix(got, []byte("HTTP/1.1 4")):
			t.Errorf("an idle connection got %.200q, want a 4xx or nothing", got)
		case len(got) > 0:
			answered++
		}
	}
	t.Logf("%d idle connections held %s to %s: %d dropped silently, %d answered 4xx", n, shortest.Round(time.Millisecond), longestSeen.Round(time.Millisecond), n-answered, answered)
	l.checkResponsive(t)
}

// connLifetimes records, from an http.Server's ConnState hook, when the
// server accepted and closed each connection, keyed by the client's address.
type connLifetimes struct {
	mu       sync.Mutex
	accepted map[string]time.Time
	held     map[string]time.Duration
	closed   chan struct{} // signalled (without blocking) on every close
}

func newConnLifetimes() *connLifetimes {
	return &connLifetimes{accepted: map[string]time.Time{}, held: map[string]time.Duration{}, closed: make(chan struct{}, 1)}
}

// observe is the ConnState hook.
func (c *connLifetimes) observe(conn net.Conn, state http.ConnState) {
	now := time.Now()
	addr := conn.RemoteAddr().String()
	c.mu.Lock()
	defer c.mu.Unlock()
	switch state {
	case http.StateNew:
		c.accepted[addr] = now
	case http.StateClosed, http.StateHijacked:
		if at, ok := c.accepted[addr]; ok {
			c.held[addr] = now.Sub(at)
		}
		select {
		case c.closed <- struct{}{}:
		default:
		}
	}
}

// wait blocks until the server has closed the connection from every one of
// addrs, or timeout passes; it returns how long each closed one was held
// and how many were not closed.
func (c *connLifetimes) wait(addrs []string, timeout time.Duration) (held []time.Duration, missing int) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		held, missing = c.lookup(addrs)
		if missing == 0 {
			return held, 0
		}
		select {
		case <-c.closed:
		case <-deadline.C:
			return c.lookup(addrs)
		}
	}
}

func (c *connLifetimes) lookup(addrs []string) (held []time.Duration, missing int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range addrs {
		if d, ok := c.held[a]; ok {
			held = append(held, d)
		} else {
			missing++
		}
	}
	return held, missing
}
