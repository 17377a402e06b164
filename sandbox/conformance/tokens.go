package conformance

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
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
// obtain a new token and retry), says why each 401 happened with the remedy
// that fits, and notes calls made with expired tokens. A token that expired
// because the sandbox clock was moved is judged only by the recovery.
func checkExpiredToken(calls []call, _ Options) Check {
	shifts := clockShifts(calls)
	var reused, stopped, expired, misconfigured []string
	tally := map[cause]int{}
	refused, withToken := 0, 0
	for i, c := range calls {
		if !c.usesToken() {
			continue
		}
		withToken++
		if c.presentedExpired() && !c.expiredByClockMove(shifts[i]) {
			expired = append(expired, refs(c)...)
		}
		if c.Status != http.StatusUnauthorized {
			continue
		}
		refused++
		k := causeOf(c, shifts[i])
		tally[k]++
		if k.config {
			misconfigured = append(misconfigured, c.ref())
			continue // a new token cannot cure it: no retry is expected
		}
		next, fetched := reaction(calls, i)
		switch {
		case next != nil && (next.TokenID == "" || next.TokenID == c.TokenID):
			reused = append(reused, refs(c, *next)...)
		case next == nil && !fetched:
			stopped = append(stopped, refs(c)...)
		}
	}
	why := explainCauses(tally)
	switch {
	case len(misconfigured) > 0:
		return Check{Result: Fail, Evidence: misconfigured, Explanation: "401s no new token cures: " + why}
	case len(reused) > 0:
		return Check{Result: Fail, Evidence: reused,
			Explanation: "after a 401 the client called again with the refused token; obtain a new token and retry (interface 5.6). 401s: " + why}
	case len(expired) > 0:
		return Check{Result: Warn, Evidence: expired,
			Explanation: fmt.Sprintf("%s presented an expired token; renew the token before it expires instead. 401s: %s", plural(len(expired), "call"), why)}
	case len(stopped) > 0:
		return Check{Result: Warn, Evidence: stopped,
			Explanation: "after a 401 the client neither fetched a new token nor retried. 401s: " + why}
	case withToken == 0:
		return Check{Result: NotExercised, Explanation: "the client made no API or ping call"}
	case refused == 0:
		return Check{Result: Pass, Explanation: fmt.Sprintf("no call presented an expired token (%s; no 401 to recover from)", plural(withToken, "call"))}
	}
	return Check{Result: Pass, Explanation: fmt.Sprintf("no call presented an expired token, and after each 401 (%d) the client retried with a new token. 401s: %s", refused, why)}
}

// explainCauses lists the 401s by cause, each with its remedy, the most
// frequent first.
func explainCauses(tally map[cause]int) string {
	type entry struct {
		k cause
		n int
	}
	var list []entry
	for k, n := range tally {
		list = append(list, entry{k, n})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].n != list[j].n {
			return list[i].n > list[j].n
		}
		return list[i].k.what < list[j].k.what
	})
	parts := make([]string, len(list))
	for i, e := range list {
		parts[i] = fmt.Sprintf("%d %s (%s)", e.n, e.k.what, e.k.remedy)
	}
	return strings.Join(parts, "; ")
}

// recovery reports whether the token request at index i was the client's
// answer to a 401 on a token that had not expired by the client's own
// clock (a revoked or forced refusal, or a sandbox clock move): a
// recovery, not a renewal.
func recovery(calls []call, shifts []time.Duration, i int) bool {
	for j := i - 1; j >= 0; j-- {
		if calls[j].usesToken() {
			c := calls[j]
			return c.Status == http.StatusUnauthorized && (!c.presentedExpired() || c.expiredByClockMove(shifts[j]))
		}
	}
	return false
}

