package sandbox

import (
	"net/http"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redact"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/exchange"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/request"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// maxQueryTokens bounds how many JWT-shaped query values one request may
// make the sandbox verify: each costs an RSA verification.
const maxQueryTokens = 2

// identify decides who a request counts as, for rate limits, failure rules,
// the journal and the conformance report. A request
// belongs to a client only on proof: a token whose signature verifies with
// the sandbox's own keys and whose azp is a client of this environment
// (expired or not), or a token request with that client's secret. Any other
// credential makes the request "unverified": it shares one rate-limit
// bucket and is journaled without a client, so no forged claim ever reaches
// a client's state or grows a per-client map.
func (s *Server) identify(r *http.Request) exchange.Caller {
	c := exchange.Caller{Endpoint: reply.EndpointOf(r)}
	if c.Endpoint == scenarios.EndpointToken {
		req := s.cfg.Provider.RequesterOf(r)
		switch {
		case req.Authenticated:
			c.Claimed.ClientID, c.RuleClient = req.ClientID, req.ClientID
		case !req.Registered:
			// Rules may name any client_id, to test a client the sandbox
			// does not know; their counters lump such ids together.
			c.RuleClient, c.Unregistered = req.ClientID, req.ClientID != ""
		}
		// A registered id with a wrong secret is nobody: it must not use
		// up that client's rules.
		return c
	}
	raw := request.Bearer(r)
	fromHeader := raw != ""
	if !fromHeader {
		raw = s.queryToken(r)
	}
	if raw == "" {
		return c
	}
	claimed, err := s.cfg.Provider.Identify(raw)
	if err != nil {
		c.Unverified = true
		if fromHeader {
			c.TokenErr = err
		}
		return c
	}
	c.Claimed, c.RuleClient = claimed, claimed.ClientID
	return c
}

// queryToken finds a token sent in the query string (?access_token=,
// ?code=, any name): the request belongs to that token's client, so the
// report's no-credentials-in-url check can name who leaked it. It returns
// the first JWT-shaped value that verifies, else the first JWT-shaped one.
func (s *Server) queryToken(r *http.Request) string {
	if r.URL.RawQuery == "" {
		return ""
	}
	first, tried := "", 0
	for _, values := range r.URL.Query() {
		for _, v := range values {
			tok := redact.FindJWT(v)
			if tok == "" || tried == maxQueryTokens {
				continue
			}
			tried++
			if first == "" {
				first = tok
			}
			if _, err := s.cfg.Provider.Identify(tok); err == nil {
				return tok
			}
		}
	}
	return first
}
