package e2e

import (
	"net"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestHandshakeFloodLogsLittle: net/http logs every failed TLS handshake;
// anyone who can reach the port can open connections by the thousand, each
// worth a line. The sandbox writes at most one such line a second, with a
// count of those held back.
func TestHandshakeFloodLogsLittle(t *testing.T) {
	p := startTLSSandbox(t)
	u, err := url.Parse(p.base)
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + u.Port()
	const conns = 300
	start := time.Now()
	for range conns {
		c, err := net.DialTimeout("tcp", addr, requestTimeout)
		if err != nil {
			t.Fatal(err)
		}
		// A TLS record header, then a record that is no ClientHello.
		_, _ = c.Write([]byte{0x16, 0x03, 0x01, 0x00, 0x05, 'h', 'e', 'l', 'l', 'o'})
		_ = c.SetReadDeadline(time.Now().Add(requestTimeout))
		_, _ = c.Read(make([]byte, 64)) // the server's alert, or its close
		_ = c.Close()
	}
	elapsed := time.Since(start)
	// Wait for the last connection's line to be written or counted: one
	// more failed handshake after a second is always let through.
	deadline := time.Now().Add(30 * time.Second)
	pace := time.NewTicker(50 * time.Millisecond) // a probe a tick, until the line shows
	defer pace.Stop()
	for !strings.Contains(p.stderr.String(), `"suppressed"`) {
		<-pace.C
		if time.Now().After(deadline) {
			t.Fatalf("no line counted the failed handshakes held back; stderr:\n%.2000s", p.stderr)
		}
		c, err := net.DialTimeout("tcp", addr, requestTimeout)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write([]byte{0x16, 0x03, 0x01, 0x00, 0x05, 'h', 'e', 'l', 'l', 'o'})
		_, _ = c.Read(make([]byte, 64))
		_ = c.Close()
	}
	lines := strings.Count(p.stderr.String(), "TLS handshake error")
	if limit := int(time.Since(start)/time.Second) + 2; lines > limit {
		t.Errorf("%d failed handshakes in %s wrote %d lines; at most %d (one a second)", conns, elapsed, lines, limit)
	}
	if lines == 0 {
		t.Error("no failed handshake was logged at all")
	}
}
