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
