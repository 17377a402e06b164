package store

import (
	"errors"
	"fmt"
	"testing"
)

// replyError is an error reply as go-redis returns one.
type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}

// A Redis that cannot serve now (loading after a restart, out of memory, a
// demoted master) makes the call unavailable, a 503; an error of the
// script's own stays what it is, a 500 with its trace id.
func TestUnreachableTellsServerStatesFromScriptErrors(t *testing.T) {
	for _, tc := range []struct {
		reply       string
		unavailable bool
	}{
		{"LOADING Redis is loading the dataset in memory", true},
		{"OOM command not allowed when used memory > 'maxmemory'. script: cb2c, on @user_script:53.", true},
		{"BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSCRIPT.", true},
		{"MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.", true},
		{"READONLY You can't write against a read only replica.", true},
		{"TRYAGAIN Multiple keys request during rehashing of slot", true},
		{"CLUSTERDOWN The cluster is down", true},
		{"NOREPLICAS Not enough good replicas to write.", true},
		{"MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk.", true},
		// TestFaultsCluster: a GET's audit append WAITed on a master that
		// a failover demoted, and answered 500.
		{"UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)", true},
		// TestFailoverLossWindow: a create to the shard of a client's
		// slot, during its failover, after go-redis's redirections ran out.
		{"MOVED 614 127.0.0.1:35627", true},
		{"ASK 614 127.0.0.1:35627", true},
		{"ERR Error running script (call to f_cb2c): @user_script:12: attempt to compare nil with number", false},
		{"BUSYKEY Target key name already exists.", false},
		{"WRONGTYPE Operation against a key holding the wrong kind of value", false},
	} {
		err := unreachable(fmt.Errorf("run: %w", replyError(tc.reply)))
		if got := errors.Is(err, ErrUnavailable); got != tc.unavailable {
			t.Errorf("%q: unavailable %v, want %v", tc.reply, got, tc.unavailable)
		}
	}
}
