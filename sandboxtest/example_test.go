package sandboxtest_test

import (
	"context"
	"encoding/json"
	"fmt"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/referrals-sandbox/referrals-sandbox/sandboxtest"
)

// A partner's client, configured as it would be for the real service, talks
// to a sandbox started in-process: it gets a token with the client
// credentials grant, lists the trials that take referrals and pings the
// service. In a test, use sandboxtest.Start(t) instead of StartServer.
func Example() {
	sb, err := sandboxtest.StartServer(sandboxtest.WithTLS())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()

	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, sb.Client())
	config := clientcredentials.Config{
		ClientID:     sb.DefaultCredentials.ClientID,
		ClientSecret: sb.DefaultCredentials.ClientSecret,
		TokenURL:     sb.TokenURL,
		Scopes:       []string{sb.DefaultCredentials.Scope},
	}
	client := config.Client(ctx)

	resp, err := client.Get(sb.BaseURL + "/referrals/trials")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var list struct {
		Trials []struct {
			TrialID string `json:"trialId"`
		} `json:"trials"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.StatusCode)
	for _, trial := range list.Trials {
		fmt.Println(trial.TrialID)
	}

	ping, err := client.Get(sb.RootURL + "/health/ping")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ping.Body.Close()
	var pong struct {
		Message string `json:"message"`
	}
	if err := json.NewDecoder(ping.Body).Decode(&pong); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ping.StatusCode, pong.Message)
	// Output:
	// 200
	// TRIAL-CARDIO-001
	// TRIAL-ONCO-002
	// TRIAL-DIAB-003
	// 200 pong
}
