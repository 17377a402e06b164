package contractdoc

import (
	"fmt"
	"sync"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi"
)

// Builtin is the built-in document as a contract: the shapes the sandbox
// speaks without --contract. It is loaded once; a Contract is never
// modified after Load, so sharing it is safe.
var Builtin = sync.OnceValues(func() (*Contract, error) {
	c, err := Load(openapi.Document())
	if err != nil {
		return nil, fmt.Errorf("the built-in document as a contract: %w", err)
	}
	return c, nil
})

// TakesOver reports whether the contract describes the operation with
// schemas that differ from the built-in document's, and returns it. An
// operation the contract describes just as the built-in document does keeps
// the built-in handling, which also enforces the rules no schema states
// (dates not in the future, trials that accept referrals, the built-in
// messages): so the built-in document supplied with --contract answers byte
// for byte as the default run.
func (c *Contract) TakesOver(o Operation) *Op {
	op := c.Op(o)
	if op == nil {
		return nil
	}
	if b, err := Builtin(); err == nil && op.SameSchemas(b.Op(o)) {
		return nil
	}
	return op
}
