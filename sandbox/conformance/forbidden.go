package conformance

import (
	"fmt"
	"net/http"
)

// CheckStopsOn403: after a 403 from the API or ping, the client does not
// retry the call: its next call (the first that started once the 403 was
// answered; token requests aside) is not the same method, path and query.
// A 403 means the token is valid but its permissions are insufficient; the
// interface's remedy (section 7) is to have the scope and permissions
// reviewed, which no retry brings about. Fail when a refused call was
// retried, with the 403 and the retries in a row as evidence; pass when
// none was; not exercised without a 403. A program that goes on to other
// calls and comes back to the refused one later is not retrying it.
const CheckStopsOn403 = "stops-on-403"

// sameCall reports whether a and b ask for the same thing.
func sameCall(a, b call) bool {
	return a.Method == b.Method && a.Path == b.Path && a.Query == b.Query && a.Endpoint == b.Endpoint
}

// retriesOf returns the calls that retried the call at index i: the same
// call made again, in a row, from the first call that started once it was
// answered.
func retriesOf(calls []call, i int) (retries []call, at []int) {
	f := calls[i]
	for j := i + 1; j < len(calls); j++ {
		c := calls[j]
		if !c.usesToken() || !c.startedAfter(f) {
			continue // a token request, or a call already in flight
		}
		if !sameCall(f, c) {
			break
		}
		retries, at = append(retries, c), append(at, j)
		f = c
	}
	return retries, at
}

// checkStopsOn403 looks, after each 403, for a retry of the refused call.
func checkStopsOn403(calls []call, _ Options) Check {
	var evidence []string
	forbidden, retried := 0, 0
	judged := map[int]bool{} // retries already named, so a loop counts once
	for i, f := range calls {
		if !f.usesToken() || f.Status != http.StatusForbidden || judged[i] {
			continue
		}
		forbidden++
		retries, at := retriesOf(calls, i)
		for _, j := range at {
			judged[j] = true
		}
		if len(retries) > 0 {
			retried++
			evidence = append(evidence, refs(append([]call{f}, retries...)...)...)
		}
	}
	switch {
	case forbidden == 0:
		return Check{Result: NotExercised, Explanation: "no call was refused with 403 (force one with the permissions-revoked scenario or a rule with status 403)"}
	case retried > 0:
		return Check{Result: Fail, Evidence: evidence, Explanation: fmt.Sprintf(
			"%s refused with 403 retried: a 403 means the token's permissions are insufficient, and no retry changes them; stop and have the client's scope and permissions reviewed (interface section 7)",
			plural(retried, "call"))}
	}
	return Check{Result: Pass, Explanation: fmt.Sprintf("the client retried none of its %s refused with 403", plural(forbidden, "call"))}
}
