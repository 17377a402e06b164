package conformance

import (
	"fmt"
	"sort"
	"time"
)

// checkHonoursRetryAfter finds requests that started after a Retry-After
// response was answered but before the delay it asked for had passed. Only
// requests that started once the answer had ended, to the journal's
// precision, are judged: one that started earlier, even a microsecond
// before the end of a sub-millisecond answer (a token request just before
// the call that got a 503, say), was sent before the client could have
// read the answer.
func checkHonoursRetryAfter(calls []call, _ Options) Check {
	// By start time, so each response's early requests are one search away
	// rather than a scan of the rest of the journal.
	var byStart []*call
	for i := range calls {
		if calls[i].timed {
			byStart = append(byStart, &calls[i])
		}
	}
	sort.SliceStable(byStart, func(i, j int) bool { return byStart[i].start.Before(byStart[j].start) })
	var early []string
	asked, violated := 0, 0
	for _, c := range byStart {
		if c.RetryAfterSeconds <= 0 {
			continue
		}
		asked++
		answered := c.end.Add(-journalPrecision)
		due := c.end.Add(time.Duration(c.RetryAfterSeconds)*time.Second - retryAfterTolerance)
		from := sort.Search(len(byStart), func(i int) bool { return !byStart[i].start.Before(answered) })
		broke := false
		for _, n := range byStart[from:] {
			if !n.start.Before(due) {
				break
			}
			if n.ID == c.ID {
				continue
			}
			if !broke {
				broke = true
				violated++
				early = append(early, c.ref())
			}
			early = append(early, n.ref())
		}
	}
	early = unique(early)
	switch {
	case asked == 0:
		return Check{Result: NotExercised, Explanation: "no response asked the client to wait (no 429 or 503 with Retry-After)"}
	case violated > 0:
		return Check{Result: Fail, Evidence: early,
			Explanation: fmt.Sprintf("after %d of %s with Retry-After the client sent its next request too early", violated, plural(asked, "response"))}
	}
	return Check{Result: Pass, Explanation: fmt.Sprintf("the client waited at least Retry-After after all %s that asked it to", plural(asked, "response"))}
}

// run is a stretch of consecutive failed attempts, and the waits before
// each retry that followed.
type run struct {
	attempts []*call
	// next is the attempt after the run (a success), nil if the client
	// stopped.
	next *call
	// waits are the judged gaps between an answer and the next attempt;
	// those after a Retry-After are the server's and left out.
	waits []time.Duration
}

// failureRuns splits the client's token, API and ping requests into runs
// of consecutive failures.
func failureRuns(calls []call) []run {
	var seq []*call
	for i := range calls {
		if c := &calls[i]; (c.isToken() || c.usesToken()) && c.timed {
			seq = append(seq, c)
		}
	}
	var runs []run
	for i := 0; i < len(seq); {
		if !seq[i].failed() {
			i++
			continue
		}
		start := i
		for i < len(seq) && seq[i].failed() {
			i++
		}
		r := run{attempts: seq[start:i]}
		if i < len(seq) {
			r.next = seq[i]
		}
		for k, a := range r.attempts {
			following := r.next
			if k+1 < len(r.attempts) {
				following = r.attempts[k+1]
			}
			if following != nil && a.RetryAfterSeconds <= 0 {
				r.waits = append(r.waits, following.start.Sub(a.end))
			}
		}
		runs = append(runs, r)
	}
	return runs
}

// growing reports whether waits back off: none shrinks by more than 10%
// plus 50 ms (jitter), and the last is at least 1.5 times and 100 ms longer
// than the first.
func growing(waits []time.Duration) bool {
	for k := 1; k < len(waits); k++ {
		if waits[k] < waits[k-1]*9/10-50*time.Millisecond {
			return false
		}
	}
	first, last := waits[0], waits[len(waits)-1]
	return last >= first*3/2 && last-first >= 100*time.Millisecond
}

func (r run) evidence() []string {
	ids := make([]string, 0, len(r.attempts)+1)
	for _, a := range r.attempts {
		ids = append(ids, a.ref())
	}
	if r.next != nil {
		ids = append(ids, r.next.ref())
	}
	return ids
}

// checkBacksOff judges runs of failures: retried with growing waits, and
// not forever.
func checkBacksOff(calls []call, opts Options) Check {
	var flat, endless []string
	judged, flatRuns, endlessRuns := 0, 0, 0
	for _, r := range failureRuns(calls) {
		if len(r.waits) >= minJudgedRetries {
			judged++
			if !growing(r.waits) {
				flatRuns++
				flat = append(flat, r.evidence()...)
			}
		}
		if len(r.attempts) > opts.MaxAttempts {
			endlessRuns++
			endless = append(endless, r.evidence()...)
		}
	}
	switch {
	case flatRuns > 0:
		return Check{Result: Fail, Evidence: flat,
			Explanation: fmt.Sprintf("%s retried without growing waits; back off exponentially (e.g. 1 s, 2 s, 4 s)", plural(flatRuns, "run")+" of failures")}
	case endlessRuns > 0:
		return Check{Result: Warn, Evidence: endless,
			Explanation: fmt.Sprintf("%s went on for more than %d attempts; give up eventually", plural(endlessRuns, "run")+" of failures", opts.MaxAttempts)}
	case judged == 0:
		return Check{Result: NotExercised,
			Explanation: fmt.Sprintf("no failure was retried %d or more times without Retry-After (force 500s or faults to exercise backoff)", minJudgedRetries)}
	}
	return Check{Result: Pass, Explanation: fmt.Sprintf("%s retried with growing waits, each within %d attempts", plural(judged, "run")+" of failures", opts.MaxAttempts)}
}
