package main

import (
	"context"
	"errors"
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
	err := walkJournal(ctx, a, url.Values{}, 0, func(e journal.Entry) error {
		entries = append(entries, e)
		return nil
	})
	return entries, err
}

// walkJournal follows GET /__sandbox/requests from the entry after id
// after to the newest, page by page, handing each entry matching filters
// to each. The sandbox bounds a page in bytes; a page still larger than
// the CLI reads (a sandbox without that bound) is asked for again one
// entry at a time, and an entry too large alone is an error saying so,
// with its position, rather than one blaming --url.
func walkJournal(ctx context.Context, a *adminClient, filters url.Values, after uint64, each func(journal.Entry) error) error {
	limit := requestsPageSize
	for {
		q := url.Values{}
		for name, v := range filters {
			q[name] = v
		}
		q.Set("afterId", strconv.FormatUint(after, 10))
		q.Set("limit", strconv.Itoa(limit))
		var page journalPage
		err := a.do(ctx, http.MethodGet, "/__sandbox/requests?"+q.Encode(), nil, &page)
		switch {
		case errors.Is(err, errAnswerTooLarge) && limit > 1:
			limit = 1
			continue
		case errors.Is(err, errAnswerTooLarge):
			return fmt.Errorf("the journal entry after id %d is too large to read: %w", after, err)
		case err != nil:
			return err
		}
		for _, e := range page.Requests {
			if err := each(e); err != nil {
				return err
			}
		}
		// The walk ends when the journal says no newer match exists; a
		// nextAfterId that does not move forward would be a sandbox bug,
		// and must not loop for ever.
		if page.NextAfterID == nil || *page.NextAfterID <= after {
			return nil
		}
		after, limit = *page.NextAfterID, requestsPageSize
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
