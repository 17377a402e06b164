package recording

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redact"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// Record fills the journal's view of the real service's answer to r, body
// read in full, and logs, in one line, how it diverges from the document.
// credential is the exchange's (Credential).
func (p *Proxy) Record(r *http.Request, rec *journal.Upstream, resp *http.Response, body []byte, credential func(string) bool) {
	rec.Status, rec.Headers, rec.BodyBytes = resp.StatusCode, p.placeholderHeaders(p.redactor, resp.Header, credential), len(body)
	if len(body) > 0 {
		rec.Body, rec.BodyOmitted = p.PlaceholderJSON(body, credential)
	}
	shown := p.placeholders.Path(p.redactor.Path(r.URL.Path))
	rec.Divergences = p.validator.divergences(r.Context(), r, shown, resp.StatusCode, resp.Header, body)
	p.placeholderDivergences(rec.Divergences, credential)
	if len(rec.Divergences) > 0 {
		// One line per answer, however many divergences: the list is
		// capped at journal.MaxDivergences and a line saying how many more.
		p.log.Warn("the real service diverges from the OpenAPI document", "method", r.Method, "path", shown, "divergences", rec.Divergences)
	}
}

// Credential is the credential test for one forwarded exchange:
// what the sandbox's redactor finds (its clients' secrets, every JWT and
// scheme credential), and what the sandbox does not otherwise know: the
// client secret or assertion the partner sent the real service in this
// request's token form, and the bearer token it sent (opaque ones too),
// which a real service may echo anywhere, as a member name included.
func (p *Proxy) Credential(r *http.Request) func(string) bool {
	var forwarded []string
	if scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "bearer") && len(token) >= 6 {
		forwarded = append(forwarded, strings.TrimSpace(token))
	}
	if r.PostForm != nil {
		for _, name := range []string{"client_secret", "client_assertion", "assertion", "refresh_token", "code"} {
			if v := r.PostForm.Get(name); len(v) >= 6 {
				forwarded = append(forwarded, v)
			}
		}
	}
	return func(v string) bool {
		if p.isCredential(v) {
			return true
		}
		for _, f := range forwarded {
			if strings.Contains(v, f) {
				return true
			}
		}
		return false
	}
}

// isCredential reports whether a value from a forwarded body is a
// credential (an access token, a known secret).
func (p *Proxy) isCredential(v string) bool { return p.redactor.Value(v) != v }

// JournalURL is a forwarded request's target as the journal keeps it:
// credentials redacted, then the path and query by the placeholder rules.
func (p *Proxy) JournalURL(target string) string {
	return p.placeholderURL(p.redactURL(target))
}

// redactURL is target with the credentials of its path and query
// redacted.
func (p *Proxy) redactURL(target string) string {
	u, err := url.Parse(target)
	if err != nil {
		return redact.Redacted
	}
	u.Path, u.RawPath = p.redactor.Path(u.Path), ""
	u.RawQuery = p.redactor.Query(u.RawQuery)
	return u.String()
}
