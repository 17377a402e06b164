package journal

import (
	"context"
	"sync"
)

// maxAddBatch bounds how many entries one script call appends; each entry
// is bounded in bytes (truncate), so a call is too.
const maxAddBatch = 256

// maxQueuedBytes bounds the entries waiting for Redis, by their Size: past
// it, Add waits for the writer (backpressure) instead of growing memory.
const maxQueuedBytes = 8 << 20

// pendingEntry is one entry on its way into the stream.
type pendingEntry struct {
	size     int64
	clientID string
	json     []byte
}

// writer appends a replica's journal entries to the shared stream in the
// background, many per script call. A request's entry is journaled after
// its answer is complete, so queuing it costs the client nothing, and the
// fsync Redis makes for every write (appendfsync always) is paid once per
// batch instead of once per request. Every read, Clear and ClearClient
// waits for the queue first (flush), so within a replica the journal reads
// exactly as if each Add had been written at once.
type writer struct {
	write func([]pendingEntry) error

	mu   sync.Mutex
	cond *sync.Cond // broadcast when written grows or room frees
	// queue waits for the writer; bytes counts it and the batch being
	// written, by Size.
	queue []pendingEntry
	bytes int64
	// enqueued and written count entries ever added and ever done with
	// (stored, or dropped when Redis failed).
	enqueued, written uint64
	running           bool
	// failed is why the last batch was dropped, and failedUpTo the written
	// count once it was: a flush waiting for an entry at or below it
	// reports the failure.
	failed     error
	failedUpTo uint64
}

// newWriter returns a writer storing batches with write.
func newWriter(write func([]pendingEntry) error) *writer {
	w := &writer{write: write}
	w.cond = sync.NewCond(&w.mu)
	return w
}

// add queues e, waiting while the queue is full, and starts the background
// writer if it is not running. The writer goroutine exits when the queue
// is empty, so an idle sandbox runs none.
func (w *writer) add(e pendingEntry) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.bytes > 0 && w.bytes+e.size > maxQueuedBytes {
		w.cond.Wait()
	}
	w.queue = append(w.queue, e)
	w.bytes += e.size
	w.enqueued++
	if !w.running {
		w.running = true
		go w.run()
	}
}

// run writes batches until the queue is empty.
func (w *writer) run() {
	w.mu.Lock()
	for len(w.queue) > 0 {
		n := min(len(w.queue), maxAddBatch)
		batch := w.queue[:n:n]
		w.queue = w.queue[n:]
		w.mu.Unlock()
		err := w.write(batch)
		w.mu.Lock()
		if err != nil {
			// A failed batch is dropped, as a failed Add always was: the
			// request has been answered, and Redis being down is reported
			// by the health check and the 503s of the requests that
			// follow. What is queued behind it goes too, so that a flush
			// (a read, a shutdown) waits for one timeout, not one per batch.
			batch, w.queue = append(batch, w.queue...), nil
			n = len(batch)
			w.failed, w.failedUpTo = err, w.written+uint64(n)
		}
		for _, e := range batch {
			w.bytes -= e.size
		}
		w.written += uint64(n)
		w.cond.Broadcast()
	}
	w.queue = nil // let the backing array go
	w.running = false
	w.mu.Unlock()
}

// flush returns once every entry added before the call is done with, and
// the error of the batch that dropped one of the entries it waited for. ctx
// is not watched: the wait is bounded by the Redis client's timeouts.
func (w *writer) flush(context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	from, target := w.written, w.enqueued
	for w.written < target {
		w.cond.Wait()
	}
	if w.failed != nil && w.failedUpTo > from {
		return w.failed
	}
	return nil
}
