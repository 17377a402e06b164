// Package referrals is the sandbox's domain: the trial-based and qualified
// referrals partners submit, the qualified referrals' audit trail, the
// patients both carry, the trials they are submitted to, the OAuth clients
// that submit them and those clients' secrets, and the lifecycle of a
// referral's status. The fixture files, the store and the API all use these
// types, so one thing has one name, in Go and in JSON.
//
// It imports nothing of the sandbox: loading and generating records is
// package fixtures, keeping them is package store.
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package referrals
