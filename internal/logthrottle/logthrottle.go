// Package logthrottle keeps one caller from flooding the log: a line about
// a caller is written at most once per interval, and the next line written
// says how many were held back. Logs are read in real time, so the throttle
// runs on real time (the sandbox clock, which QA moves, would not do).
package logthrottle

import (
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// MaxKeys bounds the callers tracked at once. Beyond it, callers share one
// slot (Others), so a caller who makes up sources cannot grow the map.
const MaxKeys = 10000

// Others is the key every caller shares once MaxKeys are tracked.
const Others = "(others)"

// Throttle allows one line per key per interval. Safe for concurrent use.
type Throttle struct {
	every time.Duration
	now   func() time.Time

	mu        sync.Mutex
	slots     map[string]*slot
	lastPrune time.Time
}

// slot is one key's limiter and the lines it held back.
type slot struct {
	limiter    *rate.Limiter
	suppressed int
	last       time.Time // when a line was last let through
}

// New returns a Throttle letting one line per key through every interval;
// now is the time source (time.Now outside tests).
func New(every time.Duration, now func() time.Time) *Throttle {
	return &Throttle{every: every, now: now, slots: make(map[string]*slot)}
}

// Allow reports whether a line about key may be written now and, when it
// may, how many lines about key were held back since the last one.
func (t *Throttle) Allow(key string) (ok bool, suppressed int) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.slotLocked(key, now)
	if !s.limiter.AllowN(now, 1) {
		s.suppressed++
		return false, 0
	}
	n := s.suppressed
	s.suppressed, s.last = 0, now
	return true, n
}

// slotLocked finds or makes key's slot; t.mu is held.
func (t *Throttle) slotLocked(key string, now time.Time) *slot {
	if s, ok := t.slots[key]; ok {
		return s
	}
	if len(t.slots) >= MaxKeys {
		t.pruneLocked(now)
	}
	if len(t.slots) >= MaxKeys {
		key = Others
		if s, ok := t.slots[key]; ok {
			return s
		}
	}
	s := &slot{limiter: rate.NewLimiter(rate.Every(t.every), 1)}
	t.slots[key] = s
	return s
}

// pruneLocked forgets the slots that hold nothing back and whose last line
// is an interval old (their limiter is full again, so forgetting them
// changes nothing). It runs at most once per interval, so a full map costs
// one walk per interval, not one per line.
func (t *Throttle) pruneLocked(now time.Time) {
	if now.Sub(t.lastPrune) < t.every {
		return
	}
	t.lastPrune = now
	for key, s := range t.slots {
		if s.suppressed == 0 && now.Sub(s.last) >= t.every {
			delete(t.slots, key)
		}
	}
}

// Source is the key of a caller the sandbox has not verified: the address
// the request came from, without its port.
func Source(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
