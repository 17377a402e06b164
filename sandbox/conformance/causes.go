package conformance

import "time"

// cause is why an API call or ping was refused with 401, as the report
// explains it: what happened and what the client should do.
type cause struct {
	// what happened, for the explanation ("expired", "wrong issuer"...).
	what string
	// remedy is what fits: a configuration fix, or a new token and a retry.
	remedy string
	// config marks refusals a new token cannot cure: the client is
	// misconfigured, so retrying is not expected and the check fails.
	config bool
}

// The refusals a 401 can have, keyed by the journal's tokenRefusal (the
// sandbox's idp reasons plus "unknown client").
var causes = map[string]cause{
	"expired": {what: "expired", remedy: "renew the token before it expires; after a 401, obtain a new token and retry"},
	"not yet valid": {what: "not yet valid",
		remedy: "obtain a new token and retry (the sandbox clock was moved back, or the client's clock is ahead)"},
	"wrong issuer": {what: "wrong issuer", config: true,
		remedy: "configuration: the token comes from another identity provider (or another sandbox); fetch tokens from this sandbox's auth_url: a new token from the same place will be refused too"},
	"bad signature": {what: "bad signature", config: true,
		remedy: "configuration: the token was not signed by this sandbox (another sandbox's --signing-key, or a hand-made token); fetch tokens from this sandbox's token endpoint"},
	"unknown signing key": {what: "unknown signing key", config: true,
		remedy: "configuration: the token was signed by a key this sandbox does not have; fetch tokens from this sandbox's token endpoint"},
	"unsupported algorithm": {what: "unsupported algorithm", config: true,
		remedy: "configuration: only RS256 tokens from this sandbox are accepted; fetch tokens from its token endpoint"},
	"malformed": {what: "malformed token", config: true,
		remedy: "send the access_token of the token response unchanged, as Authorization: Bearer <token>"},
	"missing": {what: "no token", config: true, remedy: "send Authorization: Bearer <token> with every API call"},
	"wrong audience": {what: "wrong audience", config: true,
		remedy: "configuration: the token is for another API; ask for scope api://referrals-sandbox/.default"},
	"unknown client": {what: "deleted client", config: true,
		remedy: "configuration: the client no longer exists in this sandbox (deleted, or of the other --environment); use a registered client, a retry will not help"},
}

// jumpCause is a token that expired only because the sandbox clock was
// moved forward: not the client's fault, judged by its recovery.
var jumpCause = cause{what: "expired when the sandbox clock moved", remedy: "obtain a new token and retry"}

// causeOf explains the 401 of call i.
func causeOf(c call, shift time.Duration) cause {
	switch {
	case c.RuleID != "" || c.Scenario != "":
		return cause{what: "forced by a failure rule", remedy: "obtain a new token and retry"}
	case c.expiredByClockMove(shift):
		return jumpCause
	}
	if k, ok := causes[c.TokenRefusal]; ok {
		return k
	}
	if c.presentedExpired() {
		return causes["expired"]
	}
	return cause{what: "refused", remedy: "obtain a new token and retry"}
}

// clockShifts says, for each call, how far the sandbox clock had moved
// forward (POST /__sandbox/clock) since the program first held the token
// the call carries: the journal records the clock's offset with every
// request.
func clockShifts(calls []call) []time.Duration {
	first := map[string]float64{}
	out := make([]time.Duration, len(calls))
	for i, c := range calls {
		if c.TokenID == "" || (!c.issued() && !c.usesToken()) {
			continue
		}
		o, ok := first[c.TokenID]
		if !ok {
			first[c.TokenID] = c.ClockOffsetSeconds
			continue
		}
		if d := c.ClockOffsetSeconds - o; d > 0 {
			out[i] = time.Duration(d * float64(time.Second))
		}
	}
	return out
}

// expiredByClockMove reports whether the call's token had expired on the
// sandbox clock but not on the clock the client lives by (sandbox time
// less the moves since it got the token).
func (c call) expiredByClockMove(shift time.Duration) bool {
	return shift > 0 && c.presentedExpired() && c.start.Add(-shift).Before(c.expires)
}

// leftAt is how long the call's token had left on the client's own clock.
func (c call) leftAt(shift time.Duration) time.Duration {
	return c.expires.Sub(c.start.Add(-shift))
}
