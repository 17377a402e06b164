// Package scenarios is the sandbox's failure-scenario engine. QA and CI use it
// to make the sandbox answer the way the real service does when things go
// wrong: forced statuses and token errors, added latency, and broken
// connections.
//
// A Rule says which requests it matches (method, path, client, endpoint
// kind), what it does to them (a forced status or token error, a delay, a
// connection fault) and how often (times, after, probability). An Engine
// holds the active rules and, for each request, decides what happens; it does
// not render anything. MemoryEngine keeps them in the process, RedisEngine in
// Redis for replicas to share; the suite in scenarios/rulestest pins that
// both behave alike. The files say which: memory*.go, redis*.go, and the
// match index both use in index.go. The server turns a Decision into the real HTTP answer
// (problem+json or an Entra error body), and ApplyFault breaks the
// connection for the fault kinds.
//
// Evaluation is deliberately simple: active rules are tried in insertion
// order and the first rule that matches the request AND fires wins; nothing
// is combined. A rule that matches but does not fire (its "after" count is
// not reached yet, its probability draw missed, or its per-client "times" is
// used up) lets evaluation continue with the next rule. So a delay-only rule
// placed before a status rule hides that status rule for the requests it
// fires on; put delay and status in one rule when both are wanted.
//
// Named scenarios are JSON files ({"name","description","rules":[...]})
// embedded in the binary (see the library directory) plus any a team adds
// with Library.AddDir, plus those saved at run time (Library.Save), kept
// in a SavedStore: MemorySaved, or RedisSaved for replicas to share (the
// suite in scenarios/savedtest pins that both behave alike). Activating a
// scenario copies its rules into the active set, tagged with the scenario
// name.
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package scenarios
