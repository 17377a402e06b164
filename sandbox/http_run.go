package sandbox

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/internal/lazyregexp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/request"
)

// RunHeader labels the program a request comes from, for the conformance
// report, which judges each program of a client separately. The ?run=
// query parameter does the same where a library's headers cannot be set;
// the API ignores it otherwise.
const RunHeader = "X-Sandbox-Run"

// runPattern is what a run label may be: short, printable, safe in a URL.
var runPattern = lazyregexp.New(`^[A-Za-z0-9._:/-]{1,64}$`)

// runOf returns the request's run label: the header wins over ?run=.
func runOf(r *http.Request) string {
	if v := r.Header.Get(RunHeader); v != "" {
		return v
	}
	if !strings.Contains(r.URL.RawQuery, "run") {
		return "" // spares parsing every query
	}
	return r.URL.Query().Get("run")
}

// checkRun refuses a run label that is not 1 to 64 characters of
// A-Za-z0-9._:/- rather than journaling it altered, and a ?run= that is
// malformed, empty or given twice rather than reading one of them.
func checkRun(r *http.Request) error {
	if strings.Contains(r.URL.RawQuery, "run") {
		q, err := request.StrictQuery(r.URL.RawQuery)
		if err != nil {
			return err
		}
		if v, ok := q["run"]; ok && !runPattern().MatchString(v) {
			return fmt.Errorf("?run= %q: give 1 to 64 characters of A-Z a-z 0-9 . _ : / -", request.Printable(v))
		}
	}
	if v := r.Header.Get(RunHeader); v != "" && !runPattern().MatchString(v) {
		return fmt.Errorf("%s %q: give 1 to 64 characters of A-Z a-z 0-9 . _ : / -", RunHeader, request.Printable(v))
	}
	return nil
}
