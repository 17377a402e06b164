package redact_test

import (
	"net/http"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redact"
)

// BenchmarkRedactHeaders is the redaction of a typical authenticated API
// call's headers, which every journaled request pays.
func BenchmarkRedactHeaders(b *testing.B) {
	x := redact.New([]string{"sandbox-partner-secret", "sandbox-partner-2-secret", "sandbox-readonly-secret", "sandbox-noroles-secret", "sandbox-other-api-secret"})
	h := http.Header{
		"Authorization":     {"Bearer " + jwtLike},
		"Accept":            {"application/json"},
		"Accept-Encoding":   {"gzip"},
		"User-Agent":        {"azsdk-go-azidentity/v1.8.0 (go1.25; linux)"},
		"Content-Type":      {"application/json"},
		"Client-Request-Id": {"0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"},
		"X-Request-Id":      {"qa-17.trials"},
	}
	for b.Loop() {
		x.Headers(h)
		x.Query("limit=50&cursor=eyJrIjoiUi0xMjM0In0")
		x.Path("/api/v1/referrals/TRIAL-ONCO-002/5e6f7a8b")
	}
}

// BenchmarkRedactQuery is the redaction of a listing's query string, which
// every journaled listing pays: in url.Values' order (as most clients
// encode it), and in another order, which takes parsing and encoding.
func BenchmarkRedactQuery(b *testing.B) {
	x := redact.New([]string{"sandbox-partner-secret", "sandbox-partner-2-secret", "sandbox-readonly-secret", "sandbox-noroles-secret", "sandbox-other-api-secret"})
	for _, q := range []string{"limit=50", "cursor=eyJrIjoiUi0xMjM0In0&limit=50", "limit=50&cursor=eyJrIjoiUi0xMjM0In0"} {
		b.Run(q, func(b *testing.B) {
			for b.Loop() {
				x.Query(q)
			}
		})
	}
}
