package sandboxtest_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandboxtest"
)

// trialsPath is the API call the client tests make with their tokens.
const trialsPath = "/api/v1/referrals/trials"

// call sends method to url with the bearer token (none when empty) through
// the sandbox's client and returns the status and body.
func call(t *testing.T, sb *sandboxtest.Sandbox, method, url, token string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatalf("build %s %s: %v", method, url, err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := sb.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s %s: %v", method, url, err)
	}
	return resp.StatusCode, body
}

// getTrials lists trials with token and returns the status.
func getTrials(t *testing.T, sb *sandboxtest.Sandbox, token string) int {
	t.Helper()
	status, _ := call(t, sb, http.MethodGet, sb.RootURL+trialsPath, token)
	return status
}
