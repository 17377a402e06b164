package backend

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A command that ran is unconfirmed, never plainly failed, whether its
// WAIT counted too few replicas or its WAIT's own answer timed out on a
// loaded Redis (the clean-clone CI met the second: a rule decision the
// master made was answered 503, its count spent).
func TestCheckWaitUnconfirmed(t *testing.T) {
	h := waitHook{replicas: 1, timeout: 200 * time.Millisecond}
	for name, wait := range map[string]func(*redis.IntCmd){
		"too few replicas": func(w *redis.IntCmd) { w.SetVal(0) },
		"WAIT timed out":   func(w *redis.IntCmd) { w.SetErr(os.ErrDeadlineExceeded) },
		"WAIT refused":     func(w *redis.IntCmd) { w.SetErr(errors.New("connection reset by peer")) },
	} {
		cmd := redis.NewCmd(context.Background(), "evalsha", "x", 0)
		w := redis.NewIntCmd(context.Background(), "wait", 1, 200)
		wait(w)
		err := h.checkWait(cmd, w)
		var u interface{ Unconfirmed() bool }
		if !errors.As(err, &u) || !u.Unconfirmed() {
			t.Errorf("%s: %v, want an unconfirmed write", name, err)
		}
		if cmd.Err() == nil {
			t.Errorf("%s: the command's own error is not set", name)
		}
	}
	w := redis.NewIntCmd(context.Background(), "wait", 1, 200)
	w.SetVal(1)
	if err := h.checkWait(redis.NewCmd(context.Background(), "evalsha", "x", 0), w); err != nil {
		t.Errorf("enough replicas: %v", err)
	}
}
