// Package batch coalesces concurrent calls into one round trip (group
// commit). A caller's item joins the next batch; one goroutine at a time
// runs a batch, so a batch is always started after every item in it was
// submitted. That makes it safe for reads that must see every change made
// before the caller arrived, and for writes the caller waits to be stored.
//
// Under load, N concurrent requests cost about one round trip instead of N;
// a lone request pays one round trip, as without batching.
package batch

import "sync"

// Func runs one batch: it returns one result for each item, in order, or an
// error that every caller in the batch receives.
type Func[T, R any] func(items []T) ([]R, error)

// Batcher coalesces calls of Do into batches of at most maxItems items, each
// run by one call of run, one batch at a time. The zero value is not
// usable; use New.
type Batcher[T, R any] struct {
	run      Func[T, R]
	maxItems int

	mu      sync.Mutex
	pending []*call[T, R]
	running bool // a goroutine is running batches
}

// call is one Do waiting for its batch.
type call[T, R any] struct {
	item   T
	result R
	err    error
	done   chan struct{}
}

// New returns a Batcher running batches of at most maxItems items with run.
func New[T, R any](maxItems int, run Func[T, R]) *Batcher[T, R] {
	return &Batcher[T, R]{run: run, maxItems: max(maxItems, 1)}
}

// Do submits item, waits until a batch holding it has run, and returns its
// result. A caller that finds no batch running becomes the runner: it runs
// batches until its own has run.
func (b *Batcher[T, R]) Do(item T) (R, error) {
	c := &call[T, R]{item: item, done: make(chan struct{})}
	b.mu.Lock()
	b.pending = append(b.pending, c)
	lead := !b.running
	b.running = true
	b.mu.Unlock()
	if lead {
		b.drain(c)
	}
	<-c.done
	return c.result, c.err
}

// drain runs batches until none is pending. A caller leading (own set)
// stops once its own batch has run and hands what is still pending to a
// new goroutine, so that under constant load no request waits for others.
func (b *Batcher[T, R]) drain(own *call[T, R]) {
	for {
		b.mu.Lock()
		n := min(len(b.pending), b.maxItems)
		if n == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		calls := b.pending[:n:n]
		b.pending = b.pending[n:]
		b.mu.Unlock()
		b.runOne(calls)
		if own == nil || !isDone(own.done) {
			continue
		}
		b.mu.Lock()
		if len(b.pending) == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		go b.drain(nil) // counted as running: ends when nothing is pending
		return
	}
}

// isDone reports whether ch is closed.
func isDone(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// runOne runs one batch and wakes its callers.
func (b *Batcher[T, R]) runOne(calls []*call[T, R]) {
	items := make([]T, len(calls))
	for i, c := range calls {
		items[i] = c.item
	}
	results, err := b.safeRun(items)
	if err == nil && len(results) != len(calls) {
		err = errWrongCount{want: len(calls), got: len(results)}
	}
	for i, c := range calls {
		if err != nil {
			c.err = err
		} else {
			c.result = results[i]
		}
		close(c.done)
	}
}

// safeRun runs a batch, turning a panic into every caller's error so that
// no caller waits for ever.
func (b *Batcher[T, R]) safeRun(items []T) (results []R, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = errPanic{value: p}
		}
	}()
	return b.run(items)
}
