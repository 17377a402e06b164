package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// envPrefix names every flag's environment variable: --token-lifetime is
// SANDBOX_TOKEN_LIFETIME.
const envPrefix = "SANDBOX_"

// errUsage marks a command-line mistake: exit status 2.
var errUsage = errors.New("usage error")

// options is one subcommand's flags. A flag given on the command line wins
// over its environment variable, which wins over the default.
type options struct {
	fs      *flag.FlagSet
	summary string
	getenv  func(string) string
	out     io.Writer
}

// newOptions makes a subcommand's flag set; --help prints to out.
func newOptions(name, summary string, getenv func(string) string, out io.Writer) *options {
	fs := flag.NewFlagSet("referrals-sandbox "+name, flag.ContinueOnError)
	// The flag package prints errors and usage itself; run() prints one
	// line per error instead, and --help prints the full listing.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &options{fs: fs, summary: summary, getenv: getenv, out: out}
}

func envName(flagName string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func (o *options) String(p *string, name, def, usage string) {
	o.fs.StringVar(p, name, def, usage)
}

func (o *options) Int(p *int, name string, def int, usage string) { o.fs.IntVar(p, name, def, usage) }

func (o *options) Int64(p *int64, name string, def int64, usage string) {
	o.fs.Int64Var(p, name, def, usage)
}

func (o *options) Float(p *float64, name string, def float64, usage string) {
	o.fs.Float64Var(p, name, def, usage)
}

func (o *options) Bool(p *bool, name string, def bool, usage string) {
	o.fs.BoolVar(p, name, def, usage)
}

func (o *options) Duration(p *time.Duration, name string, def time.Duration, usage string) {
	o.fs.DurationVar(p, name, def, usage)
}

// List is a repeatable flag; its environment variable is comma-separated.
func (o *options) List(p *[]string, name, usage string) { o.fs.Var((*listValue)(p), name, usage) }

type listValue []string

func (l *listValue) String() string { return strings.Join(*l, ",") }
func (l *listValue) Set(v string) error {
	for _, part := range strings.Split(v, ",") {
		if part = strings.TrimSpace(part); part != "" {
			*l = append(*l, part)
		}
	}
	return nil
}

// parse reads the command line, then fills unset flags from the
// environment. Errors name the flag or variable and wrap errUsage.
func (o *options) parse(args []string) error {
	if err := o.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			o.usage()
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if o.fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, o.fs.Arg(0))
	}
	set := map[string]bool{}
	o.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	o.fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || err != nil {
			return
		}
		if v := o.getenv(envName(f.Name)); v != "" {
			if e := f.Value.Set(v); e != nil {
				err = fmt.Errorf("%w: invalid value %q for %s (--%s): %v", errUsage, v, envName(f.Name), f.Name, e)
			}
		}
	})
	return err
}

// usage lists every flag with its environment variable and default.
func (o *options) usage() {
	w := o.out
	fmt.Fprintf(w, "Usage: %s [flags]\n\n%s\n\nFlags:\n", o.fs.Name(), o.summary)
	var flags []*flag.Flag
	o.fs.VisitAll(func(f *flag.Flag) { flags = append(flags, f) })
	sort.Slice(flags, func(i, j int) bool { return flags[i].Name < flags[j].Name })
	for _, f := range flags {
		def := f.DefValue
		if def == "" {
			def = `""`
		}
		fmt.Fprintf(w, "  --%s\n      %s\n      (env %s, default %s)\n", f.Name, f.Usage, envName(f.Name), def)
	}
}
