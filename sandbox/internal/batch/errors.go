package batch

import "fmt"

// errWrongCount is a Func that returned a result count other than its
// item count: a bug in the Func, reported to every caller of the batch.
type errWrongCount struct{ want, got int }

func (e errWrongCount) Error() string {
	return fmt.Sprintf("batch: %d results for %d items", e.got, e.want)
}

// errPanic is a Func that panicked.
type errPanic struct{ value any }

func (e errPanic) Error() string { return fmt.Sprintf("batch: run panicked: %v", e.value) }
