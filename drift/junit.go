package drift

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// JUnit XML as CI systems read it: one test case per probe, failed when it
// has differences, skipped with the reason.
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

func (r *Report) writeJUnit(w io.Writer) error {
	suite := junitSuite{Name: "referrals-sandbox drift", Tests: len(r.Probes) + len(r.Skipped), Skipped: len(r.Skipped)}
	for _, p := range r.Probes {
		c := junitCase{Name: p.Name, Classname: "drift"}
		diffs, allowed := r.differencesOf(p.Name)
		if len(diffs) > 0 {
			suite.Failures++
			var text strings.Builder
			for _, d := range diffs {
				fmt.Fprintf(&text, "%s: upstream %s, sandbox %s (%s)\n", d.Key, d.Upstream, d.Sandbox, d.Detail)
			}
			c.Failure = &junitMessage{Message: fmt.Sprintf("%d differences in %s", len(diffs), p.Request), Text: text.String()}
		}
		if len(allowed) > 0 {
			var text strings.Builder
			for _, d := range allowed {
				fmt.Fprintf(&text, "allowed %s: %s\n", d.Key, d.Allowed)
			}
			c.SystemOut = text.String()
		}
		suite.Cases = append(suite.Cases, c)
	}
	for _, s := range r.Skipped {
		suite.Cases = append(suite.Cases, junitCase{Name: s.Name, Classname: "drift", Skipped: &junitMessage{Message: s.Reason}})
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(junitSuites{Suites: []junitSuite{suite}}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
