package sandbox_test

import (
	"bytes"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// decodingStore hides the embedded store's encoded listing, so a sandbox
// on it lists referrals as it does on any other store: decoding every
// record and encoding the page with encoding/json.
type decodingStore struct{ store.Store }

// TestReferralsPageWrittenThrough: a page of referrals written from the
// stored encodings is, byte for byte, the page the decoding path writes,
// with the same status and headers (a Content-Length among them), for
// every page size and cursor of a walk through the listing and for an
// empty listing.
func TestReferralsPageWrittenThrough(t *testing.T) {
	fast := newSandbox(t)
	if _, ok := fast.Store.(*store.BuntStore); !ok {
		t.Skip("the encoded listing is the embedded store's")
	}
	token := fast.token(partner)
	notes := []string{"plain", `<b>&amp;</b> "quoted" \ back`, "naïve café ☕ \u2028 line", ""}
	for i := range 7 {
		body := referralBody("TRIAL-CARDIO-001")
		body["notes"] = notes[i%len(notes)]
		fast.createReferral(token, body)
	}
	slow := newSandbox(t, useStore(decodingStore{fast.Store}))
	slowToken := slow.token(partner)

	var longest []byte
	compare := func(query, who, fastToken, slowToken string) *string {
		t.Helper()
		path := "/api/v1/referrals/?" + query
		got := fast.do(request{path: path, token: fastToken})
		want := slow.do(request{path: path, token: slowToken})
		if got.Status != http.StatusOK || got.Status != want.Status || !bytes.Equal(got.Body, want.Body) {
			t.Fatalf("%s GET %s: written through %d\n%s\ndecoded %d\n%s", who, path, got.Status, got.Body, want.Status, want.Body)
		}
		for _, h := range []http.Header{got.Header, want.Header} {
			for _, name := range []string{"Date", "X-Request-Id"} {
				h.Del(name)
			}
		}
		if !maps.EqualFunc(got.Header, want.Header, slices.Equal) {
			t.Errorf("%s GET %s: headers %v, want %v", who, path, got.Header, want.Header)
		}
		// Sent whole, with its length: not chunked, however long.
		if n := got.Header.Get("Content-Length"); n != strconv.Itoa(len(got.Body)) {
			t.Errorf("%s GET %s: Content-Length %q for a body of %d bytes", who, path, n, len(got.Body))
		}
		if len(got.Body) > len(longest) {
			longest = got.Body
		}
		var page struct{ NextCursor *string }
		got.decode(t, &page)
		return page.NextCursor
	}
	for _, limit := range []string{"1", "2", "3", "7", ""} {
		query := "limit=" + limit
		if limit == "" {
			query = ""
		}
		pages := 1
		for cursor := compare(query, partner, token, slowToken); cursor != nil; pages++ {
			if pages > 1000 {
				t.Fatalf("limit %s: more than 1,000 pages", limit)
			}
			cursor = compare(query+"&cursor="+*cursor, partner, token, slowToken)
		}
		if limit == "1" && pages < 8 {
			t.Errorf("limit 1: %d pages, want one per referral (at least 8)", pages)
		}
	}
	if len(longest) <= 2048 {
		t.Errorf("the longest page is %d bytes: too short to show that a page of over 2 KB is sent whole", len(longest))
	}
	// A client without referrals: an empty array and a null cursor.
	compare("", partner2, fast.token(partner2), slow.token(partner2))
}
