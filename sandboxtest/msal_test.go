package sandboxtest_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/AzureAD/microsoft-authentication-library-for-go/apps/confidential"

	"github.com/referrals-sandbox/referrals-sandbox/sandboxtest"
)

// microsoftLogin is the host MSAL asks for instance discovery whatever the
// authority; the sandbox's HTTP client routes it to the sandbox.
const microsoftLogin = "login.microsoftonline.com"

// msalScopes is what a partner asks MSAL for.
var msalScopes = []string{"api://referrals-sandbox/.default"}

// newMSALClient builds MSAL's confidential client against the sandbox
// authority, as a partner would for the real service.
func newMSALClient(t *testing.T, sb *sandboxtest.Sandbox, secret string, discovery bool) confidential.Client {
	t.Helper()
	cred, err := confidential.NewCredFromSecret(secret)
	if err != nil {
		t.Fatalf("MSAL credential: %v", err)
	}
	client, err := confidential.New(sb.AuthURL, sb.DefaultCredentials.ClientID, cred,
		confidential.WithHTTPClient(sb.Client()),
		confidential.WithInstanceDiscovery(discovery))
	if err != nil {
		t.Fatalf("MSAL client: %v", err)
	}
	return client
}

func TestMSALConfidentialClient(t *testing.T) {
	t.Setenv("MSAL_FORCE_REGION", "") // a region would send MSAL to a regional host
	tests := []struct {
		name      string
		discovery bool
	}{
		{"instance discovery off", false},
		{"instance discovery on", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sb := sandboxtest.Start(t, sandboxtest.WithTLS(microsoftLogin))
			client := newMSALClient(t, sb, sb.DefaultCredentials.ClientSecret, tc.discovery)
			ctx := context.Background()

			first, err := client.AcquireTokenByCredential(ctx, msalScopes)
			if err != nil {
				t.Fatalf("AcquireTokenByCredential: %v", err)
			}
			if got := getTrials(t, sb, first.AccessToken); got != http.StatusOK {
				t.Fatalf("trials with MSAL's token: %d, want 200", got)
			}
			// MSAL caches the token: the sandbox's answer carried all it needs.
			second, err := client.AcquireTokenByCredential(ctx, msalScopes)
			if err != nil {
				t.Fatalf("second AcquireTokenByCredential: %v", err)
			}
			if second.AccessToken != first.AccessToken {
				t.Error("MSAL asked for a new token instead of using its cache")
			}

			tokenRequests := sb.Requests(t, sandboxtest.JournalFilter{Path: "/" + sb.Tenant + "/oauth2/v2.0/token"})
			if len(tokenRequests) != 1 || tokenRequests[0].Status != http.StatusOK {
				t.Errorf("token requests: %+v, want one answered 200", tokenRequests)
			}
			// MSAL asks login.microsoftonline.com once to resolve the authority
			// and once more for its cache's host aliases; each must reach the
			// sandbox and be answered.
			discoveries := sb.Requests(t, sandboxtest.JournalFilter{Path: "/common/discovery/instance"})
			if !tc.discovery && len(discoveries) != 0 {
				t.Errorf("instance discovery off, yet MSAL asked for it: %+v", discoveries)
			}
			if tc.discovery && len(discoveries) == 0 {
				t.Error("instance discovery on, yet no discovery request reached the sandbox")
			}
			for _, d := range discoveries {
				if d.Status != http.StatusOK || !strings.Contains(d.Query, "authorization_endpoint") {
					t.Errorf("instance discovery request: %+v", d)
				}
			}
		})
	}
}

func TestMSALWrongSecret(t *testing.T) {
	t.Setenv("MSAL_FORCE_REGION", "")
	sb := sandboxtest.Start(t, sandboxtest.WithTLS())
	client := newMSALClient(t, sb, "not-the-secret", false)
	_, err := client.AcquireTokenByCredential(context.Background(), msalScopes)
	if err == nil {
		t.Fatal("MSAL got a token with a wrong secret")
	}
	if !strings.Contains(err.Error(), "AADSTS7000215") {
		t.Errorf("MSAL error %q does not carry AADSTS7000215", err)
	}
}
