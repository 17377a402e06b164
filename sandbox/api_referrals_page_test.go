package sandbox

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
)

// TestWriteReferralsPage: a page written from the records' encodings is
// byte for byte the page writeJSON writes from the records, with and
// without records and a next cursor.
func TestWriteReferralsPage(t *testing.T) {
	refs := []fixtures.Referral{
		{TrialID: "T-1", OutcomesID: "a", ClientID: "c", Status: fixtures.StatusReceived, Notes: "<&>"},
		{TrialID: "T-2", OutcomesID: "b", ClientID: "c", Status: fixtures.StatusAccepted},
	}
	for _, tc := range []struct {
		name string
		refs []fixtures.Referral
		next string
	}{
		{"empty", []fixtures.Referral{}, ""},
		{"last page", refs, ""},
		{"more", refs, "cj9x-_"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := httptest.NewRecorder()
			writeJSON(want, 200, referralsPage{Referrals: tc.refs, NextCursor: nextCursor(tc.next)})
			var raw []json.RawMessage
			for _, r := range tc.refs {
				b, err := json.Marshal(r)
				if err != nil {
					t.Fatal(err)
				}
				raw = append(raw, b)
			}
			got := httptest.NewRecorder()
			writeReferralsPage(got, raw, tc.next)
			if got.Body.String() != want.Body.String() || got.Code != want.Code ||
				got.Header().Get("Content-Type") != want.Header().Get("Content-Type") {
				t.Errorf("got %d %q %s\nwant %d %q %s", got.Code, got.Header().Get("Content-Type"), got.Body,
					want.Code, want.Header().Get("Content-Type"), want.Body)
			}
		})
	}
}
