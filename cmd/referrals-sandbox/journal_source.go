package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// readJournal loads a recording: a running sandbox's journal when source
// is an http(s) URL (its root URL; SANDBOX_ADMIN_TOKEN when the admin API
// asks for one), else a file as requests --json writes it.
func readJournal(ctx context.Context, e env, source string) ([]journal.Entry, error) {
	if !strings.HasPrefix(source, "http://") && !strings.HasPrefix(source, "https://") {
		f, err := os.Open(source)
		if err != nil {
			return nil, fmt.Errorf("%w: recording: %v", errUsage, err)
		}
		defer f.Close()
		entries, err := journal.ReadEntries(f)
		if err != nil {
			return nil, fmt.Errorf("recording %s: %w", source, err)
		}
		return entries, nil
	}
	a := &adminClient{target: target{url: source, timeout: defaultClientTimeout}, token: e.getenv("SANDBOX_ADMIN_TOKEN")}
	if err := a.open(); err != nil {
		return nil, err
	}
	var entries []journal.Entry
	after := uint64(0)
	for {
		var page journalPage
		q := url.Values{"afterId": {strconv.FormatUint(after, 10)}, "limit": {strconv.Itoa(requestsPageSize)}}
		if err := a.do(ctx, http.MethodGet, "/__sandbox/requests?"+q.Encode(), nil, &page); err != nil {
			return nil, err
		}
		entries = append(entries, page.Requests...)
		if page.NextAfterID == nil || *page.NextAfterID <= after {
			return entries, nil
		}
		after = *page.NextAfterID
	}
}

// recordedAnswers are the real service's answers in a recording, for
// fixtures import.
func recordedAnswers(entries []journal.Entry) []fixtures.RecordedAnswer {
	var out []fixtures.RecordedAnswer
	for _, e := range entries {
		if u := e.Upstream; u != nil && u.Error == "" && u.Body != nil {
			out = append(out, fixtures.RecordedAnswer{Method: e.Method, Path: e.Path, Status: u.Status, Body: u.Body})
		}
	}
	return out
}
