package main

import (
	"context"
	"flag"
	"io"
	"strings"
	"testing"
)

// flagSetCase is a command line and the builder of the flag set it uses, so
// the tests check the help against the real flags, not a copied list.
type flagSetCase struct {
	args  []string
	flags func(e env) *options
}

func flagSetCases() []flagSetCase {
	return []flagSetCase{
		{[]string{"serve"}, func(e env) *options { o, _ := serveFlags(e); return o }},
		{[]string{"healthcheck"}, func(e env) *options { o, _ := healthcheckFlags(e); return o }},
		{[]string{"token"}, func(e env) *options { o, _ := tokenFlags(e); return o }},
		{[]string{"scenario", "list"}, func(e env) *options { o, _ := scenarioFlags(e, "list", ""); return o }},
		{[]string{"scenario", "apply"}, func(e env) *options { o, _ := scenarioApplyFlags(e); return o }},
		{[]string{"scenario", "clear"}, func(e env) *options { o, _ := scenarioFlags(e, "clear", ""); return o }},
		{[]string{"client", "create"}, func(e env) *options { o, _ := clientCreateFlags(e); return o }},
		{[]string{"clock", "show"}, func(e env) *options { o, _ := clockFlags(e, "show", ""); return o }},
		{[]string{"fixtures", "generate"}, func(e env) *options { o, _ := generateFlags(e); return o }},
		{[]string{"requests"}, func(e env) *options { o, _ := requestsFlags(e); return o }},
		{[]string{"collections"}, func(e env) *options { o, _ := collectionsFlags(e); return o }},
		{[]string{"version"}, func(e env) *options { return newOptions("version", "", e.getenv, e.stdout) }},
	}
}

func allFlags(o *options) []*flag.Flag {
	var flags []*flag.Flag
	o.fs.VisitAll(func(f *flag.Flag) { flags = append(flags, f) })
	return flags
}

func TestHelpListsEveryFlagWithEnvAndDefault(t *testing.T) {
	for _, tc := range flagSetCases() {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			res := runCLI(t, nil, append(tc.args, "--help")...)
			if res.code != 0 {
				t.Fatalf("exit %d, stderr %q", res.code, res.stderr)
			}
			if !strings.HasPrefix(res.stdout, "Usage: referrals-sandbox "+strings.Join(tc.args, " ")) {
				t.Errorf("help does not start with the usage line:\n%s", res.stdout)
			}
			o := tc.flags(env{stdout: io.Discard, stderr: io.Discard, getenv: mapGetenv(nil)})
			for _, f := range allFlags(o) {
				def := f.DefValue
				if def == "" {
					def = `""`
				}
				for _, want := range []string{"  --" + f.Name + "\n", "      " + f.Usage + "\n", "(env " + o.envOf(f.Name) + ", default " + def + ")"} {
					if !strings.Contains(res.stdout, want) {
						t.Errorf("help lacks %q for --%s:\n%s", want, f.Name, res.stdout)
					}
				}
				if !strings.HasPrefix(o.envOf(f.Name), "SANDBOX_") {
					t.Errorf("--%s has environment variable %s without the SANDBOX_ prefix", f.Name, o.envOf(f.Name))
				}
			}
		})
	}
}

func TestEveryCommandHasHelp(t *testing.T) {
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			res := runCLI(t, nil, c.name, "--help")
			if res.code != 0 || !strings.Contains(res.stdout, "Usage: referrals-sandbox "+c.name) {
				t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
			}
		})
	}
	res := runCLI(t, nil, "help")
	for _, c := range commands() {
		if !strings.Contains(res.stdout, "  "+c.name+" ") {
			t.Errorf("help does not list %s:\n%s", c.name, res.stdout)
		}
	}
}

func TestActionHelpListsActions(t *testing.T) {
	tests := []struct {
		command string
		actions []action
	}{
		{"scenario", scenarioActions()},
		{"fixtures", fixturesActions()},
	}
	for _, tc := range tests {
		res := runCLI(t, nil, tc.command, "--help")
		if res.code != 0 {
			t.Errorf("%s --help: exit %d", tc.command, res.code)
		}
		for _, a := range tc.actions {
			if !strings.Contains(res.stdout, "  "+a.name) || !strings.Contains(res.stdout, a.summary) {
				t.Errorf("%s --help lacks action %s:\n%s", tc.command, a.name, res.stdout)
			}
		}
	}
}

func TestUnknownFlagExits2NamingIt(t *testing.T) {
	for _, tc := range flagSetCases() {
		args := append([]string{}, tc.args...)
		if strings.Join(args, " ") == "scenario apply" {
			args = append(args, "flaky")
		}
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			res := runCLI(t, nil, append(args, "--no-such-flag")...)
			if res.code != 2 {
				t.Errorf("exit %d, want 2", res.code)
			}
			if !strings.Contains(res.stderr, "no-such-flag") {
				t.Errorf("stderr does not name the flag: %q", res.stderr)
			}
			if res.stdout != "" {
				t.Errorf("stdout %q, want nothing", res.stdout)
			}
		})
	}
}

