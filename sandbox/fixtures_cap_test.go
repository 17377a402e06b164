package sandbox_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// TestFixtureRecordProblemsAreCapped: a referrals.json whose 2,000 entries
// each break an API rule stops start-up with the first problems and a
// count, not 2,000 lines.
func TestFixtureRecordProblemsAreCapped(t *testing.T) {
	set, err := fixtures.Default()
	if err != nil {
		t.Fatal(err)
	}
	base := set.Referrals[0]
	set.Referrals = nil
	for i := range 2000 {
		r := base
		r.OutcomesID = fmt.Sprintf("cap-%d", i)
		r.Patient.Gender = "unknown-gender"
		set.Referrals = append(set.Referrals, r)
	}
	dir := t.TempDir()
	if err := fixtures.WriteDir(set, dir); err != nil {
		t.Fatal(err)
	}
	in, err := sandbox.Open(sandbox.Config{FixturesDir: dir})
	if err == nil {
		_ = in.Close()
		t.Fatal("2000 referrals with a bad gender loaded")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != fixtures.MaxReportedProblems+1 {
		t.Fatalf("%d lines, want the first %d problems and a count", len(lines), fixtures.MaxReportedProblems)
	}
	if !strings.Contains(lines[0], fixtures.ReferralsFile+": entry 1: patient.gender") {
		t.Errorf("first line %q does not name entry 1's field", lines[0])
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, "1980 more problems (2000 in all") {
		t.Errorf("last line %q does not count the rest", last)
	}
}
