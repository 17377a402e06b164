package idp

import (
	"net/http"

	"github.com/referrals-sandbox/referrals-sandbox/internal/logthrottle"
)

// logRefusal writes the line about a refused token request, at most one a
// second per caller: per client when the request carried that client's
// secret, per source address otherwise (whoever sends a made-up client_id
// cannot pick its log key). The client id is the caller's, so it is
// redacted (a secret or token pasted into client_id) and cut.
func (p *Provider) logRefusal(r *http.Request, clientID string, terr *TokenError) {
	key := "source " + logthrottle.Source(r)
	if req := p.RequesterOf(r); req.Authenticated {
		key = "client " + req.ClientID
	}
	ok, suppressed := p.refusals.Allow(key)
	if !ok {
		return
	}
	attrs := []any{"client_id", p.redactor.Log(clientID), "error", terr.Code, "aadsts", terr.AADSTS, "status", terr.Status}
	if suppressed > 0 {
		attrs = append(attrs, "suppressed", suppressed)
	}
	p.log.Info("token request refused", attrs...)
}
