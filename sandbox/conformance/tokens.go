package conformance

import (
	"fmt"
	"net/http"
	"time"
)

// reaction is what a client did after a 401 on the call at index i: the
// next call that started after the 401 was answered (nil if none), and
// whether it asked for a token in between.
func reaction(calls []call, i int) (next *call, fetchedToken bool) {
	for j := i + 1; j < len(calls); j++ {
		c := &calls[j]
		if !c.startedAfter(calls[i]) {
			continue // already in flight when the 401 arrived
		}
		if c.isToken() {
			fetchedToken = true
			continue
		}
		if c.usesToken() {
			return c, fetchedToken
		}
	}
	return nil, fetchedToken
}

// checkExpiredToken judges what the client did after each 401 (section 5.6:
// obtain a new token and retry), and notes calls made with expired tokens.
func checkExpiredToken(calls []call, _ Options) Check {
	var reused, stopped, expired []string
	refused, withToken := 0, 0
	for i, c := range calls {
		if !c.usesToken() {
			continue
		}
		withToken++
		if c.presentedExpired() {
			expired = append(expired, refs(c)...)
		}
		if c.Status != http.StatusUnauthorized {
			continue
		}
		refused++
		next, fetched := reaction(calls, i)
		switch {
		case next != nil && (next.TokenID == "" || next.TokenID == c.TokenID):
			reused = append(reused, refs(c, *next)...)
		case next == nil && !fetched:
			stopped = append(stopped, refs(c)...)
		}
	}
	switch {
	case len(reused) > 0:
		return Check{Result: Fail, Evidence: reused,
			Explanation: "after a 401 the client called again with the refused token; obtain a new token and retry (interface 5.6)"}
	case len(expired) > 0:
		return Check{Result: Warn, Evidence: expired,
			Explanation: fmt.Sprintf("%s presented an expired token; renew the token before it expires instead", plural(len(expired), "call"))}
	case len(stopped) > 0:
		return Check{Result: Warn, Evidence: stopped,
			Explanation: "after a 401 the client neither fetched a new token nor retried"}
	case withToken == 0:
		return Check{Result: NotExercised, Explanation: "the client made no API or ping call"}
	case refused == 0:
		return Check{Result: Pass, Explanation: fmt.Sprintf("no call presented an expired token (%s; no 401 to recover from)", plural(withToken, "call"))}
	}
	return Check{Result: Pass, Explanation: fmt.Sprintf("no call presented an expired token, and after each 401 (%d) the client retried with a new token", refused)}
}

// recovery reports whether the token request at index i was the client's
// answer to a 401 on a token that had not expired (a revoked or forced
// refusal): a recovery, not a renewal.
func recovery(calls []call, i int) bool {
	for j := i - 1; j >= 0; j-- {
		if calls[j].usesToken() {
			return calls[j].Status == http.StatusUnauthorized && !calls[j].presentedExpired()
		}
	}
	return false
}

// checkRenewsBeforeExpiry judges whether the client renews its token ahead
// of expiry (section 5.5) rather than waiting for a 401.
func checkRenewsBeforeExpiry(calls []call, opts Options) Check {
	var expired, late []string
	renewals, first := 0, true
	var pendingExpired []call // expired calls not yet followed by a new token
	for i, c := range calls {
		switch {
		case c.issued():
			if len(pendingExpired) > 0 {
				// The renewal that the expired calls forced: evidence too.
				expired = append(expired, refs(append(pendingExpired, c)...)...)
				pendingExpired = nil
			} else if !first && !recovery(calls, i) {
				renewals++
			}
			first = false
		case c.presentedExpired():
			pendingExpired = append(pendingExpired, c)
		case c.usesToken() && c.timed && !c.expires.IsZero() && c.expires.Sub(c.start) < opts.RenewalMargin:
			late = append(late, c.ref())
		}
	}
	expired = append(expired, refs(pendingExpired...)...)
	margin := opts.RenewalMargin.Round(time.Second)
	switch {
	case len(expired) > 0:
		return Check{Result: Fail, Evidence: expired,
			Explanation: "the client used its token after it expired and renewed only after being refused; renew " + margin.String() + " before expiry"}
	case len(late) > 0:
		return Check{Result: Warn, Evidence: late,
			Explanation: fmt.Sprintf("%s presented a token with less than %s left; renew %s before expiry so it cannot expire in flight", plural(len(late), "call"), margin, margin)}
	case renewals == 0:
		return Check{Result: NotExercised, Explanation: "the client never renewed a token (move the sandbox clock forward to exercise renewal)"}
	}
	return Check{Result: Pass, Explanation: fmt.Sprintf("the client renewed its token %s, each time before it expired, and never used one in its last %s", plural(renewals, "time"), margin)}
}

// checkReusesTokens compares new tokens with calls: a client should cache
// its token for its lifetime (section 5.5), not fetch one per call. Calls
// refused with 401 and the tokens fetched to recover from them are left
// out, so a scenario that refuses tokens does not count against the client.
func checkReusesTokens(calls []call, _ Options) Check {
	var tokens []string
	withToken := 0
	for i, c := range calls {
		switch {
		case c.issued() && !recovery(calls, i):
			tokens = append(tokens, c.ref())
		case c.usesToken() && c.Status != http.StatusUnauthorized:
			withToken++
		}
	}
	ratio := fmt.Sprintf("%s for %s", plural(len(tokens), "new token"), plural(withToken, "accepted call"))
	switch {
	case withToken < 3:
		return Check{Result: NotExercised, Explanation: ratio + ": too few calls to judge token reuse (3 or more needed)"}
	case len(tokens) >= withToken:
		return Check{Result: Fail, Evidence: tokens, Explanation: ratio + ": a token per call; cache the token until shortly before it expires"}
	case 2*len(tokens) > withToken:
		return Check{Result: Warn, Evidence: tokens, Explanation: ratio + ": each token serves fewer than two calls; cache it until shortly before it expires"}
	}
	return Check{Result: Pass, Explanation: ratio}
}
