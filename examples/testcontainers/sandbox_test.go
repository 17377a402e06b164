// Package testcontainers_test starts the referrals-sandbox image with
// Testcontainers for Go, for teams that prefer a container to the
// in-process sandboxtest package. It is its own module so that the
// sandbox's module does not depend on Testcontainers and the Docker client.
//
//	cd examples/testcontainers && go test ./...
//
// REFERRALS_SANDBOX_IMAGE names the image (default: the released one).
package testcontainers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"testing"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

func sandboxImage() string {
	if img := os.Getenv("REFERRALS_SANDBOX_IMAGE"); img != "" {
		return img
	}
	return "ghcr.io/referrals-sandbox/referrals-sandbox:latest"
}

// startSandbox runs the image and returns its root URL once
// /__sandbox/health answers 200. The container is removed when the test
// ends.
func startSandbox(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	ctr, err := testcontainers.Run(ctx, sandboxImage(),
		testcontainers.WithExposedPorts("8080/tcp"),
		testcontainers.WithWaitStrategy(wait.ForHTTP("/__sandbox/health").WithPort("8080/tcp")),
	)
	testcontainers.CleanupContainer(t, ctr)
	if err != nil {
		t.Fatalf("start the sandbox: %v", err)
	}
	endpoint, err := ctr.PortEndpoint(ctx, "8080/tcp", "http")
	if err != nil {
		t.Fatal(err)
	}
	return endpoint
}

func TestTrialsFromTheSandboxContainer(t *testing.T) {
	root := startSandbox(t)

	// The default development partner's public test credentials.
	resp, err := http.PostForm(root+"/oauth2/v2.0/token", url.Values{
		"grant_type":    {"client_credentials"},
		"client_id":     {"sandbox-partner"},
		"client_secret": {"sandbox-partner-secret"},
		"scope":         {"api://referrals-sandbox/.default"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	err = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("token: %d %v", resp.StatusCode, err)
	}

	req, err := http.NewRequest(http.MethodGet, root+"/api/v1/referrals/trials", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Trials []struct {
			TrialID string `json:"trialId"`
		} `json:"trials"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || resp.StatusCode != http.StatusOK || len(list.Trials) == 0 {
		t.Fatalf("trials: %d %v %+v", resp.StatusCode, err, list)
	}
}
