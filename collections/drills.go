package collections

import "github.com/referrals-sandbox/referrals-sandbox/sandbox"

// drills are the failure drills: each forces one failure a client must
// handle with the sandbox's per-request headers, and asserts the status
// the real service would answer with.
func drills() []request {
	api := func(name, header, value string, status int) request {
		return request{folder: Drills, name: name, method: "GET", url: "{{base_url}}/referrals/trials", auth: true,
			headers: [][2]string{{header, value}}, status: status}
	}
	token := func(name, value string, status int) request {
		return request{folder: Drills, name: name, method: "POST", url: tokenURL, status: status,
			headers: [][2]string{{"Content-Type", "application/x-www-form-urlencoded"}, {sandbox.ForceStatusHeader, value}},
			form: [][2]string{
				{"grant_type", "client_credentials"}, {"client_id", "{{client_id}}"},
				{"client_secret", "{{client_secret}}"}, {"scope", "{{scope}}"},
			}}
	}
	limited := api("Rate limited: 429 with Retry-After", sandbox.ForceStatusHeader, "429", 429)
	limited.wantHeader = "Retry-After"
	unavailable := api("Service unavailable: 503 with Retry-After", sandbox.ForceStatusHeader, "503", 503)
	unavailable.wantHeader = "Retry-After"
	return []request{
		token("Token endpoint down: 503", "503", 503),
		token("Token refused: invalid_client", "invalid_client", 401),
		limited,
		unavailable,
		api("Server error: 500", sandbox.ForceStatusHeader, "500", 500),
		api("Token expired (scenario token-expired)", sandbox.ScenarioHeader, "token-expired", 401),
		api("Permissions revoked (scenario permissions-revoked)", sandbox.ScenarioHeader, "permissions-revoked", 403),
		api("Slow answer: 1.5 s delay", sandbox.DelayHeader, "1500ms", 200),
		api("Unknown scenario name: 400", sandbox.ScenarioHeader, "no-such-scenario", 400),
	}
}
