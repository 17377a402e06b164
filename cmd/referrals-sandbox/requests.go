package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// requestsPageSize is how many journal entries a journal walk asks for at
// once. The sandbox also bounds a page to journal.MaxPageBytes, so a page
// fits maxResponseBytes whatever its entries hold; ordinary entries are
// near 1 KB, and the walk is a few hundred loopback calls at most.
const requestsPageSize = 8

// requestsConfig is the flags of requests.
type requestsConfig struct {
	adminClient
	clientID string
	path     string
	status   int
	since    string
	afterID  int64
	json     bool
	har      bool
}

func requestsFlags(e env) (*options, *requestsConfig) {
	c := &requestsConfig{}
	o := newOptions("requests",
		"Print the request journal of a running sandbox (GET /__sandbox/requests), oldest first, following its pages: "+
			"what each client sent and what the sandbox answered, with credentials redacted and long values cut "+
			"(marked in the TRUNCATED column). With --json, one JSON entry a line; with --har, one HAR 1.2 archive "+
			"(GET /__sandbox/requests.har) to attach to a bug report or open in a browser's devtools.",
		e.getenv, e.stdout)
	addAdminFlags(o, &c.adminClient)
	o.String(&c.clientID, "client-id", "", "only this client's requests")
	o.String(&c.path, "path", "", "only this path, or the paths under a prefix ending in * (e.g. /api/v1/*)")
	o.Int(&c.status, "status", 0, "only requests answered with this status (0: any)")
	o.String(&c.since, "since", "", "only requests at or after this RFC 3339 time (sandbox time)")
	o.Int64(&c.afterID, "after-id", 0, "only entries with a larger id: pass the last id printed to see what came since")
	o.Bool(&c.json, "json", false, "print one JSON journal entry a line instead of a table")
	o.Bool(&c.har, "har", false, "print the matching entries as one HAR 1.2 archive (redacted as the journal is) instead of a table")
	return o, c
}

func (c *requestsConfig) check() error {
	switch {
	case c.status != 0 && (c.status < 100 || c.status > 599):
		return fmt.Errorf("%w: --status must be an HTTP status code such as 401", errUsage)
	case c.afterID < 0:
		return fmt.Errorf("%w: --after-id must not be negative", errUsage)
	case c.json && c.har:
		return fmt.Errorf("%w: --json and --har exclude each other", errUsage)
	}
	if c.since != "" {
		if _, err := time.Parse(time.RFC3339Nano, c.since); err != nil {
			return fmt.Errorf("%w: --since must be an RFC 3339 time such as 2026-01-02T15:04:05Z, not %q", errUsage, c.since)
		}
	}
	return nil
}

// filters are the journal filters the flags set.
func (c *requestsConfig) filters() url.Values {
	q := url.Values{}
	for name, v := range map[string]string{"clientId": c.clientID, "path": c.path, "since": c.since} {
		if v != "" {
			q.Set(name, v)
		}
	}
	if c.status != 0 {
		q.Set("status", strconv.Itoa(c.status))
	}
	return q
}

// journalPage is the answer of GET /__sandbox/requests.
type journalPage struct {
	Requests    []sandbox.JournalEntry `json:"requests"`
	NextAfterID *uint64                `json:"nextAfterId"`
}

func runRequests(ctx context.Context, e env, args []string) error {
	o, c := requestsFlags(e)
	if err := o.parse(args); err != nil {
		return err
	}
	if err := c.check(); err != nil {
		return err
	}
	if err := c.open(); err != nil {
		return err
	}
	if c.har {
		return c.writeHAR(ctx, e.stdout)
	}
	out := newRequestsPrinter(e.stdout, c.json)
	if err := walkJournal(ctx, &c.adminClient, c.filters(), uint64(c.afterID), out.print); err != nil {
		return err
	}
	return out.done()
}

// requestsPrinter writes entries as they arrive: JSON lines, or a table.
type requestsPrinter struct {
	w     io.Writer
	json  *json.Encoder
	table *tabwriter.Writer
	count int
}

func newRequestsPrinter(w io.Writer, asJSON bool) *requestsPrinter {
	p := &requestsPrinter{w: w}
	if asJSON {
		p.json = json.NewEncoder(w)
	} else {
		p.table = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(p.table, "ID\tAT\tMETHOD\tPATH\tSTATUS\tCLIENT\tRULE\tTRUNCATED")
	}
	return p
}

func (p *requestsPrinter) print(e sandbox.JournalEntry) error {
	p.count++
	if p.json != nil {
		if err := p.json.Encode(e); err != nil {
			return fmt.Errorf("write entry: %w", err)
		}
		return nil
	}
	path := e.Path
	if e.Query != "" {
		path += "?" + e.Query
	}
	fmt.Fprintf(p.table, "%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", e.ID, e.At, e.Method, path, e.Status,
		orDash(e.ClientID), orDash(e.RuleID), orDash(strings.Join(e.Truncated, ",")))
	return nil
}

func (p *requestsPrinter) done() error {
	if p.table == nil {
		return nil
	}
	if err := p.table.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	if p.count == 0 {
		fmt.Fprintln(p.w, "No matching requests in the journal.")
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
