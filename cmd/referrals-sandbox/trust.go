package main

import (
	"context"
	"fmt"
	"time"

	"github.com/smallstep/truststore"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/tlsca"
)

// trustConfig is every flag of trust.
type trustConfig struct {
	caDir     string
	noSystem  bool
	uninstall bool
}

// runTrust installs the kept local CA (the one serve's --https uses) into
// the system store and the NSS stores (Firefox, Chromium), and Java's when
// JAVA_HOME is set, as mkcert and Caddy do: done once per machine, since
// every start reuses that CA. It makes the CA if no start has yet.
func runTrust(_ context.Context, e env, args []string) error {
	c := &trustConfig{}
	o := newOptions("trust", "Trust the sandbox's local CA on this machine, once: the system store (asks for sudo), the NSS stores (Firefox, Chromium) and, with JAVA_HOME set, Java's.", e.getenv, e.stdout)
	o.String(&c.caDir, "ca-dir", "", "the CA directory serve --ca-dir uses (default: referrals-sandbox in the user's configuration directory)")
	o.Bool(&c.noSystem, "no-system", false, "leave the system store alone: only the NSS and Java stores")
	o.Bool(&c.uninstall, "uninstall", false, "remove the CA from those stores instead")
	if err := o.parse(args); err != nil {
		return err
	}
	dir := c.caDir
	if dir == "" {
		var err error
		if dir, err = tlsca.DefaultDir(); err != nil {
			return err
		}
	}
	kept, err := tlsca.LoadOrCreate(dir, nil, time.Now())
	if err != nil {
		return err
	}
	opts := []truststore.Option{truststore.WithFirefox(), truststore.WithJava(), truststore.WithPrefix("referrals-sandbox ")}
	if c.noSystem {
		opts = append(opts, truststore.WithNoSystem())
	}
	if c.uninstall {
		if err := truststore.UninstallFile(kept.CAPath, opts...); err != nil {
			return fmt.Errorf("remove the CA %s from the trust stores: %w", kept.CAPath, err)
		}
		fmt.Fprintf(e.stdout, "The sandbox's local CA %s is no longer trusted on this machine.\n", kept.CAPath)
		return nil
	}
	if err := truststore.InstallFile(kept.CAPath, opts...); err != nil {
		return fmt.Errorf("trust the CA %s: %w\nwithout sudo, trust it per process instead:\n%s", kept.CAPath, err, trustSettings(kept.CAPath))
	}
	stores := "the system store, and the NSS and Java stores where present"
	if c.noSystem {
		stores = "the NSS and Java stores where present; the system store left alone"
	}
	fmt.Fprintf(e.stdout, "The sandbox's local CA %s is trusted on this machine (%s).\n", kept.CAPath, stores)
	fmt.Fprintln(e.stdout, "Some runtimes keep their own list; if one still refuses the certificate:")
	fmt.Fprint(e.stdout, trustSettings(kept.CAPath))
	return nil
}
