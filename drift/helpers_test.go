package drift_test

import (
	"context"
	"testing"
	"time"

	"github.com/brianvoe/gofakeit/v7"

	"github.com/referrals-sandbox/referrals-sandbox/drift"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandboxtest"
)

// startSandbox runs a sandbox as serve runs it by default: rate limited,
// so RateLimit-* headers are sent.
func startSandbox(t *testing.T) *sandboxtest.Sandbox {
	t.Helper()
	return sandboxtest.Start(t, sandboxtest.WithRateLimit(sandbox.DefaultRateLimit, sandbox.DefaultRateBurst))
}

// targetOf is a sandbox as one side of a drift run: its partner client,
// the client for another API, and an expired token of a second partner
// whose own clock is moved two hours on.
func targetOf(t *testing.T, name string, sb *sandboxtest.Sandbox) drift.Target {
	t.Helper()
	creds := func(c sandboxtest.Credentials) drift.Credentials {
		return drift.Credentials{ClientID: c.ClientID, ClientSecret: c.ClientSecret, Scope: c.Scope}
	}
	return drift.Target{
		Name: name, RootURL: sb.RootURL, AuthURL: sb.AuthURL,
		Credentials:   creds(sb.DefaultCredentials),
		OtherAudience: creds(sb.Credentials(t, "sandbox-other-api")),
		ExpiredToken: func(context.Context) (string, error) {
			token := sb.Token(t, sb.Credentials(t, "sandbox-partner-2"))
			sb.AdvanceClientClock(t, "sandbox-partner-2", 2*time.Hour)
			return token, nil
		},
	}
}

// config is a drift run between two targets, fast and deterministic: no
// rate limit worth waiting for, no real waiting, a seeded faker.
func config(up, sb drift.Target) drift.Config {
	return drift.Config{
		Upstream: up, Sandbox: sb, MaxRPS: 10000,
		Wait:  func(context.Context, time.Duration) error { return nil },
		Faker: gofakeit.New(7),
	}
}
