package sandboxtest_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandboxtest"
)

// TestDeleteClient: a deleted client gets no more tokens and its token is
// refused; NewClient's own cleanup then finds it gone and is content;
// deleting it again fails the test with the sandbox's 404.
func TestDeleteClient(t *testing.T) {
	sb := sandboxtest.Start(t)
	creds := sb.NewClient(t)
	token := sb.Token(t, creds)
	if got := getTrials(t, sb, token); got != http.StatusOK {
		t.Fatalf("trials before DeleteClient: %d, want 200", got)
	}

	sb.DeleteClient(t, creds.ClientID)
	if got := getTrials(t, sb, token); got != http.StatusUnauthorized {
		t.Errorf("trials with the deleted client's token: %d, want 401", got)
	}
	if _, err := sb.TokenContext(t.Context(), creds); err == nil || !strings.Contains(err.Error(), "AADSTS") {
		t.Errorf("token for the deleted client: %v, want the sandbox's AADSTS refusal", err)
	}

	rec := &fatalRecorder{TB: t}
	sb.DeleteClient(rec, creds.ClientID)
	if !strings.Contains(rec.message, "404") {
		t.Errorf("deleting it again failed with %q, want the 404", rec.message)
	}
}

// TestClientRoles: the roles given are the client's only ones, and no
// roles at all is a client the API refuses with 403, not one with every
// partner role.
func TestClientRoles(t *testing.T) {
	sb := sandboxtest.Start(t)
	tests := []struct {
		name string
		opts []sandboxtest.ClientOption
		want int
	}{
		{"every partner role by default", nil, http.StatusOK},
		{"Trials.Read", []sandboxtest.ClientOption{sandboxtest.ClientRoles("Trials.Read")}, http.StatusOK},
		{"another role only", []sandboxtest.ClientOption{sandboxtest.ClientRoles("Referrals.Read")}, http.StatusForbidden},
		{"no role", []sandboxtest.ClientOption{sandboxtest.ClientRoles()}, http.StatusForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			creds := sb.NewClient(t, tc.opts...)
			if got := getTrials(t, sb, sb.Token(t, creds)); got != tc.want {
				t.Errorf("trials: %d, want %d", got, tc.want)
			}
		})
	}
}

// TestClientRateLimit: a client's own rate limit applies to it alone,
// whether or not the sandbox limits every client; 0 exempts it from the
// sandbox-wide limit; a negative one is the sandbox's refusal.
func TestClientRateLimit(t *testing.T) {
	// Refilling one request per 1000s keeps the counts exact however slow
	// the machine.
	const slowRate = 0.001
	pings := func(t *testing.T, sb *sandboxtest.Sandbox, creds sandboxtest.Credentials, n int) []int {
		t.Helper()
		token := sb.Token(t, creds)
		var got []int
		for range n {
			status, _ := call(t, sb, http.MethodGet, sb.RootURL+"/health/ping", token)
			got = append(got, status)
		}
		return got
	}
	t.Run("limits the client on an unlimited sandbox", func(t *testing.T) {
		sb := sandboxtest.Start(t)
		limited := sb.NewClient(t, sandboxtest.ClientRateLimit(slowRate, 2))
		other := sb.NewClient(t)
		if got, want := pings(t, sb, limited, 3), []int{200, 200, 429}; !slices.Equal(got, want) {
			t.Errorf("the limited client's pings: %v, want %v", got, want)
		}
		if got, want := pings(t, sb, other, 3), []int{200, 200, 200}; !slices.Equal(got, want) {
			t.Errorf("another client's pings: %v, want %v", got, want)
		}
	})
	t.Run("0 exempts the client from the sandbox's limit", func(t *testing.T) {
		sb := sandboxtest.Start(t, sandboxtest.WithRateLimit(slowRate, 1))
		exempt := sb.NewClient(t, sandboxtest.ClientRateLimit(0, 0))
		other := sb.NewClient(t)
		if got, want := pings(t, sb, exempt, 3), []int{200, 200, 200}; !slices.Equal(got, want) {
			t.Errorf("the exempt client's pings: %v, want %v", got, want)
		}
		if got, want := pings(t, sb, other, 2), []int{200, 429}; !slices.Equal(got, want) {
			t.Errorf("another client's pings: %v, want %v", got, want)
		}
	})
	t.Run("negative is refused", func(t *testing.T) {
		sb := sandboxtest.Start(t)
		_, err := sb.NewClientContext(context.Background(), sandboxtest.ClientRateLimit(-1, 1))
		if err == nil || !strings.Contains(err.Error(), "rateLimit") {
			t.Errorf("a negative rate limit: %v, want the sandbox's refusal naming rateLimit", err)
		}
	})
}
