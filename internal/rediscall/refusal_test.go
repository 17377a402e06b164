package rediscall_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/rediscall"
)

// TestRefusal: an error reply Redis answered is a final refusal, worded
// in fixed words that never quote Redis's text, unless waiting may change
// it (go-redis's retried replies, BUSY, MOVED, NOSCRIPT and the like); a
// connection's failure, a timeout and an unconfirmed write are not
// answers, and are no refusal whatever they wrap.
func TestRefusal(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantReason string // "" when no refusal
	}{
		{"no error", nil, ""},
		{"OOM under maxmemory", errOOM, "out of memory (maxmemory reached, and its policy evicts nothing)"},
		{"OOM, wrapped", fmt.Errorf("spend from rate limit bucket c: %w", errOOM), "out of memory (maxmemory reached, and its policy evicts nothing)"},
		{"OOM after an unknown send", fmt.Errorf("%w: %w", rediscall.ErrUnconfirmed, errOOM), "out of memory (maxmemory reached, and its policy evicts nothing)"},
		{"MISCONF", replyErr("MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk."), "writes stopped: it failed to save its data to disk"},
		{"NOREPLICAS", replyErr("NOREPLICAS Not enough good replicas to write."), "writes stopped: too few replicas connected (min-replicas-to-write)"},
		{"NOPERM", replyErr("NOPERM User sandbox has no permissions to run the 'evalsha' command"), "not permitted for the sandbox's Redis user (ACL)"},
		{"a script's error", errScript, "an error reply"},
		{"another code", replyErr("WRONGTYPE Operation against a key holding the wrong kind of value"), "an error reply (WRONGTYPE)"},
		{"a code-like word holding data", replyErr("secret-value-123 trailing"), "an error reply"},
		{"READONLY (a failover)", replyErr("READONLY You can't write against a read only replica."), ""},
		{"LOADING", replyErr("LOADING Redis is loading the dataset in memory"), ""},
		{"CLUSTERDOWN", replyErr("CLUSTERDOWN The cluster is down"), ""},
		{"TRYAGAIN", replyErr("TRYAGAIN Multiple keys request during rehashing of slot"), ""},
		{"max clients", replyErr("ERR max number of clients reached"), ""},
		{"BUSY", replyErr("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."), ""},
		{"MASTERDOWN", replyErr("MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."), ""},
		{"MOVED", replyErr("MOVED 3999 127.0.0.1:6381"), ""},
		{"NOSCRIPT", replyErr("NOSCRIPT No matching script. Please use EVAL."), ""},
		{"a timeout", errTimeout, ""},
		{"a refused connection", errRefused, ""},
		{"plain text, not a reply", errors.New("OOM command not allowed"), ""},
		{"unconfirmed by replicas, wrapping a reply", fmt.Errorf("wait: %w", unconfirmedWrapping{errOOM}), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reason, ok := rediscall.Refusal(tc.err)
			if reason != tc.wantReason || ok != (tc.wantReason != "") || rediscall.Refused(tc.err) != ok {
				t.Errorf("Refusal(%v) = %q, %v; want %q", tc.err, reason, ok, tc.wantReason)
			}
			if tc.err != nil && ok && strings.Contains(tc.err.Error(), "script:") && strings.Contains(reason, "script:") {
				t.Errorf("Refusal(%v) quotes Redis: %q", tc.err, reason)
			}
		})
	}
}

// unconfirmedWrapping is a --redis-wait failure whose cause is a reply.
type unconfirmedWrapping struct{ cause error }

func (e unconfirmedWrapping) Error() string     { return "wait failed: " + e.cause.Error() }
func (e unconfirmedWrapping) Unwrap() error     { return e.cause }
func (e unconfirmedWrapping) Unconfirmed() bool { return true }
