package idp

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// benchProvider builds a provider over the default fixtures for benchmarks
// and fuzz targets.
func benchProvider(b testing.TB) (*Provider, referrals.Client) {
	b.Helper()
	set, err := fixtures.Default()
	if err != nil {
		b.Fatal(err)
	}
	keys, err := LoadKeys(fixtures.DefaultSigningKeyPEM())
	if err != nil {
		b.Fatal(err)
	}
	p, err := New(Config{Clients: set.Clients, Keys: keys, Clock: clock.NewAdjustable(nil)})
	if err != nil {
		b.Fatal(err)
	}
	return p, set.Clients[0]
}

const benchIssuer = "http://127.0.0.1:8080/" + DefaultTenant + "/v2.0"

// BenchmarkIssue is the RS256 signing rate of the sandbox key: the ceiling
// of the token endpoint (bench/run compares the endpoint against it).
func BenchmarkIssue(b *testing.B) {
	p, client := benchProvider(b)
	for b.Loop() {
		if _, err := p.issue(client, requestedResource{appIDURI: DefaultResource, named: DefaultResource}, benchIssuer); err != nil {
			b.Fatal(err)
		}
	}
}

// benchToken issues one token and the expectation it meets.
func benchToken(b *testing.B) (*Provider, string, Expectation) {
	b.Helper()
	p, client := benchProvider(b)
	tok, err := p.issue(client, requestedResource{appIDURI: DefaultResource, named: DefaultResource}, benchIssuer)
	if err != nil {
		b.Fatal(err)
	}
	return p, tok.AccessToken, Expectation{Audience: DefaultResource, ApplicationID: ApplicationID(DefaultResource), Issuers: []string{benchIssuer}}
}

// BenchmarkValidateCached is what every API request pays for its token.
func BenchmarkValidateCached(b *testing.B) {
	p, token, want := benchToken(b)
	for b.Loop() {
		if _, err := p.Validate(token, want); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateUncached is the first use of a token: parse and verify.
func BenchmarkValidateUncached(b *testing.B) {
	p, token, want := benchToken(b)
	for b.Loop() {
		p.cache = newValidationCache()
		if _, err := p.Validate(token, want); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIssueParallel is the RS256 signing rate on every core: the
// ceiling of the token endpoint under load.
func BenchmarkIssueParallel(b *testing.B) {
	p, client := benchProvider(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := p.issue(client, requestedResource{appIDURI: DefaultResource, named: DefaultResource}, benchIssuer); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkSignRS256Parallel is bare RS256 signing with Go's crypto/rsa on
// every core, with the sandbox key: the ceiling of BenchmarkIssueParallel,
// whose difference from it is what issuing spends beyond the signature
// (claims, JSON, the JWS library).
func BenchmarkSignRS256Parallel(b *testing.B) {
	p, _ := benchProvider(b)
	digest := sha256.Sum256([]byte("eyJhbGciOiJSUzI1NiJ9.eyJ1dGkiOiJiZW5jaCJ9"))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := rsa.SignPKCS1v15(nil, p.cfg.Keys.signing, crypto.SHA256, digest[:]); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
