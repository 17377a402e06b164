package batch_test

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/internal/batch"
)

// Every caller gets its own result, and concurrent callers share batches.
func TestBatcher_CoalescesConcurrentCalls(t *testing.T) {
	var batches atomic.Int64
	release := make(chan struct{})
	b := batch.New(1000, func(items []int) ([]int, error) {
		if batches.Add(1) == 1 {
			<-release // hold the first batch so that the others queue up
		}
		out := make([]int, len(items))
		for i, v := range items {
			out[i] = v * 2
		}
		return out, nil
	})
	const callers = 200
	var wg sync.WaitGroup
	results := make([]int, callers)
	started := make(chan struct{}, callers)
	for i := range callers {
		wg.Go(func() {
			started <- struct{}{}
			r, err := b.Do(i)
			if err != nil {
				t.Errorf("Do(%d): %v", i, err)
			}
			results[i] = r
		})
	}
	for range callers {
		<-started
	}
	close(release)
	wg.Wait()
	for i, r := range results {
		if r != 2*i {
			t.Fatalf("Do(%d) = %d, want %d", i, r, 2*i)
		}
	}
	if n := batches.Load(); n >= callers {
		t.Errorf("%d callers ran %d batches: nothing was coalesced", callers, n)
	}
}

// A batch holds only items submitted before it started: a read batched
// this way sees every change made before its callers arrived.
func TestBatcher_BatchStartsAfterItsItems(t *testing.T) {
	var mu sync.Mutex
	var log []string
	b := batch.New(10, func(items []string) ([]struct{}, error) {
		mu.Lock()
		log = append(log, "run:"+string(rune('0'+len(items))))
		mu.Unlock()
		return make([]struct{}, len(items)), nil
	})
	if _, err := b.Do("a"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Do("b"); err != nil {
		t.Fatal(err)
	}
	if want := []string{"run:1", "run:1"}; !slices.Equal(log, want) {
		t.Errorf("sequential calls ran %v, want %v", log, want)
	}
}

// No batch is larger than the maximum.
func TestBatcher_RespectsMax(t *testing.T) {
	var largest atomic.Int64
	b := batch.New(3, func(items []int) ([]int, error) {
		for {
			cur := largest.Load()
			if int64(len(items)) <= cur || largest.CompareAndSwap(cur, int64(len(items))) {
				break
			}
		}
		return items, nil
	})
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			if r, err := b.Do(i); err != nil || r != i {
				t.Errorf("Do(%d) = %d, %v", i, r, err)
			}
		})
	}
	wg.Wait()
	if largest.Load() > 3 {
		t.Errorf("largest batch %d, max 3", largest.Load())
	}
}

// An error, a wrong result count or a panic reaches every caller of the
// batch; the batcher keeps working afterwards.
func TestBatcher_Failures(t *testing.T) {
	boom := errors.New("boom")
	for _, tt := range []struct {
		name string
		run  batch.Func[int, int]
		want string
	}{
		{"error", func([]int) ([]int, error) { return nil, boom }, "boom"},
		{"count", func([]int) ([]int, error) { return []int{}, nil }, "batch: 0 results for 1 items"},
		{"panic", func([]int) ([]int, error) { panic("bad") }, "batch: run panicked: bad"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fail := true
			b := batch.New(5, func(items []int) ([]int, error) {
				if fail {
					return tt.run(items)
				}
				return items, nil
			})
			if _, err := b.Do(1); err == nil || err.Error() != tt.want {
				t.Fatalf("Do: err %v, want %q", err, tt.want)
			}
			fail = false
			if r, err := b.Do(7); err != nil || r != 7 {
				t.Fatalf("Do after failure = %d, %v; want 7", r, err)
			}
		})
	}
}
