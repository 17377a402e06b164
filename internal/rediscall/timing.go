package rediscall

import (
	"time"

	"github.com/redis/go-redis/v9"
)

// Options are the timeouts and retries go-redis applies to one command of
// rdb. A cluster client sends a command up to MaxRedirects+1 times
// (redirections and transient errors), each time through a node client
// that retries MaxRetries times itself, so its attempts multiply.
func Options(rdb redis.UniversalClient) *redis.Options {
	switch c := rdb.(type) {
	case *redis.Client:
		return c.Options()
	case *redis.ClusterClient:
		o := c.Options()
		return &redis.Options{
			MaxRetries:      (max(o.MaxRetries, 0)+1)*(max(o.MaxRedirects, 0)+1) - 1,
			ReadTimeout:     o.ReadTimeout,
			WriteTimeout:    o.WriteTimeout,
			MaxRetryBackoff: o.MaxRetryBackoff,
		}
	default:
		// Unknown clients (a ring, a failover client): assume go-redis's
		// defaults, three retries of three-second timeouts.
		return &redis.Options{MaxRetries: 3, ReadTimeout: 3 * time.Second, WriteTimeout: 3 * time.Second, MaxRetryBackoff: 512 * time.Millisecond}
	}
}

// retryWindow is how long go-redis may go on with one command: every
// attempt waiting for its write and read timeouts, with backoff between
// them. A timeout of 0 (none; Options has its defaults filled in) counts as
// a minute.
func retryWindow(o *redis.Options) time.Duration {
	timeout := func(d time.Duration) time.Duration {
		if d <= 0 {
			return time.Minute
		}
		return d
	}
	attempts := time.Duration(max(o.MaxRetries, 0) + 1)
	return attempts * (timeout(o.ReadTimeout) + timeout(o.WriteTimeout) + max(o.MaxRetryBackoff, 0))
}

// StallBudget is how long a request rides out a stall (see Budget): as long
// as go-redis itself waits for an answer to one command, all its attempts'
// read timeouts, so a pause a few times longer than the timeout, which
// go-redis alone may give up on, still ends in the answer made.
func StallBudget(o *redis.Options) time.Duration {
	if o.ReadTimeout <= 0 {
		return 0 // no timeout: go-redis waits for the answer itself
	}
	return time.Duration(max(o.MaxRetries, 0)+1) * o.ReadTimeout
}

// CallTTL is how long an answer is kept for repeats of its call: past the
// last moment a request may send it again (StallBudget) and the whole of
// go-redis's retries of that last send, with a margin, so a repeat never
// comes after the record is gone.
func CallTTL(o *redis.Options) time.Duration {
	return StallBudget(o) + retryWindow(o) + 10*time.Second
}
