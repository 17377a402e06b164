package sandbox

import (
	"encoding/json"
	"io"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
)

// BenchmarkEncodeReferral is the JSON encoding of one referral, as the API
// writes it for every read and every created record.
func BenchmarkEncodeReferral(b *testing.B) {
	set, err := fixtures.Default()
	if err != nil {
		b.Fatal(err)
	}
	ref := set.Referrals[0]
	enc := json.NewEncoder(io.Discard)
	for b.Loop() {
		if err := enc.Encode(ref); err != nil {
			b.Fatal(err)
		}
	}
}
