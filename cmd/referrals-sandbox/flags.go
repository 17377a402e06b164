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

// errQuiet is a failure already explained, or meant to be silent (exit
// status 1 with nothing printed): healthcheck without -v.
var errQuiet = errors.New("failed")

// options is one subcommand's flags. A flag given on the command line wins
// over its environment variable, which wins over the default.
type options struct {
	fs      *flag.FlagSet
	summary string
	getenv  func(string) string
	out     io.Writer
	// envNames overrides a flag's environment variable where the default
	// name would mean different things in different subcommands.
	envNames map[string]string
	// positional are the arguments that are not flags, in declaration
	// order; parse fills them wherever they stand among the flags.
	positional []positionalArg
}

// positionalArg is one named argument a subcommand takes besides flags.
type positionalArg struct {
	name string
	into *string
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

// envOf is the environment variable of one of this subcommand's flags.
func (o *options) envOf(flagName string) string {
	if name, ok := o.envNames[flagName]; ok {
		return name
	}
	return envName(flagName)
}

// Env gives a flag an environment variable of its own, for a flag whose
// name other subcommands use with another meaning (--client-id).
func (o *options) Env(flagName, variable string) {
	if o.envNames == nil {
		o.envNames = map[string]string{}
	}
	o.envNames[flagName] = variable
}

// ListEnv is List read from the variable env instead of envName's (a list
// flag named in the singular, read from a plural variable).
func (o *options) ListEnv(p *[]string, name, env, usage string) {
	o.List(p, name, usage)
	o.Env(name, env)
}

// Arg declares a positional argument (scenario apply NAME). Positional
// arguments may stand before, between or after the flags.
func (o *options) Arg(p *string, name string) {
	o.positional = append(o.positional, positionalArg{name: name, into: p})
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
	*p = def
	o.fs.Var((*durationValue)(p), name, usage)
}

// durationValue is a time.Duration flag whose error shows the format.
type durationValue time.Duration

func (d *durationValue) String() string { return time.Duration(*d).String() }
func (d *durationValue) Set(v string) error {
	parsed, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("want a duration such as 90s, 15m or 1h30m")
	}
	*d = durationValue(parsed)
	return nil
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
// environment. Flags and positional arguments may come in any order
// ("scenario apply --url U flaky"); "--" ends the flags. Errors name the
// flag or variable and wrap errUsage.
func (o *options) parse(args []string) error {
	var rest []string
	for len(args) > 0 {
		if err := o.fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				o.usage()
				return err
			}
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		left := o.fs.Args()
		if consumed := len(args) - len(left); consumed > 0 && args[consumed-1] == "--" {
			rest = append(rest, left...) // everything after "--" is positional
			break
		}
		if len(left) == 0 {
			break
		}
		// The flag package stops at the first non-flag: take it and go on.
		rest = append(rest, left[0])
		args = left[1:]
	}
	if len(rest) > len(o.positional) {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, rest[len(o.positional)])
	}
	for i, v := range rest {
		*o.positional[i].into = v
	}
	set := map[string]bool{}
	o.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	o.fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || err != nil {
			return
		}
		name := o.envOf(f.Name)
		if v := o.getenv(name); v != "" {
			if e := f.Value.Set(v); e != nil {
				err = fmt.Errorf("%w: invalid value %q for %s (--%s): %v", errUsage, v, name, f.Name, e)
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
		fmt.Fprintf(w, "  --%s\n      %s\n      (env %s, default %s)\n", f.Name, f.Usage, o.envOf(f.Name), def)
	}
}
