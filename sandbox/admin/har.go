package admin

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// HARPath serves the journal as an HTTP Archive (HAR 1.2).
const HARPath = "/__sandbox/requests.har"

// HARContentType is the HAR's media type: JSON, which devtools import.
const HARContentType = "application/json"

// The HAR 1.2 document (http://www.softwareishard.com/blog/har-12-spec/),
// only the parts a journal entry can fill. Fields starting with _ are the
// sandbox's own, as the format allows.
type (
	harLog struct {
		Version string     `json:"version"`
		Creator harCreator `json:"creator"`
		Entries []harEntry `json:"entries"`
		Comment string     `json:"comment,omitempty"`
	}
	harCreator struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	harEntry struct {
		StartedDateTime string      `json:"startedDateTime"`
		Time            float64     `json:"time"`
		Request         harRequest  `json:"request"`
		Response        harResponse `json:"response"`
		Cache           struct{}    `json:"cache"`
		Timings         harTimings  `json:"timings"`
		Connection      string      `json:"connection,omitempty"`
		Comment         string      `json:"comment,omitempty"`
		// The journal's own fields, for QA reading the archive.
		JournalID    uint64   `json:"_journalId"`
		RequestID    string   `json:"_requestId,omitempty"`
		ClientID     string   `json:"_clientId,omitempty"`
		RuleID       string   `json:"_ruleId,omitempty"`
		Scenario     string   `json:"_scenario,omitempty"`
		Fault        string   `json:"_fault,omitempty"`
		TokenRefusal string   `json:"_tokenRefusal,omitempty"`
		Truncated    []string `json:"_truncated,omitempty"`
	}
	harRequest struct {
		Method      string      `json:"method"`
		URL         string      `json:"url"`
		HTTPVersion string      `json:"httpVersion"`
		Cookies     []harPair   `json:"cookies"`
		Headers     []harPair   `json:"headers"`
		QueryString []harPair   `json:"queryString"`
		HeadersSize int         `json:"headersSize"`
		BodySize    int64       `json:"bodySize"`
		PostData    *harPayload `json:"postData,omitempty"`
	}
	harResponse struct {
		Status      int        `json:"status"`
		StatusText  string     `json:"statusText"`
		HTTPVersion string     `json:"httpVersion"`
		Cookies     []harPair  `json:"cookies"`
		Headers     []harPair  `json:"headers"`
		Content     harContent `json:"content"`
		RedirectURL string     `json:"redirectURL"`
		HeadersSize int        `json:"headersSize"`
		BodySize    int        `json:"bodySize"`
	}
	harPair struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	harPayload struct {
		MimeType string `json:"mimeType"`
		Text     string `json:"text"`
		Comment  string `json:"comment,omitempty"`
	}
	harContent struct {
		Size     int    `json:"size"`
		MimeType string `json:"mimeType"`
		Comment  string `json:"comment,omitempty"`
	}
	harTimings struct {
		Send    float64 `json:"send"`
		Wait    float64 `json:"wait"`
		Receive float64 `json:"receive"`
	}
)

// noBodies says, in the archive, why it has no bodies.
const noBodies = "the sandbox journals no bodies"

// serveHAR answers GET /__sandbox/requests.har: the journal entries the
// same filters as GET /__sandbox/requests select, oldest first, as a HAR
// 1.2 archive a bug report can carry and browsers' devtools open. Without
// limit it holds every match the journal keeps (the journal is bounded in
// entries and bytes); with limit, the newest limit. It is built from the
// journal's entries, so it is redacted exactly as they are.
func (a *API) serveHAR(w http.ResponseWriter, r *http.Request) {
	f, limit, ok := a.journalQuery(w, r)
	if !ok {
		return
	}
	if r.URL.Query().Has("limit") {
		f.Limit = limit
	}
	entries, err := a.backend.Journal.Find(r.Context(), f)
	if err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	base := strings.TrimRight(a.cfg.Provider.BaseURL(r), "/")
	log := harLog{
		Version: "1.2",
		Creator: harCreator{Name: "referrals-sandbox", Version: a.cfg.Version},
		Entries: make([]harEntry, 0, len(entries)),
		Comment: "The sandbox's request journal; credentials are redacted as in GET /__sandbox/requests, and " + noBodies + ".",
	}
	if log.Creator.Version == "" {
		log.Creator.Version = "dev"
	}
	for _, e := range entries {
		log.Entries = append(log.Entries, a.harEntryOf(base, e))
	}
	h := w.Header()
	h.Set("Content-Type", HARContentType)
	h.Set("Content-Disposition", `attachment; filename="referrals-sandbox-requests.har"`)
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(struct {
		Log harLog `json:"log"`
	}{log}) // a failed write means the client left
}