// replacement says what a new token fetched by c was to the token
// obtained by current: a renewal (the current one had at most half its
// lifetime, or at most the libraries' refresh margin, left, or had lapsed),
// inside the margin (the whole token was shorter than the margin, so MSAL
// treated it as expired from the start: neither renewal nor a failure to
// reuse can be told), or early (more left: a token not reused).
func replacement(current, c call) replaced {
	if !c.start.Before(current.expires) {
		return replacedRenewal
	}
	left, lifetime := current.expires.Sub(c.start), current.expires.Sub(current.start)
	switch {
	case 2*left <= lifetime:
		return replacedRenewal
	case lifetime <= idp.LibraryRefreshMargin:
		return replacedInsideMargin
	case left <= idp.LibraryRefreshMargin:
		return replacedRenewal
	}
	return replacedEarly
}

// replaced is what a new token was to the one it replaced.
type replaced int

const (
	replacedRenewal replaced = iota
	replacedInsideMargin
	replacedEarly
)

// shortTokenHint says how a client exercises renewal without moving the
// sandbox clock: moving it makes the API refuse the token (a 401 judged by
// expired-token), and clock moves are taken out of renewal timing.
func shortTokenHint() string {
	return fmt.Sprintf(`run longer than the token lifetime less %s, or use a client whose id starts with %s (POST /__sandbox/clients {"clientId": "%sci"}): its tokens last %s, which MSAL renews after %s`,
		shortDuration(idp.LibraryRefreshMargin), idp.ShortTokenPrefix, idp.ShortTokenPrefix, shortDuration(idp.ShortTokenLifetime), shortDuration(idp.ShortTokenLifetime-idp.LibraryRefreshMargin))
}

// shortDuration writes whole minutes as "6 minutes", other durations as
// Go does.
func shortDuration(d time.Duration) string {
	if d%time.Minute == 0 {
		return plural(int(d/time.Minute), "minute")
	}
	return d.String()
}

// checkRenewsBeforeExpiry judges whether the client renews its token ahead
// of expiry (section 5.5) rather than waiting for a 401. Renewal is a new
// token fetched when the current one has at most half its lifetime, or at
// most the 5 minutes at which MSAL renews, left (or has lapsed unused); a
// new token while the current one has more left is no renewal but a token
// not reused (reuses-tokens judges it). Times are taken on the client's
// own clock: moves of the sandbox clock are taken out.
func checkRenewsBeforeExpiry(calls []call, opts Options) Check {
	shifts := clockShifts(calls)
	var expired, late, early []string
	renewals, inMargin := 0, 0
	var current *call         // the call that obtained the token in use
	var pendingExpired []call // expired calls not yet followed by a new token
	for i, c := range calls {
		switch {
		case c.issued():
			switch {
			case len(pendingExpired) > 0:
				// The renewal that the expired calls forced: evidence too.
				expired = append(expired, refs(append(pendingExpired, c)...)...)
				pendingExpired = nil
			case current == nil || recovery(calls, shifts, i):
			default:
				switch replacement(*current, c) {
				case replacedEarly:
					early = append(early, c.ref())
				case replacedInsideMargin:
					inMargin++
				default:
					renewals++
				}
			}
			current = &calls[i]
		case !c.usesToken() || c.expiredByClockMove(shifts[i]):
		case c.presentedExpired():
			pendingExpired = append(pendingExpired, c)
		case c.timed && !c.expires.IsZero() && c.leftAt(shifts[i]) < opts.RenewalMargin:
			late = append(late, c.ref())
		}
	}
	expired = append(expired, refs(pendingExpired...)...)
	margin := opts.RenewalMargin.Round(time.Second)
	notRenewal := ""
	if len(early) > 0 {
		notRenewal = fmt.Sprintf("; %s replaced tokens with more than half their lifetime (and more than %s) left, which is not renewal: the client does not reuse its tokens (see reuses-tokens)", plural(len(early), "new token"), shortDuration(idp.LibraryRefreshMargin))
	}
	if inMargin > 0 {
		notRenewal += fmt.Sprintf("; %s replaced tokens whose whole lifetime was under %s, which MSAL treats as expired from the start, so renewal cannot be judged with them", plural(inMargin, "new token"), shortDuration(idp.LibraryRefreshMargin))
	}
	switch {
	case len(expired) > 0:
		return Check{Result: Fail, Evidence: expired,
			Explanation: "the client used its token after it expired and renewed only after being refused; renew " + margin.String() + " before expiry"}
	case len(late) > 0:
		return Check{Result: Warn, Evidence: late,
			Explanation: fmt.Sprintf("%s presented a token with less than %s left; renew %s before expiry so it cannot expire in flight", plural(len(late), "call"), margin, margin)}
	case renewals == 0:
		return Check{Result: NotExercised, Evidence: early,
			Explanation: "the client never renewed a token near its expiry (" + shortTokenHint() + ")" + notRenewal}
	}
	return Check{Result: Pass, Explanation: fmt.Sprintf("the client renewed its token %s, each time before it expired, and never used one in its last %s%s", plural(renewals, "time"), margin, notRenewal)}
}

