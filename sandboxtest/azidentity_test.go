package sandboxtest_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
	"github.com/referrals-sandbox/referrals-sandbox/sandboxtest"
)

// newAzureCredential builds azidentity's ClientSecretCredential against the
// sandbox: the root URL as the authority host, the sandbox's client as the
// transport, and no instance discovery (it would ask Microsoft's host).
func newAzureCredential(t *testing.T, sb *sandboxtest.Sandbox, secret string) *azidentity.ClientSecretCredential {
	t.Helper()
	options := &azidentity.ClientSecretCredentialOptions{
		ClientOptions: azcore.ClientOptions{
			Cloud:     cloud.Configuration{ActiveDirectoryAuthorityHost: sb.RootURL + "/"},
			Transport: sb.Client(),
		},
		DisableInstanceDiscovery: true,
	}
	cred, err := azidentity.NewClientSecretCredential(idp.DefaultTenant, sb.DefaultCredentials.ClientID, secret, options)
	if err != nil {
		t.Fatalf("ClientSecretCredential: %v", err)
	}
	return cred
}

func TestAzureClientSecretCredential(t *testing.T) {
	t.Setenv("AZURE_REGIONAL_AUTHORITY_NAME", "") // a region would send MSAL to a regional host
	sb := sandboxtest.Start(t, sandboxtest.WithTLS())
	cred := newAzureCredential(t, sb, sb.DefaultCredentials.ClientSecret)
	token, err := cred.GetToken(context.Background(), policy.TokenRequestOptions{Scopes: []string{"api://referrals-sandbox/.default"}})
	if err != nil {
		t.Fatalf("GetToken: %v", err)
	}
	if got := getTrials(t, sb, token.Token); got != http.StatusOK {
		t.Fatalf("trials with azidentity's token: %d, want 200", got)
	}
	if c := testutil.JWTClaims(t, token.Token); c["azp"] != sb.DefaultCredentials.ClientID || c["tid"] != idp.DefaultTenant {
		t.Errorf("token claims azp %v, tid %v", c["azp"], c["tid"])
	}
	if token.ExpiresOn.IsZero() {
		t.Error("azidentity read no expiry from the token response")
	}
}

func TestAzureWrongSecret(t *testing.T) {
	t.Setenv("AZURE_REGIONAL_AUTHORITY_NAME", "")
	sb := sandboxtest.Start(t, sandboxtest.WithTLS())
	cred := newAzureCredential(t, sb, "not-the-secret")
	_, err := cred.GetToken(context.Background(), policy.TokenRequestOptions{Scopes: []string{"api://referrals-sandbox/.default"}})
	if err == nil {
		t.Fatal("azidentity got a token with a wrong secret")
	}
	if !strings.Contains(err.Error(), "AADSTS7000215") {
		t.Errorf("azidentity error %q does not carry AADSTS7000215", err)
	}
}
