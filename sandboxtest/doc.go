// Package sandboxtest runs the whole referrals sandbox (identity provider,
// referrals API and admin API) inside a Go test, on a free loopback port,
// so a partner's integration tests need no container and no network:
//
//	func TestSubmitReferral(t *testing.T) {
//		sb := sandboxtest.Start(t, sandboxtest.WithTLS())
//		client := yourapi.NewClient(yourapi.Config{
//			AuthURL: sb.AuthURL, BaseURL: sb.BaseURL, HTTPClient: sb.HTTPClient(),
//			ClientID: sb.Credentials.ClientID, ClientSecret: sb.Credentials.ClientSecret,
//		})
//		sb.ApplyScenario(t, "token-expired", sb.Credentials.ClientID)
//		if _, err := client.ListTrials(t.Context()); err != nil {
//			t.Fatal(err) // the client should have fetched a new token and retried
//		}
//		got := sb.Requests(t, journal.Filter{Path: "/api/v1/*"})
//		// assert on what your client sent ...
//	}
//
// Start stops the sandbox with t.Cleanup. StartServer and Close do the same
// outside a test (an Example, a TestMain, a local tool).
package sandboxtest
