package sandboxtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// Credentials are what a partner's client is configured with to get a
// token: the client id and secret, and the scope to ask for.
type Credentials struct {
	// ClientID is the client's client_id.
	ClientID string
	// ClientSecret is its client_secret.
	ClientSecret string
	// Scope is the client's resource plus /.default, e.g.
	// api://referrals-sandbox/.default.
	Scope string
}

// credentialsOf gives a fixture client's credentials; a client without
// resources asks for the referrals API, which the token endpoint refuses.
func credentialsOf(c referrals.Client) Credentials {
	resource := idp.DefaultResource
	if len(c.Resources) > 0 {
		resource = c.Resources[0]
	}
	return Credentials{ClientID: c.ClientID, ClientSecret: c.ClientSecret, Scope: resource + "/.default"}
}

// defaultCredentials are the first client's, or none without clients.
func defaultCredentials(clients []referrals.Client) Credentials {
	if len(clients) == 0 {
		return Credentials{}
	}
	return credentialsOf(clients[0])
}

// Credentials returns the credentials of the fixture client id, e.g.
// sandbox-readonly or sandbox-noroles of the embedded fixtures. An id the
// sandbox does not know fails the test, naming the ones it does.
func (s *Sandbox) Credentials(t testing.TB, id string) Credentials {
	t.Helper()
	creds, err := s.CredentialsContext(context.Background(), id)
	if err != nil {
		t.Fatalf("sandboxtest: %v", err)
	}
	return creds
}

// CredentialsContext is Credentials without a test: an id the sandbox does
// not know is an error naming the ones it does. The sandbox runs in this
// process, so the lookup does not wait; a ctx already done is its error.
func (s *Sandbox) CredentialsContext(ctx context.Context, id string) (Credentials, error) {
	if err := ctx.Err(); err != nil {
		return Credentials{}, fmt.Errorf("credentials of %s: %w", id, err)
	}
	c, ok := s.instance.Provider.Client(id)
	if !ok {
		var known []string
		for _, c := range s.instance.Provider.Clients() {
			known = append(known, c.ClientID)
		}
		return Credentials{}, fmt.Errorf("no client %q; known: %s", id, strings.Join(known, ", "))
	}
	return credentialsOf(c), nil
}

// Token gets an access token for creds from the token endpoint (secret in
// the form, as MSAL sends it) and fails the test when the sandbox refuses,
// with the sandbox's error (an AADSTS code and its description).
func (s *Sandbox) Token(t testing.TB, creds Credentials) string {
	t.Helper()
	token, err := s.TokenContext(context.Background(), creds)
	if err != nil {
		t.Fatalf("sandboxtest: %v", err)
	}
	return token
}

// TokenContext is Token without a test: a refusal is an error.
func (s *Sandbox) TokenContext(ctx context.Context, creds Credentials) (string, error) {
	form := url.Values{
		"grant_type":    {"client_credentials"},
		"client_id":     {creds.ClientID},
		"client_secret": {creds.ClientSecret},
		"scope":         {creds.Scope},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", fmt.Errorf("token request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := s.httpClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("token request for %s: %w", creds.ClientID, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes))
	if err != nil {
		return "", fmt.Errorf("token response for %s: %w", creds.ClientID, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("token request for %s: %s: %s", creds.ClientID, resp.Status, body)
	}
	var answer struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(body, &answer); err != nil || answer.AccessToken == "" {
		return "", fmt.Errorf("token response for %s has no access_token: %s", creds.ClientID, body)
	}
	return answer.AccessToken, nil
}
