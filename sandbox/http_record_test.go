package sandbox_test

import (
	"bytes"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// A fault that closes the connection ends the exchange for the client
// when the connection closes, not when the sandbox's handler returns.
// The journal must date the end no later than the client saw it: the
// report joins the requests a program sends on a new connection to its
// past only when the past ended first. Here the client moves the clock an
// hour as soon as it sees each drop; an end stamped after that shows up an
// hour late. The race this guards against is narrow, hence the repeats.
func TestJournalEndsADroppedRequestWhenTheConnectionCloses(t *testing.T) {
	sb := newConformanceSandbox(t)
	const drops = 25
	sb.addRule(map[string]any{"clientId": conformanceClient, "endpoint": "api", "method": "POST", "fault": "drop-after-commit", "times": drops})
	c := &scriptedClient{sb: sb}
	c.ensureToken()
	body := []byte(`{"trialId":"TRIAL-CARDIO-001","patient":{"firstName":"Ann","lastName":"Lee","dateOfBirth":"1980-04-12","gender":"female"}}`)
	seen := map[string]time.Time{}
	var ids []string
	for i := range drops {
		req, _ := http.NewRequest(http.MethodPost, sb.tls.URL+"/api/v1/referrals/", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+c.token)
		id := "dropped-" + strconv.Itoa(i)
		req.Header.Set(sandbox.RequestIDHeader, id)
		if resp, err := sb.tlsClient.Do(req); err == nil {
			resp.Body.Close()
			t.Fatalf("drop %d answered %d, want no answer", i, resp.StatusCode)
		}
		seen[id] = sb.clock.Now()
		ids = append(ids, id)
		c.sleep(time.Hour)
	}
	entries := sb.journalEntries(ids...)
	for id, sawClose := range seen {
		e, ok := entries[id]
		if !ok {
			t.Errorf("%s: not journaled", id)
			continue
		}
		at, err := time.Parse(referrals.TimestampLayout, e.At)
		if err != nil {
			t.Fatalf("%s: at %q: %v", id, e.At, err)
		}
		end := at.Add(time.Duration(e.DurationMs * float64(time.Millisecond)))
		if end.After(sawClose) {
			t.Errorf("%s: journal ends it at %s, after the client saw the connection close at %s", id, end.Format(time.RFC3339Nano), sawClose.Format(time.RFC3339Nano))
		}
	}
}
