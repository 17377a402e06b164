package journal

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// fakeStore records the batches a writer writes; while gate is set, each
// write waits for it first.
type fakeStore struct {
	mu      sync.Mutex
	batches [][]pendingEntry
	gate    chan struct{}
	err     error
}

func (f *fakeStore) write(batch []pendingEntry) error {
	if f.gate != nil {
		<-f.gate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.batches = append(f.batches, append([]pendingEntry(nil), batch...))
	return f.err
}

// The writer stores every entry, in order, in batches of at most
// maxAddBatch, and flush waits for all that were added before it.
func TestWriterStoresInOrder(t *testing.T) {
	f := &fakeStore{}
	w := newWriter(f.write)
	const n = 3*maxAddBatch + 7
	for i := range n {
		w.add(pendingEntry{size: int64(i + 1)})
	}
	w.flush(context.Background())
	var got []int64
	for _, b := range f.batches {
		if len(b) > maxAddBatch {
			t.Errorf("batch of %d entries, max %d", len(b), maxAddBatch)
		}
		for _, e := range b {
			got = append(got, e.size)
		}
	}
	if len(got) != n {
		t.Fatalf("%d entries written, want %d", len(got), n)
	}
	for i, size := range got {
		if size != int64(i+1) {
			t.Fatalf("entry %d written as %d: out of order", i, size)
		}
	}
}

// When Redis fails, the batch and everything queued behind it are
// dropped at once, so a flush (a read, a shutdown) waits for one failure,
// not one per batch.
func TestWriterDropsTheQueueOnFailure(t *testing.T) {
	f := &fakeStore{gate: make(chan struct{}), err: errors.New("redis down")}
	w := newWriter(f.write)
	w.add(pendingEntry{size: 1}) // taken by the writer, which waits at the gate
	for range 3 * maxAddBatch {
		w.add(pendingEntry{size: 1})
	}
	close(f.gate)
	w.flush(context.Background())
	if len(f.batches) != 1 {
		t.Errorf("%d writes after a failure, want 1: the queue behind it should go", len(f.batches))
	}
	if w.bytes != 0 {
		t.Errorf("%d bytes still counted after the drop", w.bytes)
	}
	f.err = nil
	w.add(pendingEntry{size: 5})
	w.flush(context.Background())
	if last := f.batches[len(f.batches)-1]; len(last) != 1 || last[0].size != 5 {
		t.Errorf("after Redis returned, wrote %v, want the one new entry", last)
	}
}

// Past maxQueuedBytes an Add waits for the writer instead of queuing more.
func TestWriterAddWaitsWhenTheQueueIsFull(t *testing.T) {
	f := &fakeStore{gate: make(chan struct{})}
	w := newWriter(f.write)
	half := int64(maxQueuedBytes / 2)
	w.add(pendingEntry{size: half}) // being written
	w.add(pendingEntry{size: half}) // queued: exactly full
	done := make(chan struct{})
	go func() {
		w.add(pendingEntry{size: 1})
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("an Add past the queue's bound returned while the writer was stuck")
	case <-time.After(50 * time.Millisecond):
	}
	close(f.gate)
	<-done
	w.flush(context.Background())
}
