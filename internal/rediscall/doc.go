// Package rediscall makes one Redis script call take effect once and reach
// the request it was made for, whatever go-redis retries and however Redis
// stalls or fails over.
//
// A script that takes effect once per call records its answer under a call
// key (CallID). go-redis sends a command again when its read timed out,
// while the first send may still run once Redis resumes; with the call key
// the second run answers what the first decided. go-redis also gives up in
// some cases (a new connection's handshake that times out is not retried; a
// master killed after running a script refuses every retry), so the caller
// sends the call again itself, under the same id, while a Budget lasts
// (Budget.Resend). The rule counts of scenarios and the rate-limit buckets
// both spend something per call, and both use this package.
//
// It is not a stable API: only the sandbox uses it.
package rediscall
