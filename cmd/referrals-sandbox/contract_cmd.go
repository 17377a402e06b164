package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/contractdoc"
)

func runContract(ctx context.Context, e env, args []string) error {
	var action, file string
	o := newOptions("contract",
		"contract check FILE: check an OpenAPI document for --contract and print which referral operations it takes over "+
			"and which sandbox-owned members its response schemas hold. Exit 1 when the document would be refused at start.",
		e.getenv, e.stdout)
	o.Arg(&action, "ACTION")
	o.Arg(&file, "FILE")
	if err := o.parse(args); err != nil {
		return err
	}
	if action != "check" || file == "" {
		return fmt.Errorf("%w: usage: contract check FILE", errUsage)
	}
	c, err := contractdoc.LoadFileContext(ctx, file)
	if err != nil {
		return err
	}
	printContract(e.stdout, file, c)
	return nil
}

// printContract lists, per referral operation, what the contract does with
// it, then the sandbox-owned members each response schema holds.
func printContract(w io.Writer, file string, c *contractdoc.Contract) {
	fmt.Fprintf(w, "%s: a valid contract\n", file)
	if c.TranslatedFrom31() {
		fmt.Fprintln(w, "OpenAPI 3.1: checked, shaped and served as its OpenAPI 3.0 translation (same constraints)")
	}
	fmt.Fprint(w, "\noperations:\n")
	for _, name := range contractdoc.Operations() {
		op := c.Op(name)
		switch {
		case op == nil:
			fmt.Fprintf(w, "  %-16s not described: built-in shapes\n", name)
		case c.TakesOver(name) == nil:
			fmt.Fprintf(w, "  %-16s %s %s: same schemas as the built-in document: built-in handling\n", name, op.Method, op.Path)
		default:
			fmt.Fprintf(w, "  %-16s %s %s: taken over\n", name, op.Method, op.Path)
		}
	}
	fmt.Fprintf(w, "\nsandbox-owned members (response member <- sandbox member):\n")
	for _, name := range contractdoc.Operations() {
		op := c.Op(name)
		if op == nil || op.Response == nil {
			continue
		}
		fmt.Fprintf(w, "  %-16s %s\n", name, owned(op.Response))
		if op.Item != nil {
			fmt.Fprintf(w, "  %-16s %s[]: %s\n", "", op.Items, owned(op.Item))
		}
	}
}

func owned(s *contractdoc.Shape) string {
	var parts []string
	for name, m := range s.Members() {
		if name == string(m) {
			parts = append(parts, name)
		} else {
			parts = append(parts, fmt.Sprintf("%s <- %s (x-sandbox)", name, m))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
