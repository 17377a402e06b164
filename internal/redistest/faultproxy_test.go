package redistest

import (
	"context"
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestFaultProxy fails the second command each way and checks what the
// client and Redis see.
func TestFaultProxy(t *testing.T) {
	s := Start(t)
	p := NewFaultProxy(t, s)
	direct := s.NewClient(t)
	ctx := context.Background()
	for _, tc := range []struct {
		fault Fault
		ran   bool
	}{{Drop, false}, {ErrorReply, false}, {LoseReply, true}} {
		rdb := redis.NewClient(&redis.Options{Addr: p.Addr, MaxRetries: -1})
		if err := rdb.Ping(ctx).Err(); err != nil { // the connection's handshake is done
			t.Fatal(err)
		}
		p.Arm(2, tc.fault)
		if err := rdb.Set(ctx, "k", "before", 0).Err(); err != nil {
			t.Fatalf("fault %d: first command: %v", tc.fault, err)
		}
		err := rdb.Set(ctx, "k", "after", 0).Err()
		var reply redis.Error
		if err == nil || (tc.fault == ErrorReply) != errors.As(err, &reply) {
			t.Errorf("fault %d: failed command answered %v", tc.fault, err)
		}
		if tc.fault == ErrorReply && !redis.HasErrorPrefix(err, "OOM") {
			t.Errorf("error answered %v, want OOM: a server state go-redis does not retry", err)
		}
		got, _ := direct.Get(ctx, "k").Result()
		if ran := got == "after"; ran != tc.ran || !p.Fired() {
			t.Errorf("fault %d: the command ran: %v, want %v", tc.fault, ran, tc.ran)
		}
		if seen := p.Seen(); len(seen) != 2 || seen[1] != "SET" {
			t.Errorf("fault %d: seen %v", tc.fault, seen)
		}
		_ = rdb.Close()
	}
}

// TestFaultProxyErrorNeverLeavesATransactionOpen: an error answered in
// place of MULTI or EXEC would leave what Redis never leaves, a connection
// still inside MULTI (or a transaction's commands run one by one); go-redis
// returns that connection to its pool, and the next command on it, of
// another call, gets QUEUED for an answer. The proxy closes the connection
// instead, as a failure there would.
func TestFaultProxyErrorNeverLeavesATransactionOpen(t *testing.T) {
	s := Start(t)
	p := NewFaultProxy(t, s)
	direct := s.NewClient(t)
	ctx := context.Background()
	for _, at := range []string{"MULTI", "EXEC"} {
		rdb := redis.NewClient(&redis.Options{Addr: p.Addr, MaxRetries: -1, PoolSize: 1})
		if err := rdb.Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		p.ArmMatching(func(cmd []string) bool { return cmd[0] == at }, 1, ErrorReply)
		_, err := rdb.TxPipelined(ctx, func(tx redis.Pipeliner) error {
			tx.Set(ctx, "tx", at, 0)
			return nil
		})
		if err == nil || !p.Fired() {
			t.Errorf("error at %s: the transaction answered %v (fired %v)", at, err, p.Fired())
		}
		if got, _ := direct.Get(ctx, "tx").Result(); got == at {
			t.Errorf("error at %s: the transaction's command ran", at)
		}
		if got, err := rdb.Incr(ctx, "after-"+at).Result(); err != nil || got != 1 {
			t.Errorf("error at %s: the next command on the pool answered %d, %v", at, got, err)
		}
		_ = rdb.Close()
	}
}

// TestFaultProxyErrorInATransactionAbortsIt: a command of a MULTI answered
// with an error is refused as Redis refuses a write for memory while
// queuing it, so EXEC aborts the whole transaction: none of its other
// commands runs.
func TestFaultProxyErrorInATransactionAbortsIt(t *testing.T) {
	s := Start(t)
	p := NewFaultProxy(t, s)
	direct := s.NewClient(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: p.Addr, MaxRetries: -1, PoolSize: 1})
	t.Cleanup(func() { _ = rdb.Close() })
	p.ArmMatching(func(cmd []string) bool { return cmd[0] == "INCR" }, 1, ErrorReply)
	_, err := rdb.TxPipelined(ctx, func(tx redis.Pipeliner) error {
		tx.Set(ctx, "queued-before", "1", 0)
		tx.Incr(ctx, "refused")
		tx.Set(ctx, "queued-after", "1", 0)
		return nil
	})
	if err == nil || !p.Fired() {
		t.Fatalf("transaction with a refused command answered %v (fired %v)", err, p.Fired())
	}
	if n, err := direct.Exists(ctx, "queued-before", "refused", "queued-after").Result(); err != nil || n != 0 {
		t.Errorf("%d of the aborted transaction's keys exist (%v), want none", n, err)
	}
}