// harEntryOf turns one journal entry into a HAR entry; base is the URL the
// sandbox was reached at.
func (a *API) harEntryOf(base string, e journal.Entry) harEntry {
	u := base + e.Path
	if e.Query != "" {
		u += "?" + e.Query
	}
	started := e.At
	if t, err := time.Parse(referrals.TimestampLayout, e.At); err == nil {
		started = t.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	out := harEntry{
		StartedDateTime: started,
		Time:            e.DurationMs,
		Request: harRequest{
			Method: e.Method, URL: u, HTTPVersion: "HTTP/1.1",
			Cookies: []harPair{}, Headers: harHeaders(e.Headers), QueryString: harQuery(e.Query),
			HeadersSize: -1, BodySize: max(e.RequestBytes, -1),
		},
		Response: harResponse{
			Status: e.Status, StatusText: http.StatusText(e.Status), HTTPVersion: "HTTP/1.1",
			Cookies: []harPair{}, Headers: a.harResponseHeaders(e),
			Content:     harContent{MimeType: "", Comment: noBodies},
			HeadersSize: -1, BodySize: -1,
		},
		Timings:    harTimings{Wait: e.DurationMs},
		Connection: e.Connection,
		JournalID:  e.ID, RequestID: e.RequestID, ClientID: e.ClientID, RuleID: e.RuleID, Scenario: e.Scenario,
		Fault: e.Fault, TokenRefusal: e.TokenRefusal, Truncated: e.Truncated,
	}
	if e.RequestBytes > 0 {
		out.Request.PostData = &harPayload{MimeType: e.Headers["Content-Type"], Text: "", Comment: noBodies}
	}
	if e.Fault != "" {
		out.Comment = "fault " + e.Fault + ": the connection was broken on purpose"
	}
	return out
}

// harHeaders lists the journal's (redacted) headers in name order.
func harHeaders(headers map[string]string) []harPair {
	out := make([]harPair, 0, len(headers))
	for name, v := range headers {
		out = append(out, harPair{Name: name, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// harQuery splits the journal's (redacted) query; a malformed pair is kept
// as it was sent, never dropped.
func harQuery(raw string) []harPair {
	out := []harPair{}
	if raw == "" {
		return out
	}
	for part := range strings.SplitSeq(raw, "&") {
		name, value, _ := strings.Cut(part, "=")
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if v, err := url.QueryUnescape(value); err == nil {
			value = v
		}
		out = append(out, harPair{Name: name, Value: value})
	}
	return out
}

// harResponseHeaders are the answer's headers the journal knows of.
func (a *API) harResponseHeaders(e journal.Entry) []harPair {
	out := []harPair{}
	if e.RequestID != "" {
		out = append(out, harPair{Name: a.cfg.RequestIDHeader, Value: e.RequestID})
	}
	if e.RetryAfterSeconds > 0 {
		out = append(out, harPair{Name: "Retry-After", Value: strconv.Itoa(e.RetryAfterSeconds)})
	}
	if rl := e.RateLimit; rl != nil {
		out = append(out,
			harPair{Name: "RateLimit-Limit", Value: strconv.Itoa(rl.Limit)},
			harPair{Name: "RateLimit-Remaining", Value: strconv.Itoa(rl.Remaining)},
			harPair{Name: "RateLimit-Reset", Value: strconv.Itoa(rl.Reset)})
	}
	if e.RuleID != "" {
		out = append(out, harPair{Name: a.cfg.RuleHeader, Value: e.RuleID})
	}
	return out
}
