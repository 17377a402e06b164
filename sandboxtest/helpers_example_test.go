package sandboxtest_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/sandboxtest"
)

// Each helper that takes a testing.TB has a twin ending in Context that
// returns its error instead; an Example has no test, so these show the
// twins. In a test, call the helper named in each example's comment.

// listTrials calls GET /referrals/trials with token and returns the status.
func listTrials(sb *sandboxtest.Sandbox, token string) int {
	req, err := http.NewRequest(http.MethodGet, sb.BaseURL+"/referrals/trials", nil)
	if err != nil {
		log.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := sb.Client().Do(req)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// startSandbox starts a sandbox for one example.
func startSandbox(opts ...sandboxtest.Option) *sandboxtest.Sandbox {
	sb, err := sandboxtest.StartServer(opts...)
	if err != nil {
		log.Fatal(err)
	}
	return sb
}

// A TestMain that shares one sandbox between a package's tests starts it
// with StartServer and closes it after m.Run:
//
//	var sb *sandboxtest.Sandbox
//
//	func TestMain(m *testing.M) {
//		var err error
//		if sb, err = sandboxtest.StartServer(); err != nil {
//			log.Fatal(err)
//		}
//		code := m.Run()
//		sb.Close()
//		os.Exit(code)
//	}
func ExampleStartServer() {
	sb, err := sandboxtest.StartServer(sandboxtest.WithTLS())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()
	fmt.Println(sb.DefaultCredentials.ClientID, sb.CACertPEM != nil)
	// Output: sandbox-partner true
}

// In a test: sb.AddRule(t, rule).
func ExampleSandbox_AddRule() {
	sb := startSandbox()
	defer sb.Close()
	ctx := context.Background()
	token, err := sb.TokenContext(ctx, sb.DefaultCredentials)
	if err != nil {
		log.Fatal(err)
	}
	rule, err := sb.AddRuleContext(ctx, sandboxtest.Rule{
		Endpoint: sandboxtest.EndpointAPI, Status: http.StatusServiceUnavailable, RetryAfterSeconds: 2, Times: 1,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rule.ID != "", *rule.Remaining)
	fmt.Println(listTrials(sb, token), listTrials(sb, token))
	// Output:
	// true 1
	// 503 200
}

// In a test: sb.ApplyScenario(t, "token-expired", clientID).
func ExampleSandbox_ApplyScenario() {
	sb := startSandbox()
	defer sb.Close()
	ctx := context.Background()
	token, err := sb.TokenContext(ctx, sb.DefaultCredentials)
	if err != nil {
		log.Fatal(err)
	}
	// token-expired answers the client's next API call with a 401, as if
	// its token had expired; a client should fetch a new one and retry.
	if err := sb.ApplyScenarioContext(ctx, "token-expired", sb.DefaultCredentials.ClientID); err != nil {
		log.Fatal(err)
	}
	fmt.Println(listTrials(sb, token), listTrials(sb, token))
	// Output: 401 200
}

// In a test: sb.Requests(t, filter).
func ExampleSandbox_Requests() {
	sb := startSandbox()
	defer sb.Close()
	ctx := context.Background()
	listTrials(sb, "not-a-token")
	entries, err := sb.RequestsContext(ctx, sandboxtest.JournalFilter{Path: "/api/v1/*"})
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range entries {
		fmt.Println(e.Method, e.Path, e.Status, e.TokenRefusal != "")
	}
	// Output: GET /api/v1/referrals/trials 401 true
}

// In a test: sb.AdvanceClock(t, d).
func ExampleSandbox_AdvanceClock() {
	sb := startSandbox()
	defer sb.Close()
	ctx := context.Background()
	token, err := sb.TokenContext(ctx, sb.DefaultCredentials)
	if err != nil {
		log.Fatal(err)
	}
	// Tokens live an hour: two hours on, the API refuses this one.
	if err := sb.AdvanceClockContext(ctx, 2*time.Hour); err != nil {
		log.Fatal(err)
	}
	fmt.Println(listTrials(sb, token), time.Until(sb.Now()).Round(time.Hour))
	// Output: 401 2h0m0s
}

// In a test: sb.AdvanceClientClock(t, clientID, d).
func ExampleSandbox_AdvanceClientClock() {
	sb := startSandbox()
	defer sb.Close()
	ctx := context.Background()
	moved, err := sb.CredentialsContext(ctx, "sandbox-partner")
	if err != nil {
		log.Fatal(err)
	}
	other, err := sb.CredentialsContext(ctx, "sandbox-readonly")
	if err != nil {
		log.Fatal(err)
	}
	movedToken, err := sb.TokenContext(ctx, moved)
	if err != nil {
		log.Fatal(err)
	}
	otherToken, err := sb.TokenContext(ctx, other)
	if err != nil {
		log.Fatal(err)
	}
	if err := sb.AdvanceClientClockContext(ctx, moved.ClientID, 2*time.Hour); err != nil {
		log.Fatal(err)
	}
	fmt.Println(listTrials(sb, movedToken), listTrials(sb, otherToken))
	// Output: 401 200
}

// In a test: sb.NewClient(t, opts...), which also deletes the client when
// the test ends.
func ExampleSandbox_NewClient() {
	sb := startSandbox()
	defer sb.Close()
	ctx := context.Background()
	creds, err := sb.NewClientContext(ctx, sandboxtest.ClientRoles("Trials.Read"), sandboxtest.ClientTokenLifetime(10*time.Minute))
	if err != nil {
		log.Fatal(err)
	}
	defer sb.DeleteClientContext(ctx, creds.ClientID)
	token, err := sb.TokenContext(ctx, creds)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(creds.Scope, listTrials(sb, token))
	// Output: api://referrals-sandbox/.default 200
}

// In a test: sb.DeleteClient(t, clientID). A client from NewClient needs
// no DeleteClient: it goes when the test ends.
func ExampleSandbox_DeleteClient() {
	sb := startSandbox()
	defer sb.Close()
	ctx := context.Background()
	creds, err := sb.NewClientContext(ctx)
	if err != nil {
		log.Fatal(err)
	}
	token, err := sb.TokenContext(ctx, creds)
	if err != nil {
		log.Fatal(err)
	}
	if err := sb.DeleteClientContext(ctx, creds.ClientID); err != nil {
		log.Fatal(err)
	}
	fmt.Println(listTrials(sb, token))
	// Output: 401
}

// A client with a rate limit of its own meets a 429 while the sandbox
// limits no other client: one request per 1000 seconds, bursts of two.
func ExampleClientRateLimit() {
	sb := startSandbox()
	defer sb.Close()
	ctx := context.Background()
	creds, err := sb.NewClientContext(ctx, sandboxtest.ClientRateLimit(0.001, 2))
	if err != nil {
		log.Fatal(err)
	}
	defer sb.DeleteClientContext(ctx, creds.ClientID)
	token, err := sb.TokenContext(ctx, creds)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(listTrials(sb, token), listTrials(sb, token), listTrials(sb, token))
	// Output: 200 200 429
}

// In a test: sb.Reset(t).
func ExampleSandbox_Reset() {
	sb := startSandbox(sandboxtest.WithScenario("rate-limited"))
	defer sb.Close()
	ctx := context.Background()
	token, err := sb.TokenContext(ctx, sb.DefaultCredentials)
	if err != nil {
		log.Fatal(err)
	}
	before := listTrials(sb, token)
	if err := sb.ResetContext(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println(before, listTrials(sb, token))
	// Output: 429 200
}

// In a test: sb.ResetClient(t, clientID).
func ExampleSandbox_ResetClient() {
	sb := startSandbox()
	defer sb.Close()
	ctx := context.Background()
	creds := sb.DefaultCredentials
	token, err := sb.TokenContext(ctx, creds)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := sb.AddRuleContext(ctx, sandboxtest.Rule{ClientID: creds.ClientID, Endpoint: sandboxtest.EndpointAPI, Status: http.StatusInternalServerError}); err != nil {
		log.Fatal(err)
	}
	before := listTrials(sb, token)
	if err := sb.ResetClientContext(ctx, creds.ClientID); err != nil {
		log.Fatal(err)
	}
	fmt.Println(before, listTrials(sb, token))
	// Output: 500 200
}

// In a test: sb.Token(t, creds).
func ExampleSandbox_Token() {
	sb := startSandbox()
	defer sb.Close()
	token, err := sb.TokenContext(context.Background(), sb.DefaultCredentials)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(listTrials(sb, token))
	_, err = sb.TokenContext(context.Background(), sandboxtest.Credentials{ClientID: "sandbox-partner", ClientSecret: "wrong", Scope: sb.DefaultCredentials.Scope})
	fmt.Println(err != nil)
	// Output:
	// 200
	// true
}

// In a test: sb.Credentials(t, id).
func ExampleSandbox_Credentials() {
	sb := startSandbox()
	defer sb.Close()
	creds, err := sb.CredentialsContext(context.Background(), "sandbox-noroles")
	if err != nil {
		log.Fatal(err)
	}
	token, err := sb.TokenContext(context.Background(), creds)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(creds.ClientID, listTrials(sb, token))
	// Output: sandbox-noroles 403
}

// Client trusts the sandbox's own CA, so it reaches a sandbox started
// WithTLS; give it to the client under test.
func ExampleSandbox_Client() {
	sb := startSandbox(sandboxtest.WithTLS())
	defer sb.Close()
	resp, err := sb.Client().Get(sb.RootURL + "/__sandbox/health")
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode)
	// Output: 200
}
