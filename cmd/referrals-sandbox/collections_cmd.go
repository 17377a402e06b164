package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/brianvoe/gofakeit/v7"

	"github.com/referrals-sandbox/referrals-sandbox/collections"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/contractdoc"
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
			"The flags are the variables' values. With --url, the document is the one that sandbox serves (a --contract's); without, the built-in one.",
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

func runCollections(ctx context.Context, e env, args []string) error {
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
	// A sandbox named with --url may serve a contract's document
	// (serve --contract): the collections are of the API it serves.
	document := openapi.Document()
	if urlGiven(o, e.getenv) {
		var err error
		if document, err = servedDocument(ctx, root); err != nil {
			return err
		}
	}
	g, err := collections.Generate(document, collections.Vars{
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

// maxServedDocumentBytes bounds the document collections reads from a
// sandbox: a contract (at most 8 MiB) with the sandbox's additions.
const maxServedDocumentBytes = 16 << 20

// urlGiven reports whether --url was set, on the command line or by its
// environment variable.
func urlGiven(o *options, getenv func(string) string) bool {
	given := getenv(o.envOf("url")) != ""
	o.fs.Visit(func(f *flag.Flag) { given = given || f.Name == "url" })
	return given
}

// servedDocument fetches the OpenAPI document the sandbox at root serves,
// with paths written under a servers URL ending in /api/v1 (as a contract
// may write them) moved under /api/v1, where the collections expect the
// API's paths.
func servedDocument(ctx context.Context, root string) ([]byte, error) {
	url := root + "/api/v1/openapi.json"
	ctx, cancel := context.WithTimeout(ctx, defaultClientTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: --url: %v", errUsage, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch the document the sandbox serves: %w (is a sandbox running at --url? without --url, the collections are of the built-in document)", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxServedDocumentBytes+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", url, err)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("GET %s: status %d (is --url a sandbox?)", url, resp.StatusCode)
	case len(body) > maxServedDocumentBytes:
		return nil, fmt.Errorf("GET %s: the document is larger than %d bytes", url, maxServedDocumentBytes)
	}
	if body, err = pathsUnderBase(body); err != nil {
		return nil, err
	}
	return withSubmissionExamples(ctx, body)
}

// exampleTrialID is the trial a drawn submission names: the built-in
// document's example, which the embedded fixtures accept referrals for.
const exampleTrialID = "TRIAL-CARDIO-001"

// withSubmissionExamples gives each submission a contract describes
// without an example one drawn from its request schema, as fixtures
// generate --contract draws them: the collections send each operation's
// example body.
func withSubmissionExamples(ctx context.Context, doc []byte) ([]byte, error) {
	c, err := contractdoc.LoadContext(ctx, doc)
	if err != nil {
		return nil, fmt.Errorf("the sandbox's document: %w", err)
	}
	d, err := decodeDocument(doc)
	if err != nil {
		return nil, err
	}
	faker := gofakeit.New(1) // seeded: the same document, the same collections
	changed := false
	for _, o := range []contractdoc.Operation{contractdoc.CreateReferral, contractdoc.CreateQualified} {
		op := c.Op(o)
		if op == nil || op.Request == nil || op.Request.Example != nil {
			continue
		}
		paths, _ := d["paths"].(map[string]any)
		item, _ := paths[op.Path].(map[string]any)
		operation, _ := item[strings.ToLower(op.Method)].(map[string]any)
		body, _ := operation["requestBody"].(map[string]any)
		content, _ := body["content"].(map[string]any)
		media, _ := content["application/json"].(map[string]any)
		if media == nil || media["example"] != nil {
			continue // none, or one already (a requestBody $ref: the built-in document's)
		}
		example, err := op.Example(faker, map[contractdoc.Member]string{contractdoc.TrialID: exampleTrialID, contractdoc.ExternalSourceID: "collections-example"})
		if err != nil {
			return nil, fmt.Errorf("the sandbox's document: %w", err)
		}
		media["example"] = json.RawMessage(example)
		changed = true
	}
	if !changed {
		return doc, nil
	}
	return json.Marshal(d)
}

// pathsUnderBase rewrites a document whose servers URL ends in /api/v1 to
// write its paths from the root, as the built-in document does; a path
// item with servers of its own (the sandbox's root operations) is kept.
func pathsUnderBase(doc []byte) ([]byte, error) {
	d, err := decodeDocument(doc)
	if err != nil {
		return nil, err
	}
	servers, _ := d["servers"].([]any)
	first, _ := firstOf(servers).(map[string]any)
	base, _ := first["url"].(string)
	if !strings.HasSuffix(strings.TrimRight(base, "/"), "/api/v1") {
		return doc, nil
	}
	paths, _ := d["paths"].(map[string]any)
	moved := make(map[string]any, len(paths))
	for p, item := range paths {
		if o, _ := item.(map[string]any); o["servers"] != nil {
			delete(o, "servers")
			moved[p] = item
			continue
		}
		moved["/api/v1"+p] = item
	}
	d["paths"] = moved
	return json.Marshal(d)
}

// decodeDocument decodes the document the sandbox serves, its numbers
// kept as written so that encoding it again changes none of them.
func decodeDocument(doc []byte) (map[string]any, error) {
	var d map[string]any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("the sandbox's document is not JSON: %w", err)
	}
	return d, nil
}

func firstOf(list []any) any {
	if len(list) == 0 {
		return nil
	}
	return list[0]
}
