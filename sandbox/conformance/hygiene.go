package conformance

import (
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redact"
)

// checkPingsSparingly finds the busiest 60 seconds of pings (section 8:
// health checks sparingly).
func checkPingsSparingly(calls []call, opts Options) Check {
	var pings []call
	for _, c := range calls {
		if c.Endpoint == endpointPing && c.timed {
			pings = append(pings, c)
		}
	}
	if len(pings) == 0 {
		return Check{Result: NotExercised, Explanation: "the client never pinged"}
	}
	sort.SliceStable(pings, func(i, j int) bool { return pings[i].start.Before(pings[j].start) })
	bestFrom, bestTo := 0, 0 // the busiest window is pings[bestFrom:bestTo]
	for from, to := 0, 0; to < len(pings); to++ {
		for pings[to].start.Sub(pings[from].start) >= time.Minute {
			from++
		}
		if to+1-from > bestTo-bestFrom {
			bestFrom, bestTo = from, to+1
		}
	}
	most := bestTo - bestFrom
	limit := opts.PingsPerMinute
	busiest := fmt.Sprintf("%s within 60 s (limit %d)", plural(most, "ping"), limit)
	switch {
	case most > 4*limit:
		return Check{Result: Fail, Evidence: refs(pings[bestFrom:bestTo]...), Explanation: busiest + ": far too often; ping sparingly, with backoff"}
	case most > limit:
		return Check{Result: Warn, Evidence: refs(pings[bestFrom:bestTo]...), Explanation: busiest + ": ping sparingly, with backoff"}
	}
	return Check{Result: Pass, Explanation: fmt.Sprintf("at most %s (%s in all)", busiest, plural(len(pings), "ping"))}
}

// header finds a journaled header whatever its spelling.
func header(h map[string]string, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// mediaType is the Content-Type without parameters, lower case; "" when
// absent or unreadable.
func mediaType(h map[string]string) string {
	mt, _, err := mime.ParseMediaType(header(h, "Content-Type"))
	if err != nil {
		return ""
	}
	return mt
}

// checkContentTypes: API POSTs are JSON, token requests are forms
// (section 4.1), and GETs carry no body (section 4).
func checkContentTypes(calls []call, _ Options) Check {
	var bad []string
	var problems []string
	posts, gets := 0, 0
	note := func(c call, problem string) {
		bad = append(bad, c.ref())
		problems = append(problems, problem)
	}
	for _, c := range calls {
		switch c.Method {
		case http.MethodGet, http.MethodHead:
			gets++
			// -1 is a body of unknown length (chunked).
			if c.RequestBytes != 0 {
				note(c, c.Method+" with a body")
			}
		case http.MethodPost, http.MethodPut, http.MethodPatch:
			want := ""
			switch c.Endpoint {
			case endpointAPI:
				want = "application/json"
			case endpointToken:
				want = "application/x-www-form-urlencoded"
			default:
				continue
			}
			posts++
			if got := mediaType(c.Headers); got != want {
				note(c, fmt.Sprintf("%s to the %s endpoint with Content-Type %q, not %s", c.Method, c.Endpoint, header(c.Headers, "Content-Type"), want))
			}
		}
	}
	switch {
	case len(bad) > 0:
		return Check{Result: Fail, Evidence: bad, Explanation: fmt.Sprintf("%s: %s", plural(len(bad), "request"), summarise(problems))}
	case posts+gets == 0:
		return Check{Result: NotExercised, Explanation: "the client sent no GET or POST"}
	}
	return Check{Result: Pass, Explanation: fmt.Sprintf("every POST had the right Content-Type and no GET had a body (%s, %s)", plural(posts, "POST"), plural(gets, "GET"))}
}

// summarise joins distinct problems, most frequent first.
func summarise(problems []string) string {
	count := map[string]int{}
	var order []string
	for _, p := range problems {
		if count[p] == 0 {
			order = append(order, p)
		}
		count[p]++
	}
	sort.SliceStable(order, func(i, j int) bool { return count[order[i]] > count[order[j]] })
	parts := make([]string, len(order))
	for i, p := range order {
		parts[i] = p
		if count[p] > 1 {
			parts[i] = fmt.Sprintf("%s (x%d)", p, count[p])
		}
	}
	return strings.Join(parts, "; ")
}

// credentialParams returns the names of the query parameters of raw that
// carry a credential, sorted.
func credentialParams(raw string) []string {
	if raw == redact.Redacted {
		return []string{"(unreadable query, redacted whole)"}
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return []string{"(unreadable query)"}
	}
	var names []string
	for name, values := range q {
		// The journal redacts credentials by name and by value (a token in
		// ?code=, say): either way the value reads [redacted].
		if name == redact.Redacted || redact.IsCredentialName(name) || slices.Contains(values, redact.Redacted) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// checkNoCredentialsInURL: URLs end up in proxy and server logs, so a
// credential there has leaked (section 5.8).
func checkNoCredentialsInURL(calls []call, _ Options) Check {
	var bad []string
	names := map[string]bool{}
	for _, c := range calls {
		if c.Query == "" {
			continue
		}
		if found := credentialParams(c.Query); len(found) > 0 {
			bad = append(bad, c.ref())
			for _, n := range found {
				names[n] = true
			}
		}
	}
	switch {
	case len(bad) > 0:
		list := make([]string, 0, len(names))
		for n := range names {
			list = append(list, n)
		}
		sort.Strings(list)
		return Check{Result: Fail, Evidence: bad,
			Explanation: fmt.Sprintf("%s put credentials in the query string (%s); send them in the Authorization header or the token request's form body", plural(len(bad), "request"), strings.Join(list, ", "))}
	case len(calls) == 0:
		return Check{Result: NotExercised, Explanation: "no requests"}
	}
	return Check{Result: Pass, Explanation: fmt.Sprintf("no query string carried a credential (%s)", plural(len(calls), "request"))}
}

// checkHTTPSOnly: with --tls, or when the report is asked for over HTTPS,
// every request must have come over TLS (section 5.8: only HTTPS is used).
func checkHTTPSOnly(calls []call, opts Options) Check {
	if !opts.TLS {
		return Check{Result: NotExercised, Explanation: "the report was asked for over plain HTTP; ask for it over HTTPS (the same port answers both, e.g. referrals-sandbox report --url https://localhost:8080) or start the sandbox with --tls to check that the client uses only HTTPS"}
	}
	var plain []string
	for _, c := range calls {
		if !c.TLS {
			plain = append(plain, c.ref())
		}
	}
	if len(plain) > 0 {
		return Check{Result: Fail, Evidence: plain, Explanation: fmt.Sprintf("%s arrived over plain HTTP; use only HTTPS", plural(len(plain), "request"))}
	}
	return Check{Result: Pass, Explanation: fmt.Sprintf("every request arrived over HTTPS (%s)", plural(len(calls), "request"))}
}
