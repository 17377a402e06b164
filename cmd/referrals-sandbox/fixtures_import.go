package main

import (
	"context"
	"fmt"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
)

func runFixturesImport(ctx context.Context, e env, args []string) error {
	var from, dir, base string
	o := newOptions("fixtures import",
		"Write a fixtures directory for serve --fixtures from a recording of the real service (serve --upstream): "+
			"its latest trials list and the referrals and qualified referrals its answers showed, with the recording's placeholders "+
			"for patient data, owned by the first client of --fixtures (default: the embedded sandbox-partner).",
		e.getenv, e.stdout)
	o.String(&from, "from-journal", "", "the recording: a sandbox's root URL (its journal) or a file of journal entries (requests --json)")
	o.Env("from-journal", "SANDBOX_IMPORT_FROM_JOURNAL")
	o.String(&base, "fixtures", "", "fixtures directory whose clients the imported set keeps (default: the embedded ones)")
	o.Env("fixtures", "SANDBOX_IMPORT_FIXTURES")
	o.Arg(&dir, "DIR")
	if err := o.parse(args); err != nil {
		return err
	}
	if from == "" || dir == "" {
		return fmt.Errorf("%w: give --from-journal URL_OR_FILE and the directory to write", errUsage)
	}
	baseSet, err := fixtures.Default()
	if base != "" {
		baseSet, err = fixtures.LoadDir(base)
	}
	if err != nil {
		return err
	}
	entries, err := readJournal(ctx, e, from)
	if err != nil {
		return err
	}
	set, sum, err := fixtures.Import(recordedAnswers(entries), baseSet)
	if err != nil {
		return err
	}
	if err := fixtures.WriteDir(set, dir); err != nil {
		return err
	}
	for _, s := range sum.Skipped {
		fmt.Fprintf(e.stderr, "left out %s\n", s)
	}
	fmt.Fprintf(e.stdout, "wrote %d trials, %d referrals and %d qualified referrals from %d journal entries to %s\n",
		sum.Trials, sum.Referrals, sum.QualifiedReferrals, len(entries), dir)
	return nil
}
