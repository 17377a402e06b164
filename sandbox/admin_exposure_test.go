package sandbox_test

import (
	"net"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// TestAdminExposureWarning: the start-up warning is given exactly when the
// admin API is reachable beyond this machine without a token, and names
// the address.
func TestAdminExposureWarning(t *testing.T) {
	for _, c := range []struct {
		addr  *net.TCPAddr
		token string
		want  string // "" for no warning
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, "", ""},
		{&net.TCPAddr{IP: net.IPv4(127, 9, 9, 9), Port: 8080}, "", ""},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 8080}, "", ""},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 8080}, "", "every network interface (port 8080)"},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}, "", "every network interface (port 8080)"},
		{&net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 9000}, "", "192.0.2.7:9000, a non-loopback address"},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 8080}, "s3cret-admin", ""},
	} {
		got := sandbox.AdminExposureWarning(c.addr, c.token)
		if c.want == "" {
			if got != "" {
				t.Errorf("%s, token %q: warning %q, want none", c.addr, c.token, got)
			}
			continue
		}
		for _, w := range []string{c.want, "anyone who can reach this port", "--admin-token"} {
			if !strings.Contains(got, w) {
				t.Errorf("%s: warning %q should mention %q", c.addr, got, w)
			}
		}
	}
}
