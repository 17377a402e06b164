package conformance

import (
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// TestResubmitsSafelyJournalOrder: a lost write is journaled when its
// handler returns, which can be after the client's resubmission was
// journaled; the check goes by start times, so the duplicate is still
// found.
func TestResubmitsSafelyJournalOrder(t *testing.T) {
	resubmission := journal.Entry{ID: 1, At: "2026-11-21T14:00:01.000000Z", Method: "POST", Path: "/api/v1/referrals/",
		Endpoint: "api", ClientID: "c", Status: 201, RequestID: "r2", Location: "/api/v1/referrals/T/2", Submission: "s"}
	lost := journal.Entry{ID: 2, At: "2026-11-21T14:00:00.000000Z", DurationMs: 1500, Method: "POST", Path: "/api/v1/referrals/",
		Endpoint: "api", ClientID: "c", Status: 201, Fault: "drop-after-commit", RequestID: "r1", Location: "/api/v1/referrals/T/1", Submission: "s"}
	other := journal.Entry{ID: 3, At: "2026-11-21T14:00:02.000000Z", Method: "POST", Path: "/api/v1/referrals/",
		Endpoint: "api", ClientID: "c", Status: 201, RequestID: "r3", Location: "/api/v1/referrals/T/3", Submission: "another patient"}
	for _, tc := range []struct {
		name    string
		entries []journal.Entry
		want    Result
	}{
		{"resubmitted", []journal.Entry{resubmission, lost}, Fail},
		{"another patient", []journal.Entry{lost, other}, Pass},
		{"nothing lost", []journal.Entry{resubmission, other}, NotExercised},
	} {
		c := checkResubmitsSafely(callsOf(tc.entries), Options{})
		if c.Result != tc.want {
			t.Errorf("%s: %s (%s), want %s", tc.name, c.Result, c.Explanation, tc.want)
		}
	}
}

func callsOf(entries []journal.Entry) []call {
	out := make([]call, len(entries))
	for i, e := range sortedByID(entries) {
		out[i] = newCall(e)
	}
	return out
}

// submitted marks a write as the submission sub that created record.
func submitted(sub, record string) mod {
	return func(e *journal.Entry) { e.Submission, e.Location = sub, record }
}

// lostAnswer marks a write as committed (201, record) but never answered.
func lostAnswer(sub, record string) mod {
	return func(e *journal.Entry) {
		submitted(sub, record)(e)
		e.Fault = faultDropAfterCommit
	}
}
