package drift

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Formats are the report formats Write takes.
var Formats = []string{"text", "json", "junit", "markdown"}

// Write writes the report in format (text, json, junit or markdown), with
// every secret and token drift handled replaced by [redacted] should an
// upstream have echoed one into something drift prints.
func (r *Report) Write(w io.Writer, format string) error {
	var buf bytes.Buffer
	var err error
	switch format {
	case "text":
		r.writeText(&buf)
	case "json":
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		err = enc.Encode(r)
	case "junit":
		err = r.writeJUnit(&buf)
	case "markdown":
		r.writeMarkdown(&buf)
	default:
		return fmt.Errorf("unknown format %q (one of %s)", format, strings.Join(Formats, ", "))
	}
	if err != nil {
		return fmt.Errorf("write %s report: %w", format, err)
	}
	if _, err := io.WriteString(w, r.secrets.scrub(buf.String())); err != nil {
		return fmt.Errorf("write %s report: %w", format, err)
	}
	return nil
}

// WriteSummary writes the skipped probes and the requests sent to each
// side: what a person watching the run wants on stderr, whatever the
// report's format.
func (r *Report) WriteSummary(w io.Writer) error {
	var buf bytes.Buffer
	for _, s := range r.Skipped {
		fmt.Fprintf(&buf, "skipped %s: %s\n", s.Name, s.Reason)
	}
	for _, s := range r.Requests {
		fmt.Fprintf(&buf, "sent %d requests to the %s (%s): %s; %d retried after 429, %.1f s waited for Retry-After, %d access tokens\n",
			s.Sent, s.Target, s.URL, statusCounts(s.ByStatus), s.Retried, s.WaitedSeconds, s.Tokens)
	}
	fmt.Fprintf(&buf, "%d probes ran, %d skipped; %d differences, %d allowed\n", len(r.Probes), len(r.Skipped), len(r.Differences), len(r.Allowed))
	_, err := io.WriteString(w, r.secrets.scrub(buf.String()))
	return err
}

func statusCounts(by map[string]int) string {
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d × %s", by[k], k))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// writeText writes one difference per line.
func (r *Report) writeText(w io.Writer) {
	for _, d := range r.Differences {
		fmt.Fprintf(w, "%s: upstream %s, sandbox %s (%s)\n", d.Key, d.Upstream, d.Sandbox, d.Detail)
	}
}

// writeMarkdown writes a pull-request comment: a verdict, the differences
// as a table, then what was allowed and skipped.
func (r *Report) writeMarkdown(w io.Writer) {
	verdict := "No drift"
	if r.Failed() {
		verdict = fmt.Sprintf("%d differences", len(r.Differences))
	}
	fmt.Fprintf(w, "### Sandbox drift: %s\n\n", verdict)
	fmt.Fprintf(w, "%d probes compared the sandbox with the upstream; %d skipped, %d differences allowed.\n", len(r.Probes), len(r.Skipped), len(r.Allowed))
	table := func(title string, diffs []Difference, withReason bool) {
		if len(diffs) == 0 {
			return
		}
		fmt.Fprintf(w, "\n#### %s\n\n| Probe | Aspect | Upstream | Sandbox | Detail |\n|---|---|---|---|---|\n", title)
		for _, d := range diffs {
			detail := d.Detail
			if withReason {
				detail += "; allowed: " + d.Allowed
			}
			fmt.Fprintf(w, "| %s | `%s` | %s | %s | %s |\n", mdCell(d.Probe), mdCell(d.Aspect), mdCell(d.Upstream), mdCell(d.Sandbox), mdCell(detail))
		}
	}
	table("Differences", r.Differences, false)
	table("Allowed", r.Allowed, true)
	if len(r.Skipped) > 0 {
		fmt.Fprintf(w, "\n#### Skipped\n\n")
		for _, s := range r.Skipped {
			fmt.Fprintf(w, "- %s: %s\n", mdCell(s.Name), mdCell(s.Reason))
		}
	}
}

// mdCell keeps a value inside its table cell.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "`", "'").Replace(s)
}
