// Package sandboxtest runs the whole referrals sandbox (identity provider,
// referrals API and admin API) inside a Go test, on a free loopback port,
// so a partner's integration tests need no container and no network:
//
//	func TestSubmitReferral(t *testing.T) {
//		sb := sandboxtest.Start(t, sandboxtest.WithTLS())
//		creds := sb.NewClient(t) // a client of this test's own
//		client := yourapi.NewClient(yourapi.Config{
//			AuthURL: sb.AuthURL, BaseURL: sb.BaseURL, HTTPClient: sb.Client(),
//			ClientID: creds.ClientID, ClientSecret: creds.ClientSecret,
//		})
//		sb.ApplyScenario(t, "token-expired", creds.ClientID)
//		if _, err := client.ListTrials(t.Context()); err != nil {
//			t.Fatal(err) // the client should have fetched a new token and retried
//		}
//		got := sb.Requests(t, sandboxtest.JournalFilter{ClientID: creds.ClientID})
//		// assert on what your client sent ...
//	}
//
// # Helpers with and without a test
//
// Start stops the sandbox with t.Cleanup; StartServer and Close do the same
// without a test, e.g. in a TestMain that shares one sandbox between a
// package's tests. Likewise every helper that takes a testing.TB (AddRule,
// Requests, Reset...) fails the test with the sandbox's reason when the
// sandbox refuses, and has a twin ending in Context (AddRuleContext,
// RequestsContext, ResetContext...) that takes a context and returns that
// reason as an error instead. A failed read is always an error, never an
// empty answer.
//
// # A stable API
//
// The sandbox's other packages are its implementation and change freely;
// this package is the API to keep. Its signatures use only its own types
// (Rule, JournalEntry, Credentials...) and the standard library's, which
// mirror the admin API's JSON, documented in docs/admin-api.md and in the admin
// API's OpenAPI document.
//
// # Parallel tests
//
// One sandbox serves parallel tests (t.Parallel) when each test works as a
// client of its own from NewClient: its records, rules, clock and journal
// entries are then its own, and ResetClient and AdvanceClientClock touch
// no other test's. Reset and AdvanceClock act on every client.
package sandboxtest
