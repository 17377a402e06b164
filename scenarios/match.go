package scenarios

import "strings"

// Request is what the engine needs to know about an incoming request.
type Request struct {
	Method   string
	Path     string // URL path, without query
	ClientID string // from the token (or the token request form); may be empty
	Endpoint Endpoint
	// Unregistered marks a ClientID that names no registered client (a
	// token request may name any id). Rules still match it, but per-client
	// counters lump every such request under UnregisteredClients, so made-up
	// ids cannot grow a rule's state.
	Unregistered bool
}

// UnregisteredClients is the one per-client counter (and clientHits key)
// shared by every request whose client id is not a registered client.
const UnregisteredClients = "(unregistered)"

// counterKey is the per-client counter req counts against.
func (req Request) counterKey() string {
	if req.Unregistered {
		return UnregisteredClients
	}
	return req.ClientID
}

// validatePath checks a rule's path: absolute, no query, and "*" only as a
// whole segment (a partial wildcard like "TR*" would be a silent surprise).
func validatePath(p string) error {
	if p == "" {
		return nil
	}
	if !strings.HasPrefix(p, "/") {
		return fieldErr("path", "%q must start with /", p)
	}
	if strings.ContainsAny(p, "?#") {
		return fieldErr("path", "%q must not contain a query or fragment", p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg != "*" && strings.Contains(seg, "*") {
			return fieldErr("path", "%q: * must be a whole segment, as in /api/v1/referrals/*/*", p)
		}
	}
	return nil
}

// pathMatches reports whether path matches pattern: segment by segment, equal
// or "*" for any one non-empty segment. Trailing slashes are significant,
// because the service itself distinguishes /referrals/ from /referrals.
func pathMatches(pattern, path string) bool {
	if !strings.Contains(pattern, "*") {
		return pattern == path
	}
	// Walk both paths segment by segment without allocating: this runs for
	// every active rule on every request.
	for {
		w, wRest, wMore := strings.Cut(pattern, "/")
		g, gRest, gMore := strings.Cut(path, "/")
		switch {
		case w == "*" && g == "":
			return false
		case w != "*" && w != g:
			return false
		case wMore != gMore:
			return false
		case !wMore:
			return true
		}
		pattern, path = wRest, gRest
	}
}

// Matches reports whether r applies to req. Every matcher the rule sets must
// agree. A forced status the request's endpoint cannot produce (a 401 from
// an endpoint "any" rule on a token request) does not match, so such a rule
// never makes the sandbox answer in a way the real service cannot.
func (r *Rule) Matches(req Request) bool {
	return r.matchesBesidesPath(req) && (r.Path == "" || pathMatches(r.Path, req.Path))
}

// matchesBesidesPath is Matches without the path, which the rule index
// (see ruleIndex) has already matched. Each test costs a bounded amount
// whatever the request holds.
func (r *Rule) matchesBesidesPath(req Request) bool {
	if r.ClientID != "" && r.ClientID != req.ClientID {
		return false
	}
	if !r.Endpoint.matches(req.Endpoint) {
		return false
	}
	if r.Method != "" && !strings.EqualFold(r.Method, req.Method) {
		return false
	}
	if r.Status != 0 && !appliesTo(r.Endpoint, r.Status, req.Endpoint) {
		return false
	}
	if r.Error != "" && req.Endpoint != EndpointToken {
		return false
	}
	return true
}
