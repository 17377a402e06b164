package sandboxtest_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/referrals-sandbox/referrals-sandbox/sandboxtest"
)

// oauth2Config is x/oauth2's client-credentials configuration for the
// sandbox's default client.
func oauth2Config(sb *sandboxtest.Sandbox, secret string, style oauth2.AuthStyle) *clientcredentials.Config {
	return &clientcredentials.Config{
		ClientID:     sb.DefaultCredentials.ClientID,
		ClientSecret: secret,
		TokenURL:     sb.TokenURL,
		Scopes:       []string{sb.DefaultCredentials.Scope},
		AuthStyle:    style,
	}
}

// oauth2Context makes x/oauth2 use the sandbox's HTTP client.
func oauth2Context(sb *sandboxtest.Sandbox) context.Context {
	return context.WithValue(context.Background(), oauth2.HTTPClient, sb.Client())
}

func TestOAuth2AuthStyles(t *testing.T) {
	tests := []struct {
		name  string
		style oauth2.AuthStyle
		basic bool // whether the successful request used HTTP Basic
	}{
		{"auto-detect", oauth2.AuthStyleAutoDetect, true}, // tries Basic first
		{"in header", oauth2.AuthStyleInHeader, true},
		{"in params", oauth2.AuthStyleInParams, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sb := sandboxtest.Start(t)
			tok, err := oauth2Config(sb, sb.DefaultCredentials.ClientSecret, tc.style).Token(oauth2Context(sb))
			if err != nil {
				t.Fatalf("Token: %v", err)
			}
			if tok.TokenType != "Bearer" || tok.Expiry.IsZero() {
				t.Errorf("token type %q, expiry %v", tok.TokenType, tok.Expiry)
			}
			if got := getTrials(t, sb, tok.AccessToken); got != http.StatusOK {
				t.Fatalf("trials with x/oauth2's token: %d, want 200", got)
			}
			requests := sb.Requests(t, sandboxtest.JournalFilter{Path: "/" + sb.Tenant + "/oauth2/v2.0/token"})
			if len(requests) != 1 || requests[0].Status != http.StatusOK {
				t.Fatalf("token requests: %+v, want one answered 200", requests)
			}
			if _, basic := requests[0].Headers["Authorization"]; basic != tc.basic {
				t.Errorf("token request used HTTP Basic: %v, want %v", basic, tc.basic)
			}
		})
	}
}

func TestOAuth2WrongSecret(t *testing.T) {
	tests := []struct {
		name     string
		style    oauth2.AuthStyle
		requests int
	}{
		// Auto-detect retries a refused Basic request with form parameters.
		{"auto-detect", oauth2.AuthStyleAutoDetect, 2},
		{"in header", oauth2.AuthStyleInHeader, 1},
		{"in params", oauth2.AuthStyleInParams, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sb := sandboxtest.Start(t)
			_, err := oauth2Config(sb, "not-the-secret", tc.style).Token(oauth2Context(sb))
			var refused *oauth2.RetrieveError
			if !errors.As(err, &refused) {
				t.Fatalf("error %v is not a RetrieveError", err)
			}
			if refused.ErrorCode != "invalid_client" || !strings.Contains(string(refused.Body), "AADSTS7000215") {
				t.Errorf("refusal: code %q, body %s", refused.ErrorCode, refused.Body)
			}
			if got := sb.Requests(t, sandboxtest.JournalFilter{Status: http.StatusUnauthorized}); len(got) != tc.requests {
				t.Errorf("refused token requests: %d, want %d", len(got), tc.requests)
			}
		})
	}
}

// TestOAuth2TokenSourceRenews shows the renewal a partner's client relies
// on. x/oauth2 judges expiry by the real wall clock, renewing 10s early, so
// an 11s token is one it renews after about a second of real time; moving
// the sandbox clock on makes the sandbox reject the old token meanwhile.
func TestOAuth2TokenSourceRenews(t *testing.T) {
	const lifetime = 11 * time.Second
	sb := sandboxtest.Start(t, sandboxtest.WithTLS(), sandboxtest.WithTokenLifetime(lifetime))
	// Config.TokenSource is an oauth2.ReuseTokenSource over the token endpoint.
	source := oauth2Config(sb, sb.DefaultCredentials.ClientSecret, oauth2.AuthStyleInParams).TokenSource(oauth2Context(sb))

	first, err := source.Token()
	if err != nil {
		t.Fatalf("first token: %v", err)
	}
	if got := getTrials(t, sb, first.AccessToken); got != http.StatusOK {
		t.Fatalf("trials with the first token: %d, want 200", got)
	}
	sb.AdvanceClock(t, lifetime+time.Second) // past expiry
	if got := getTrials(t, sb, first.AccessToken); got != http.StatusUnauthorized {
		t.Fatalf("trials with the first token after the clock moved past its expiry: %d, want 401", got)
	}

	// Ask the source until it judges its token expired; the deadline only
	// guards against a source that never renews.
	var renewed *oauth2.Token
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		tok, err := source.Token()
		if err != nil {
			t.Fatalf("token: %v", err)
		}
		if tok.AccessToken != first.AccessToken {
			renewed = tok
			break
		}
	}
	if renewed == nil {
		t.Fatal("the token source never renewed its token")
	}
	if got := getTrials(t, sb, renewed.AccessToken); got != http.StatusOK {
		t.Fatalf("trials with the renewed token: %d, want 200", got)
	}

	// However often it was asked, the source fetched exactly two tokens,
	// and the API saw the old token twice, then the new one.
	tokens := sb.Requests(t, sandboxtest.JournalFilter{Path: "/" + sb.Tenant + "/oauth2/v2.0/token"})
	if len(tokens) != 2 {
		t.Fatalf("token requests: %d, want 2", len(tokens))
	}
	calls := sb.Requests(t, sandboxtest.JournalFilter{Path: trialsPath})
	want := []struct {
		status  int
		tokenID string
	}{
		{http.StatusOK, tokens[0].TokenID},
		{http.StatusUnauthorized, tokens[0].TokenID},
		{http.StatusOK, tokens[1].TokenID},
	}
	if len(calls) != len(want) || tokens[0].TokenID == tokens[1].TokenID {
		t.Fatalf("API calls %+v with token ids %q, %q", calls, tokens[0].TokenID, tokens[1].TokenID)
	}
	for i, w := range want {
		if calls[i].Status != w.status || calls[i].TokenID != w.tokenID {
			t.Errorf("API call %d: status %d token %q, want %d %q", i+1, calls[i].Status, calls[i].TokenID, w.status, w.tokenID)
		}
	}
}
