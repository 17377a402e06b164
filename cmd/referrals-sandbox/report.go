package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/conformance"
)

// reportConfig is report's flags.
type reportConfig struct {
	adminClient
	clientID       string
	failOn         string
	pingsPerMinute int
	json           bool
}

// evidenceShown is how many request ids a table row shows; --json has all.
const evidenceShown = 3

func reportFlags(e env) (*options, *reportConfig) {
	c := &reportConfig{}
	o := newOptions("report",
		"Print the client conformance report of a running sandbox (GET /__sandbox/report): for each client in the request journal, "+
			"whether it followed the interface document's rules (token renewal and reuse, 401 recovery, Retry-After, backoff, pings, "+
			"content types, no credentials in URLs, HTTPS). Exits 1 when a check fails (or, with --fail-on warn, warns), so a CI job "+
			"can gate on its client's behaviour after its test suite ran against the sandbox.",
		e.getenv, e.stdout)
	addAdminFlags(o, &c.adminClient)
	o.String(&c.clientID, "client-id", "", "judge only this client (default: every client in the journal)")
	o.Env("client-id", "SANDBOX_REPORT_CLIENT_ID")
	o.String(&c.failOn, "fail-on", "fail", "exit 1 on any check that fails (fail) or that fails or warns (warn)")
	o.Int(&c.pingsPerMinute, "pings-per-minute", 0, "most pings in any minute that count as sparing (0: the sandbox's default, 6)")
	o.Bool(&c.json, "json", false, "print the report as JSON instead of a table")
	return o, c
}

func (c *reportConfig) check() error {
	switch {
	case c.failOn != string(conformance.Fail) && c.failOn != string(conformance.Warn):
		return fmt.Errorf("%w: --fail-on must be warn or fail, not %q", errUsage, c.failOn)
	case c.pingsPerMinute < 0:
		return fmt.Errorf("%w: --pings-per-minute must not be negative", errUsage)
	}
	return nil
}

// path is the report's admin API path with the flags as its query.
func (c *reportConfig) path() string {
	q := url.Values{}
	if c.clientID != "" {
		q.Set("clientId", c.clientID)
	}
	if c.pingsPerMinute > 0 {
		q.Set("pingsPerMinute", strconv.Itoa(c.pingsPerMinute))
	}
	if len(q) == 0 {
		return "/__sandbox/report"
	}
	return "/__sandbox/report?" + q.Encode()
}

func runReport(ctx context.Context, e env, args []string) error {
	o, c := reportFlags(e)
	if err := o.parse(args); err != nil {
		return err
	}
	if err := c.check(); err != nil {
		return err
	}
	if err := c.open(); err != nil {
		return err
	}
	var report conformance.Report
	if err := c.do(ctx, http.MethodGet, c.path(), nil, &report); err != nil {
		return err
	}
	if c.json {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(report); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
	} else if err := printReport(e.stdout, report); err != nil {
		return err
	}
	return reportGate(report, conformance.Result(c.failOn))
}

// reportGate turns the report into the exit status --fail-on asks for. An empty
// report fails too: a CI job whose client never reached the sandbox must
// not pass.
func reportGate(r conformance.Report, failOn conformance.Result) error {
	if len(r.Clients) == 0 && len(r.UnknownClients) > 0 {
		ids := make([]string, 0, len(r.UnknownClients))
		for _, u := range r.UnknownClients {
			ids = append(ids, u.ClientID)
		}
		return fmt.Errorf("no client of this sandbox made a request; only unknown client ids did (%s): check the client id your job uses", strings.Join(ids, ", "))
	}
	if len(r.Clients) == 0 {
		return fmt.Errorf("the request journal holds no client requests: run the client against this sandbox first")
	}
	fails, warns := 0, 0
	for _, cr := range r.Clients {
		fails += cr.Summary[conformance.Fail]
		warns += cr.Summary[conformance.Warn]
	}
	switch {
	case fails > 0:
		return fmt.Errorf("%s failed", reportCount(fails, "check"))
	case failOn == conformance.Warn && warns > 0:
		return fmt.Errorf("%s warned (--fail-on warn)", reportCount(warns, "check"))
	}
	return nil
}

// printReport writes the report as one table per client.
func printReport(w io.Writer, r conformance.Report) error {
	s := r.Settings
	fmt.Fprintf(w, "Client conformance report at %s (sandbox time); pings per minute %d, renewal margin %d s, max attempts %d, TLS %s\n",
		r.GeneratedAt, s.PingsPerMinute, s.RenewalMarginSeconds, s.MaxAttempts, reportYesNo(s.TLS))
	if len(r.Clients) == 0 && len(r.UnknownClients) == 0 {
		fmt.Fprintln(w, "\nNo client requests in the journal.")
	}
	for _, cr := range r.Clients {
		fmt.Fprintf(w, "\n%s, program %s: %s (%s; %d pass, %d warn, %d fail, %d not exercised)\n", cr.ClientID, cr.Program.Label, strings.ToUpper(string(cr.Result)),
			reportCount(cr.Requests, "request"), cr.Summary[conformance.Pass], cr.Summary[conformance.Warn], cr.Summary[conformance.Fail], cr.Summary[conformance.NotExercised])
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  CHECK\tRESULT\tEXPLANATION\tEVIDENCE")
		for _, c := range cr.Checks {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", c.ID, c.Result, c.Explanation, evidenceCell(c.Evidence))
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("write table: %w", err)
		}
	}
	return printUnknownClients(w, r.UnknownClients)
}

// printUnknownClients lists, apart from the judged clients, the client ids
// that requests named but the sandbox does not know, with what they tried.
func printUnknownClients(w io.Writer, unknown []conformance.UnknownClient) error {
	if len(unknown) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nUnknown clients (not clients of this sandbox, so never authenticated; not judged):\n")
	for _, u := range unknown {
		fmt.Fprintf(w, "\n%s: %s\n", u.ClientID, reportCount(u.Requests, "request"))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  AT\tREQUEST\tSTATUS\tREQUEST ID")
		for _, a := range u.Attempts {
			fmt.Fprintf(tw, "  %s\t%s %s\t%d\t%s\n", a.At, a.Method, a.Path, a.Status, a.RequestID)
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("write table: %w", err)
		}
		if more := u.Requests - len(u.Attempts); more > 0 {
			fmt.Fprintf(w, "  (%s more not shown)\n", reportCount(more, "request"))
		}
	}
	return nil
}

// evidenceCell shows the first request ids and how many more there are.
func evidenceCell(ids []string) string {
	switch {
	case len(ids) == 0:
		return "-"
	case len(ids) <= evidenceShown:
		return strings.Join(ids, " ")
	}
	return fmt.Sprintf("%s +%d more", strings.Join(ids[:evidenceShown], " "), len(ids)-evidenceShown)
}

func reportYesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// reportCount writes n and a noun with an s when n is not 1.
func reportCount(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
