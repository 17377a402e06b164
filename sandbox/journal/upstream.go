package journal

import "encoding/json"

// MaxUpstreamBody is the largest body (request or answer) an Upstream
// keeps; a longer one is left out and BodyOmitted says so.
const MaxUpstreamBody = 64 << 10

// Upstream is what the real service answered a request the sandbox
// forwarded (serve --upstream): the answer's status, headers and body,
// with every value replaced by a placeholder of its form (see
// internal/placeholder) and credentials redacted before it is stored, and
// every way the answer diverges from the sandbox's OpenAPI document.
type Upstream struct {
	// URL is where the request went (its query's credentials redacted).
	URL string `json:"url"`
	// RequestBody is the JSON body forwarded, redacted; absent for other
	// bodies (a token request's form holds the client secret).
	RequestBody json.RawMessage `json:"requestBody,omitempty"`
	Status      int             `json:"status"`
	// Headers are the answer's headers, credentials redacted, within the
	// bounds of the request's (MaxHeaders, MaxValueBytes).
	Headers map[string]string `json:"headers"`
	// Body is the answer's JSON body, redacted.
	Body json.RawMessage `json:"body,omitempty"`
	// BodyBytes is the answer's length.
	BodyBytes int `json:"bodyBytes"`
	// BodyOmitted says why Body is absent: not JSON, or too long.
	BodyOmitted string `json:"bodyOmitted,omitempty"`
	// Divergences say how the answer differs from the OpenAPI document:
	// "the real service answered X; the document says Y", at most
	// MaxDivergences of them and then one line saying how many more
	// (MoreDivergences).
	Divergences []string `json:"divergences,omitempty"`
	// Error is why no answer came (the upstream unreachable).
	Error string `json:"error,omitempty"`
}

// size is what u counts against the journal's byte budget.
func (u *Upstream) size() int {
	if u == nil {
		return 0
	}
	n := entryOverhead + jsonLen(u.URL) + len(u.RequestBody) + len(u.Body) + jsonLen(u.BodyOmitted) + jsonLen(u.Error)
	for name, value := range u.Headers {
		n += headerOverhead + jsonLen(name) + jsonLen(value)
	}
	for _, d := range u.Divergences {
		n += jsonLen(d)
	}
	return n
}
