package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Credentials of the embedded fixtures (public test values, also in the
// README) and of fixtures generated from them.
const (
	benchClientID     = "sandbox-partner"
	benchClientSecret = "sandbox-partner-secret"
	benchScope        = "api://referrals-sandbox/.default"
)

// fetchToken asks the sandbox for an access token of sandbox-partner. It
// lives an hour by default: far longer than any measurement.
func fetchToken(ctx context.Context, base string) (string, error) {
	form := url.Values{
		"grant_type":    {"client_credentials"},
		"client_id":     {benchClientID},
		"client_secret": {benchClientSecret},
		"scope":         {benchScope},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/oauth2/v2.0/token", strings.NewReader(form.Encode()))
	if err != nil {
		return "", fmt.Errorf("token request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return "", fmt.Errorf("token request: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("token response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("token request: status %d: %s", resp.StatusCode, body)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(body, &tok); err != nil || tok.AccessToken == "" {
		return "", fmt.Errorf("token response has no access_token: %s", body)
	}
	return tok.AccessToken, nil
}
