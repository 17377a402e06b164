package sandbox

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/logthrottle"
)

// TestUntrustedCAIsNamedInTheLog: a client that refuses the certificate
// (msal-node without the CA reports only endpoints_resolution_error)
// leaves a warning naming the likely cause and the remedy, whichever way
// its refusal reached the server (an alert, a garbled record from curl,
// Node's bare close); other error lines do not get that hint.
func TestUntrustedCAIsNamedInTheLog(t *testing.T) {
	for _, tt := range []struct {
		line string
		hint bool
	}{
		{"http: TLS handshake error from 127.0.0.1:50432: remote error: tls: unknown certificate authority", true},
		{"http: TLS handshake error from 127.0.0.1:50433: remote error: tls: bad certificate", true},
		{"http: TLS handshake error from 127.0.0.1:50434: local error: tls: bad record MAC", true},
		{"http: TLS handshake error from 127.0.0.1:50435: EOF", true},
		{"http: Accept error: accept tcp 127.0.0.1:8080: accept4: too many open files; retrying in 5ms", false},
	} {
		var out bytes.Buffer
		l := serverErrorLog{log: slog.New(slog.NewTextHandler(&out, nil)), throttle: logthrottle.New(time.Second, time.Now)}
		if _, err := l.Write([]byte(tt.line + "\n")); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(out.String(), "referrals-sandbox trust"); got != tt.hint {
			t.Errorf("%q logged %q: hint %v, want %v", tt.line, out.String(), got, tt.hint)
		}
	}
}
