package main

import (
	"context"
	"fmt"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/contractdoc"
)

func fixturesActions() []action {
	return []action{
		{"generate", "--out DIR", "Write a fixtures directory with generated referrals; the same flags always write the same bytes.", runFixturesGenerate},
		{"import", "--from-journal URL_OR_FILE DIR", "Write a fixtures directory from a recording of the real service (serve --upstream): its trials list and record shapes.", runFixturesImport},
	}
}

func runFixtures(ctx context.Context, e env, args []string) error {
	return runAction(ctx, e, "fixtures", fixturesActions(), args)
}

// generateConfig is the flags of fixtures generate.
type generateConfig struct {
	seed      int
	referrals int
	qualified int
	now       string
	out       string
	base      string
	contract  string
}

func generateFlags(e env) (*options, *generateConfig) {
	def := fixtures.DefaultGenerateOptions()
	c := &generateConfig{}
	o := newOptions("fixtures generate",
		"Write a fixtures directory (clients.json, trials.json, referrals.json, qualified-referrals.json) for serve --fixtures: "+
			"the clients and trials of --fixtures (default: the embedded ones) plus generated referrals. "+
			"The same flags always write byte-identical files; the defaults reproduce the embedded referrals.",
		e.getenv, e.stdout)
	o.Int(&c.seed, "seed", int(def.Seed), "seed of the generator, the only source of randomness")
	o.Int(&c.referrals, "referrals", def.Referrals, "number of trial referrals to generate")
	o.Int(&c.qualified, "qualified", def.Qualified, "number of qualified referrals to generate")
	o.String(&c.now, "now", def.Now.UTC().Format(time.RFC3339), "reference time (RFC 3339): submissions fall in the 30 days before it; fixed so that output never depends on the clock")
	o.String(&c.out, "out", "", "directory to write (created when missing; its fixture files are replaced); required")
	o.String(&c.contract, "contract", "", "OpenAPI document (serve --contract): records of the kinds whose submissions it takes over carry a submission drawn from its request schema")
	o.String(&c.base, "fixtures", "", "fixtures directory whose clients and trials the generated set keeps (default: the embedded ones)")
	return o, c
}

// options checks the flags and turns them into the generator's options.
func (c *generateConfig) options() (fixtures.GenerateOptions, error) {
	switch {
	case c.out == "":
		return fixtures.GenerateOptions{}, fmt.Errorf("%w: --out is required", errUsage)
	case c.seed < 0:
		return fixtures.GenerateOptions{}, fmt.Errorf("%w: --seed must not be negative", errUsage)
	case c.referrals < 0:
		return fixtures.GenerateOptions{}, fmt.Errorf("%w: --referrals must not be negative", errUsage)
	case c.qualified < 0:
		return fixtures.GenerateOptions{}, fmt.Errorf("%w: --qualified must not be negative", errUsage)
	}
	now, err := time.Parse(time.RFC3339, c.now)
	if err != nil {
		return fixtures.GenerateOptions{}, fmt.Errorf("%w: --now must be an RFC 3339 time such as 2026-01-01T00:00:00Z, not %q", errUsage, c.now)
	}
	return fixtures.GenerateOptions{Seed: uint64(c.seed), Referrals: c.referrals, Qualified: c.qualified, Now: now}, nil
}

func runFixturesGenerate(ctx context.Context, e env, args []string) error {
	o, c := generateFlags(e)
	if err := o.parse(args); err != nil {
		return err
	}
	opts, err := c.options()
	if err != nil {
		return err
	}
	base, err := fixtures.Default()
	if c.base != "" {
		base, err = fixtures.LoadDir(c.base)
	}
	if err != nil {
		return err
	}
	if c.contract != "" {
		doc, err := contractdoc.LoadFileContext(ctx, c.contract)
		if err != nil {
			return err
		}
		opts.Submitter = doc.Submitter()
	}
	set, err := fixtures.Generate(base, opts)
	if err != nil {
		return err
	}
	if err := fixtures.WriteDir(set, c.out); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %d referrals and %d qualified referrals (seed %d) to %s\n",
		len(set.Referrals), len(set.QualifiedReferrals), c.seed, c.out)
	return nil
}
