package rediscall

import (
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"
)

// transientReplies start the error replies that say Redis cannot serve
// the command yet, where waiting may help: go-redis retries some of them
// (retriedTexts: loading, a demoted master, a cluster electing or
// resharding, no client slot), and the others pass once a script ends
// (BUSY), a replica's link is back (MASTERDOWN), a slot settles (MOVED,
// ASK) or a failover ends (UNBLOCKED). NOSCRIPT is handled by go-redis's
// Script.Run (it sends the script itself) and is never the end of a call.
var transientReplies = append([]string{"BUSY ", "MASTERDOWN ", "MOVED ", "ASK ", "UNBLOCKED ", "NOSCRIPT "}, retriedTexts...)

// refusalReasons word the final refusals the sandbox meets, by the error
// code that starts Redis's reply. The wording is fixed: Redis's own text
// may quote a script or a command's arguments, which are never repeated.
var refusalReasons = []struct{ code, reason string }{
	{"OOM ", "out of memory (maxmemory reached, and its policy evicts nothing)"},
	{"MISCONF ", "writes stopped: it failed to save its data to disk"},
	{"NOREPLICAS ", "writes stopped: too few replicas connected (min-replicas-to-write)"},
	{"NOPERM ", "not permitted for the sandbox's Redis user (ACL)"},
	{"NOAUTH ", "the sandbox's Redis connection is not authenticated"},
	{"WRONGPASS ", "the sandbox's Redis credentials were refused"},
}

// Refusal reports whether err holds an error reply Redis answered that is
// final: Redis decided, and sending the command again within a request's
// budget would meet the same answer (out of memory under maxmemory with
// noeviction, say, or an error of the script itself). Such a call fails at
// once instead of riding out a stall (Budget.Resend). reason says what
// Redis refused, in fixed words safe for a log or an answer, never
// Redis's own text.
//
// A reply that may pass if waited for (transientReplies) is no refusal,
// nor is an error whose write is unconfirmed (Unconfirmed: --redis-wait),
// whatever it wraps. A refusal proves only that the command it answered
// did not take effect: whether an earlier send of the same write did is
// another matter (MarkUnconfirmed, Budget.Resend).
func Refusal(err error) (reason string, ok bool) {
	var reply redis.Error
	if err == nil || Unconfirmed(err) || !errors.As(err, &reply) {
		return "", false
	}
	text := reply.Error()
	for _, prefix := range transientReplies {
		if strings.HasPrefix(text, prefix) {
			return "", false
		}
	}
	for _, r := range refusalReasons {
		if strings.HasPrefix(text, r.code) {
			return r.reason, true
		}
	}
	if code, _, _ := strings.Cut(text, " "); isErrorCode(code) && code != "ERR" {
		return "an error reply (" + code + ")", true
	}
	return "an error reply", true
}

// Refused reports whether err is a final refusal (see Refusal).
func Refused(err error) bool {
	_, ok := Refusal(err)
	return ok
}

// isErrorCode reports whether s reads as the code that starts a Redis
// error reply (WRONGTYPE, EXECABORT): a few capital letters, nothing of a
// caller's data.
func isErrorCode(s string) bool {
	if len(s) == 0 || len(s) > 16 {
		return false
	}
	for _, c := range s {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}
