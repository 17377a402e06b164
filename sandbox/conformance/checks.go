package conformance

import "time"

// Check ids. They are stable: CI jobs and documentation refer to them.
const (
	// CheckExpiredToken: after a 401 from the API or ping, the client's
	// next call carries a different token (it fetched a new one and
	// retried). Fail when it called again with the refused token (or with
	// none); warn when
	// a call presented an expired token (it recovered, but the token should
	// have been renewed first: see renews-before-expiry) or when the client
	// stopped after a 401 without even fetching a new token.
	CheckExpiredToken = "expired-token"
	// CheckRenewsBeforeExpiry: the client renews its token before it
	// expires, not when a 401 tells it to. Fail when a call presented an
	// expired token; warn when a call presented a token with less than the
	// renewal margin (60 s) left; pass when the client renewed at least once
	// and did neither. A token that lapsed while the client was idle and
	// was replaced before the next call is fine. Expired means at or past
	// the token's exp, even inside a --clock-skew allowance (such a call
	// still succeeds).
	CheckRenewsBeforeExpiry = "renews-before-expiry"
	// CheckReusesTokens: one token serves many calls. New tokens are
	// compared with API and ping calls, leaving out 401s and the tokens
	// fetched to recover from them: fail when there are at least as many
	// tokens as calls, warn when more than half as many; judged from 3
	// calls.
	CheckReusesTokens = "reuses-tokens"
	// CheckHonoursRetryAfter: after a response with Retry-After (429, 503),
	// no request of the client starts before the response ended plus
	// Retry-After (50 ms tolerance). Only requests that started at or after
	// the response ended are judged (to the journal's microsecond): one
	// that started earlier was sent before the answer could be read.
	CheckHonoursRetryAfter = "honours-retry-after"
	// CheckBacksOff: consecutive failed attempts (5xx, 429, faults, gave
	// up) are retried with growing waits. Waits that follow a Retry-After
	// are the server's to set and are not judged. Fail when a run has 3 or
	// more judged waits that shrink (by more than 10% + 50 ms) or do not
	// grow overall (last < 1.5 x first, or less than 100 ms longer); warn
	// when a run has more than MaxAttempts attempts (the client does not
	// give up).
	CheckBacksOff = "backs-off"
	// CheckPingsSparingly: at most PingsPerMinute pings in any 60 seconds;
	// more warn, more than four times as many fail.
	CheckPingsSparingly = "pings-sparingly"
	// CheckContentTypes: API POSTs send Content-Type application/json,
	// token requests application/x-www-form-urlencoded, and GETs send no
	// body. Fail on any exception.
	CheckContentTypes = "content-types"
	// CheckNoCredentialsInURL: no query string carries a secret, token,
	// password or other credential (the parameters the journal redacts).
	CheckNoCredentialsInURL = "no-credentials-in-url"
	// CheckHTTPSOnly: with --tls, every request arrived over HTTPS. Not
	// exercised when the sandbox serves plain HTTP.
	CheckHTTPSOnly = "https-only"
)

// MaxEvidence bounds a check's evidence; the explanation gives the total.
const MaxEvidence = 20

// Tolerances for timing: the journal's times are the sandbox's, taken when
// the handler starts and ends, not when bytes cross the wire.
const (
	// retryAfterTolerance forgives a client that waited Retry-After from
	// when it sent its request minus network time.
	retryAfterTolerance = 50 * time.Millisecond
	// journalPrecision is the journal's resolution: its times are written
	// to the microsecond, so a start and an end computed from them may
	// each be up to a microsecond early.
	journalPrecision = time.Microsecond
	// orderingTolerance decides that one request started after another
	// ended despite microsecond rounding in the journal.
	orderingTolerance = time.Millisecond
	// minJudgedRetries is how many judged waits a run needs before its
	// backoff is judged.
	minJudgedRetries = 3
)

// rule is one check: its id, a title for people, and its judgement.
type rule struct {
	id, title string
	// perRequest marks checks that judge requests one by one, so they apply
	// to Unidentified requests too.
	perRequest bool
	eval       func(calls []call, opts Options) Check
}

// rules lists the checks in the order a report shows them.
func rules() []rule {
	return []rule{
		{CheckExpiredToken, "No call with a refused token; recover from 401 with a new token", false, checkExpiredToken},
		{CheckRenewsBeforeExpiry, "Renew the token before it expires (60 s ahead)", false, checkRenewsBeforeExpiry},
		{CheckReusesTokens, "Reuse tokens, not one token request per call", false, checkReusesTokens},
		{CheckStopsOn403, "Do not retry a call refused with 403", false, checkStopsOn403},
		{CheckHonoursRetryAfter, "Wait Retry-After after 429 and 503", false, checkHonoursRetryAfter},
		{CheckBacksOff, "Back off exponentially and give up eventually", false, checkBacksOff},
		{CheckPingsSparingly, "Use the ping sparingly", false, checkPingsSparingly},
		{CheckContentTypes, "POSTs send their content type; GETs send no body", true, checkContentTypes},
		{CheckNoCredentialsInURL, "No credentials in URL query strings", true, checkNoCredentialsInURL},
		{CheckHTTPSOnly, "Only HTTPS", true, checkHTTPSOnly},
		{CheckResubmitsSafely, "After a lost answer, read back before resubmitting", false, checkResubmitsSafely},
	}
}

// CheckIDs lists every check id in report order.
func CheckIDs() []string {
	var ids []string
	for _, r := range rules() {
		ids = append(ids, r.id)
	}
	return ids
}