// checkReusesTokens compares new tokens with calls: a client should cache
// its token for its lifetime (section 5.5), not fetch one per call. Calls
// refused with 401 and the tokens fetched to recover from them are left
// out, so a scenario that refuses tokens or a clock move does not count
// against the client. Renewals (a new token when the current one had at
// most half its lifetime, or the 5 minutes at which MSAL renews, left) are
// no failure to reuse either: the calls after each renewal are set against
// the renewal, and the client's other new tokens against the rest. A
// client that renews every minute, as MSAL does with 6-minute tokens,
// passes however few calls it makes per token. When tokens are shorter
// than MSAL's margin, a cache-first MSAL client fetches one per call:
// reuse is then not judged.
func checkReusesTokens(calls []call, _ Options) Check {
	shifts := clockShifts(calls)
	var tokens []string
	withToken, renewals, inMargin := 0, 0, 0
	var current *call // the call that obtained the token in use
	for i, c := range calls {
		switch {
		case c.issued():
			prev := current
			current = &calls[i]
			switch {
			case recovery(calls, shifts, i):
			case prev == nil:
				tokens = append(tokens, c.ref())
			default:
				switch replacement(*prev, c) {
				case replacedInsideMargin:
					inMargin++
				case replacedEarly:
					tokens = append(tokens, c.ref())
				default:
					renewals++
				}
			}
		case c.usesToken() && c.Status != http.StatusUnauthorized:
			withToken++
		}
	}
	ratio := fmt.Sprintf("%s for %s", plural(len(tokens), "new token"), plural(withToken, "accepted call"))
	if renewals > 0 {
		ratio += fmt.Sprintf(", besides %s", plural(renewals, "renewal"))
	}
	// The calls the client's new tokens other than renewals served.
	base := withToken - renewals - inMargin
	switch {
	case withToken < 3:
		return Check{Result: NotExercised, Explanation: ratio + ": too few calls to judge token reuse (3 or more needed)"}
	case 2*inMargin >= withToken:
		return Check{Result: NotExercised, Explanation: fmt.Sprintf("%s replaced tokens whose whole lifetime was under %s: MSAL treats such a token as expired from the start and fetches one per call, so reuse cannot be judged; give the client tokens longer than %s (%s)",
			plural(inMargin, "new token"), shortDuration(idp.LibraryRefreshMargin), shortDuration(idp.LibraryRefreshMargin), shortTokenHint())}
	case len(tokens) < 2:
		// One token, or none but renewals: every call reused a token.
	case len(tokens) >= base:
		return Check{Result: Fail, Evidence: tokens, Explanation: ratio + ": a token per call; cache the token until shortly before it expires"}
	case 2*len(tokens) > base:
		return Check{Result: Warn, Evidence: tokens, Explanation: ratio + ": each token serves fewer than two calls; cache it until shortly before it expires"}
	}
	return Check{Result: Pass, Explanation: ratio}
}
