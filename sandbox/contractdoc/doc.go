// Package contractdoc loads an OpenAPI document supplied with --contract and
// answers what the sandbox needs from it: which of the six referral
// operations it describes, the schema a submission is validated against, the
// schema a record is read back in, and which members of that schema the
// sandbox owns (submittedAt, status, outcomesId, ...).
//
// A document is checked whole when it is loaded: every schema construct the
// validator would not honour (not, anyOf, discriminator, unknown formats,
// external or recursive references, unknown x-sandbox values) refuses the
// document with the JSON Pointer of the construct, so nothing in a contract
// is silently ignored.
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package contractdoc
