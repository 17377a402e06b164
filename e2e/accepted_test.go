package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http/httptrace"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
)

// connWatch notes the local ports of the connections requests go out on,
// so a test can wait until the server has accepted every one of them: the
// signal that those requests are in flight in the server, where a sleep
// could only hope so.
type connWatch struct {
	mu    sync.Mutex
	ports map[int]bool
}

// trace returns ctx with a trace that notes each request's connection.
func (w *connWatch) trace(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		if addr, ok := info.Conn.LocalAddr().(*net.TCPAddr); ok {
			w.mu.Lock()
			defer w.mu.Unlock()
			if w.ports == nil {
				w.ports = map[int]bool{}
			}
			w.ports[addr.Port] = true
		}
	}})
}

// waitAccepted waits until n connections noted by w exist and the server
// at base has accepted each: in /proc/net/tcp a connection the server has
// not accepted yet has no socket inode (0). It skips the test where there
// is no /proc/net/tcp.
func (w *connWatch) waitAccepted(t *testing.T, base string, n int) {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	serverPort, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatalf("port of %s: %v", base, err)
	}
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skipf("no /proc/net/tcp (%v): cannot tell when the server has accepted the connections", err)
	}
	testutil.Eventually(t, healthWait, func() error {
		w.mu.Lock()
		ports := len(w.ports)
		w.mu.Unlock()
		if ports < n {
			return fmt.Errorf("%d of %d requests have a connection", ports, n)
		}
		accepted, err := w.accepted(serverPort)
		if err != nil {
			return err
		}
		if accepted < n {
			return fmt.Errorf("the server has accepted %d of the %d connections", accepted, n)
		}
		return nil
	})
}

// accepted counts the noted connections that the server on serverPort
// has accepted.
func (w *connWatch) accepted(serverPort int) (int, error) {
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	lines := bufio.NewScanner(f)
	lines.Scan() // the header
	for lines.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		fields := strings.Fields(lines.Text())
		if len(fields) < 10 {
			continue
		}
		if hexPort(fields[1]) == serverPort && w.ports[hexPort(fields[2])] && fields[9] != "0" {
			n++
		}
	}
	return n, lines.Err()
}

// hexPort is the port of an address of /proc/net/tcp (0100007F:1F90).
func hexPort(addr string) int {
	_, port, _ := strings.Cut(addr, ":")
	p, err := strconv.ParseInt(port, 16, 32)
	if err != nil {
		return -1
	}
	return int(p)
}
