package idp_test

import (
	"crypto/tls"
	"net/http/httptest"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
)

// TestIsBaseURL pins IsBaseURL to BaseURL: the API reuses the issuers of
// the last base only when IsBaseURL says the request came through it.
func TestIsBaseURL(t *testing.T) {
	cases := []struct {
		name, publicURL, target string
		tls                     bool
		base                    string
		want                    bool
	}{
		{"same host", "", "http://127.0.0.1:8080/x", false, "http://127.0.0.1:8080", true},
		{"other port", "", "http://127.0.0.1:8081/x", false, "http://127.0.0.1:8080", false},
		{"other host", "", "http://localhost:8080/x", false, "http://127.0.0.1:8080", false},
		{"https base, http request", "", "http://127.0.0.1:8080/x", false, "https://127.0.0.1:8080", false},
		{"http base, https request", "", "https://127.0.0.1:8080/x", true, "http://127.0.0.1:8080", false},
		{"https", "", "https://127.0.0.1:8080/x", true, "https://127.0.0.1:8080", true},
		{"host is a prefix", "", "http://127.0.0.1:80/x", false, "http://127.0.0.1:8080", false},
		{"public URL", "https://sandbox.example", "http://127.0.0.1:8080/x", false, "https://sandbox.example", true},
		{"public URL, request's own base", "https://sandbox.example", "http://127.0.0.1:8080/x", false, "http://127.0.0.1:8080", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSandbox(t, func(cfg *idp.Config) { cfg.PublicURL = c.publicURL })
			r := httptest.NewRequest("GET", c.target, nil)
			if !c.tls {
				r.TLS = nil
			} else if r.TLS == nil {
				r.TLS = &tls.ConnectionState{}
			}
			if got := s.provider.IsBaseURL(r, c.base); got != c.want {
				t.Errorf("IsBaseURL(%s, %q) = %v, want %v", c.target, c.base, got, c.want)
			}
			if got, built := s.provider.IsBaseURL(r, s.provider.BaseURL(r)), s.provider.BaseURL(r); !got {
				t.Errorf("IsBaseURL(%s, BaseURL = %q) = false", c.target, built)
			}
		})
	}
}
