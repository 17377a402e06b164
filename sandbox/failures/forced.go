package failures

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/exchange"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// writeForced answers with a forced failure in the endpoint's own shape.
func (l *Layer) writeForced(w http.ResponseWriter, r *http.Request, c exchange.Caller, d scenarios.Decision) {
	endpoint := c.Endpoint
	if d.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(RetryAfterSeconds(d.RetryAfter)))
	}
	if endpoint == scenarios.EndpointToken && d.Status == http.StatusTooManyRequests {
		idp.WriteThrottled(w, r)
		return
	}
	if endpoint == scenarios.EndpointToken {
		e, ok := idp.ForcedTokenError(d.Error, d.Status)
		if !ok {
			e, _ = idp.ForcedTokenError("", http.StatusServiceUnavailable)
		}
		idp.WriteTokenError(w, r, l.cfg.Clocks.Now(""), e)
		return
	}
	if d.Status != http.StatusTooManyRequests {
		l.cfg.RateLimits.ForcedHeaders(r.Context(), w, c.ClientID(), l.cfg.Clocks.Now(c.ClientID()), 0)
	}
	switch d.Status {
	case http.StatusUnauthorized:
		reason := d.Reason
		if reason == "" {
			reason = "invalid"
		}
		l.cfg.API.RefuseToken(w, r, "access token "+reason+" (forced by sandbox rule "+d.RuleID+")", l.cfg.API.RetryRemedy())
	case http.StatusForbidden:
		l.cfg.API.Forbid(w, r, "required for this operation (permissions revoked by sandbox rule "+d.RuleID+")")
	case http.StatusTooManyRequests:
		seconds := RetryAfterSeconds(d.RetryAfter)
		l.cfg.RateLimits.ForcedHeaders(r.Context(), w, c.ClientID(), l.cfg.Clocks.Now(""), seconds)
		l.cfg.Reply.Problem(w, r, reply.New(d.Status, fmt.Sprintf("rate limit exceeded; retry after %d second(s)", seconds)))
	case http.StatusServiceUnavailable:
		l.cfg.Reply.Problem(w, r, reply.New(d.Status, "the service is temporarily unavailable; retry after the Retry-After delay"))
	default:
		l.cfg.Reply.Problem(w, r, reply.New(d.Status, "the service failed to process the request"))
	}
}

// RetryAfterSeconds rounds up to whole seconds, at least one.
func RetryAfterSeconds(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	return max(s, 1)
}
