package placeholder_test

import (
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/placeholder"
)

// BenchmarkJSONReferralList is what the recording proxy pays to journal a
// page of 20 referrals from the real service.
func BenchmarkJSONReferralList(b *testing.B) {
	referral := `{"trialId":"T-REAL-1","outcomesId":"6f1c2a7e-0b7d-4c1e-9f3a-2d5e8b9c0a11","clientId":"partner","status":"received","submittedAt":"2026-01-02T03:04:05.1234567Z",` +
		`"patient":{"firstName":"Marguerite","lastName":"Okonkwo","dateOfBirth":"1961-03-14","gender":"female","email":"marguerite.okonkwo@example.org","phone":"+14155550123","postalCode":"94110"},"notes":"prefers mornings, lives alone"}`
	body := []byte(`{"referrals":[` + strings.Repeat(referral+",", 19) + referral + `]}`)
	m := placeholder.New([]byte("bench"), placeholder.Keep{Values: map[string]bool{"received": true, "female": true}})
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.JSON(body, 64<<10, nil); err != nil {
			b.Fatal(err)
		}
	}
}
