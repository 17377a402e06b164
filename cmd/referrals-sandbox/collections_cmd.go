package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/collections"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi"
)

// collectionsConfig is the flags of collections.
type collectionsConfig struct {
	dir          string
	url          string
	tenant       string
	clientID     string
	clientSecret string
	scope        string
}

func collectionsFlags(e env) (*options, *collectionsConfig) {
	c := &collectionsConfig{}
	o := newOptions("collections",
		"Write a Postman (v2.1) and a Bruno collection of the API into DIR, generated from its OpenAPI document: "+
			"every operation with an example, the client-credentials token fetched and renewed through collection variables "+
			"(auth_url, base_url, root_url, client_id, client_secret, scope), and a folder of failure drills. "+
			"The flags are the variables' values.",
		e.getenv, e.stdout)
	o.Arg(&c.dir, "DIR")
	o.String(&c.url, "url", DefaultURL, "root URL of the sandbox the collections call")
	o.Env("url", "SANDBOX_COLLECTIONS_URL")
	o.String(&c.tenant, "tenant", idp.DefaultTenant, "tenant in the identity provider's paths (the sandbox's --tenant)")
	o.String(&c.clientID, "client-id", defaultClientID, "client_id the collections authenticate as")
	o.Env("client-id", "SANDBOX_COLLECTIONS_CLIENT_ID")
	o.String(&c.clientSecret, "client-secret", defaultClientSecret, "client_secret of --client-id (written into the collections)")
	o.Env("client-secret", "SANDBOX_COLLECTIONS_CLIENT_SECRET")
	o.String(&c.scope, "scope", defaultScope, "scope the token is asked for")
	return o, c
}

func runCollections(_ context.Context, e env, args []string) error {
	o, c := collectionsFlags(e)
	if err := o.parse(args); err != nil {
		return err
	}
	if c.dir == "" {
		return fmt.Errorf("%w: collections needs DIR, the directory to write the collections into", errUsage)
	}
	root := strings.TrimRight(c.url, "/")
	if !strings.HasPrefix(root, "http://") && !strings.HasPrefix(root, "https://") {
		return fmt.Errorf("%w: --url must start with http:// or https://, not %q", errUsage, c.url)
	}
	g, err := collections.Generate(openapi.Document(), collections.Vars{
		AuthURL: root + "/" + c.tenant, BaseURL: root + "/api/v1", RootURL: root,
		ClientID: c.clientID, ClientSecret: c.clientSecret, Scope: c.scope,
	})
	if err != nil {
		return err
	}
	written, err := g.Write(c.dir)
	if err != nil {
		return fmt.Errorf("write the collections: %w", err)
	}
	for _, p := range written {
		fmt.Fprintln(e.stdout, p)
	}
	return nil
}