func TestUsageErrorsExit2NamingTheCulprit(t *testing.T) {
	tests := []struct {
		name    string
		environ map[string]string
		args    []string
		want    string
	}{
		{"rate limit flag", nil, []string{"--rate-limit", "abc"}, "rate-limit"},
		{"rate limit variable", map[string]string{"SANDBOX_RATE_LIMIT": "abc"}, nil, "SANDBOX_RATE_LIMIT"},
		{"negative rate limit", nil, []string{"serve", "--rate-limit", "-1"}, "--rate-limit"},
		{"negative clock skew", nil, []string{"serve", "--clock-skew", "-1s"}, "--clock-skew"},
		{"clock skew variable", map[string]string{"SANDBOX_CLOCK_SKEW": "soon"}, []string{"serve"}, "SANDBOX_CLOCK_SKEW"},
		{"environment", nil, []string{"serve", "--environment", "staging"}, "--environment"},
		{"environment variable", map[string]string{"SANDBOX_ENVIRONMENT": "staging"}, []string{"serve"}, "--environment"},
		{"log format", nil, []string{"serve", "--log-format", "xml"}, "--log-format"},
		{"journal bytes below 1 MiB", nil, []string{"serve", "--journal-bytes", "1000"}, "--journal-bytes"},
		{"journal bytes variable", map[string]string{"SANDBOX_JOURNAL_BYTES": "64MB"}, []string{"serve"}, "SANDBOX_JOURNAL_BYTES"},
		{"negative quota records", nil, []string{"serve", "--quota-records", "-1"}, "--quota-records"},
		{"negative quota bytes", map[string]string{"SANDBOX_QUOTA_BYTES": "-1"}, []string{"serve"}, "--quota-bytes"},
		{"serve argument", nil, []string{"serve", "extra"}, `"extra"`},
		{"unknown command", nil, []string{"frobnicate"}, `"frobnicate"`},
		{"token timeout", nil, []string{"token", "--timeout", "forever"}, "timeout"},
		{"token url", nil, []string{"token", "--url", "ftp://127.0.0.1"}, "--url"},
		{"token tenant", nil, []string{"token", "--tenant", "a/b"}, "--tenant"},
		{"healthcheck timeout variable", map[string]string{"SANDBOX_TIMEOUT": "abc"}, []string{"healthcheck"}, "SANDBOX_TIMEOUT"},
		{"healthcheck with a free-port address", map[string]string{"SANDBOX_ADDR": "127.0.0.1:0"}, []string{"healthcheck"}, "--url"},
		{"healthcheck with a bad TLS variable", map[string]string{"SANDBOX_TLS": "maybe"}, []string{"healthcheck"}, "SANDBOX_TLS"},
		{"scenario without action", nil, []string{"scenario"}, "list, apply, clear"},
		{"scenario unknown action", nil, []string{"scenario", "explode"}, `"explode"`},
		{"scenario apply without name", nil, []string{"scenario", "apply"}, "NAME"},
		{"scenario url", nil, []string{"scenario", "list", "--url", "not a url"}, "--url"},
		{"generate without out", nil, []string{"fixtures", "generate"}, "--out"},
		{"generate seed", nil, []string{"fixtures", "generate", "--out", "x", "--seed", "one"}, "seed"},
		{"generate negative seed", nil, []string{"fixtures", "generate", "--out", "x", "--seed", "-1"}, "--seed"},
		{"generate now", nil, []string{"fixtures", "generate", "--out", "x", "--now", "yesterday"}, "--now"},
		{"generate referrals", nil, []string{"fixtures", "generate", "--out", "x", "--referrals", "-3"}, "--referrals"},
		{"generate referrals variable", map[string]string{"SANDBOX_REFERRALS": "many"}, []string{"fixtures", "generate", "--out", "x"}, "SANDBOX_REFERRALS"},
	}
	// Every mistake is caught before any listening or dialling; should one
	// slip through, serve binds a free port and stops at once.
	stopped, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			environ := map[string]string{"SANDBOX_ADDR": "127.0.0.1:0"}
			for k, v := range tc.environ {
				environ[k] = v
			}
			res := runCLIContext(stopped, environ, tc.args...)
			if res.code != 2 {
				t.Errorf("exit %d, want 2; stderr %q", res.code, res.stderr)
			}
			if !strings.Contains(res.stderr, tc.want) {
				t.Errorf("stderr does not name %s: %q", tc.want, res.stderr)
			}
		})
	}
}

func TestFlagBeatsEnvironmentBeatsDefault(t *testing.T) {
	tests := []struct {
		name    string
		environ map[string]string
		args    []string
		want    string
	}{
		{"default", nil, nil, DefaultURL},
		{"environment", map[string]string{"SANDBOX_URL": "http://env.test:1"}, nil, "http://env.test:1"},
		{"flag", map[string]string{"SANDBOX_URL": "http://env.test:1"}, []string{"--url", "http://flag.test:2"}, "http://flag.test:2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, c := tokenFlags(env{stdout: io.Discard, stderr: io.Discard, getenv: mapGetenv(tc.environ)})
			if err := o.parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if c.url != tc.want {
				t.Errorf("url %q, want %q", c.url, tc.want)
			}
		})
	}
}
