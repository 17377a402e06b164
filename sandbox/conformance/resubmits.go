package conformance

import (
	"fmt"
	"net/http"
)

// CheckResubmitsSafely: after a write whose answer was lost (the
// drop-after-commit fault: the referral was stored, the client got no
// answer), the client does not refer the same patient to the same trial a
// second time. Fail when a later write of the client created a second
// referral with the same submission (trial and patient), with both
// requests and both records as evidence; pass when it read back first
// (for a qualified referral, by its externalSourceId), when its
// resubmission was answered 409 (the existing record's Location), or when
// it did not resubmit.
const CheckResubmitsSafely = "resubmits-safely"

// faultDropAfterCommit is the fault that keeps a committed answer from
// the client.
const faultDropAfterCommit = "drop-after-commit"

// lostWrite reports whether c stored a referral whose answer the client
// never received.
func (c call) lostWrite() bool {
	return c.Fault == faultDropAfterCommit && c.Method == http.MethodPost && c.Submission != "" &&
		c.Status == http.StatusCreated
}

// checkResubmitsSafely looks, after each lost write, for a later write of
// the same submission that created a second record.
func checkResubmitsSafely(calls []call, _ Options) Check {
	var evidence []string
	lost, duplicated, conflicts := 0, 0, 0
	var records []string
	for i, l := range calls {
		if !l.lostWrite() {
			continue
		}
		lost++
		for j, c := range calls {
			// The lost write is journaled once its handler returns, which
			// may be after the client's next request started: what
			// counts is which one started first.
			if j == i || c.Method != http.MethodPost || c.Submission != l.Submission || !c.startedLater(l) {
				continue
			}
			if c.Status == http.StatusConflict {
				conflicts++
				continue
			}
			if c.Status == http.StatusCreated {
				duplicated++
				evidence = append(evidence, l.ref(), c.ref())
				records = append(records, l.Location, c.Location)
				break
			}
		}
	}
	switch {
	case lost == 0:
		return Check{Result: NotExercised, Explanation: "no write lost its answer (activate the lost-answers scenario or a drop-after-commit rule)"}
	case duplicated > 0:
		ev := append(unique(evidence), unique(records)...)
		return Check{Result: Fail, Evidence: ev,
			Explanation: fmt.Sprintf("after %s whose answer was lost the client sent the same submission again and referred the same patient to the same trial twice (records %v); read back first (a qualified referral by its externalSourceId) or treat 409 as already done",
				plural(duplicated, "write"), unique(records))}
	}
	how := "did not create a second record"
	if conflicts > 0 {
		how += fmt.Sprintf("; %s answered 409 with the existing record", plural(conflicts, "resubmission"))
	}
	return Check{Result: Pass, Explanation: fmt.Sprintf("after %s whose answer was lost the client %s", plural(lost, "write"), how)}
}

// startedLater reports whether c started after prev did; without times,
// journal order decides.
func (c call) startedLater(prev call) bool {
	if !c.timed || !prev.timed {
		return c.ID > prev.ID
	}
	return c.start.After(prev.start) || c.start.Equal(prev.start) && c.ID > prev.ID
}
