package store

import (
	"errors"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// TestDamagedCompactRecordIsCorrupt: a compact value damaged on disk (cut
// short, its sort line edited) reads as ErrCorrupt, which listings skip and
// a read answers as a stored record that cannot be read, never as another
// record or a panic.
func TestDamagedCompactRecordIsCorrupt(t *testing.T) {
	key, value, err := encodeReferral(referrals.Referral{TrialID: "T-1", OutcomesID: "id%1", ClientID: "c", Status: "received", SubmittedAt: "2026-01-01T00:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decode[referrals.Referral](key, value); err != nil {
		t.Fatalf("undamaged %q: %v", value, err)
	}
	line, _ := splitValue(value)
	for _, damaged := range []string{
		line + "\n~",
		line + "\n~\"T-1",
		line + "\n~\"T-1\"",
		line + "\n~\"T-1\"\"received",
		line + "\n~\"T-1\"\"received\"",
		"c:2026-01-01T00:00:00.000000Z\n~\"T-1\"\"received\"}",
		"c:2026-01-01T00:00:00Z:id\n~\"T-1\"\"received\"}",
		"c\n~\"T-1\"\"received\"}",
		"c:2026-01-01T00:00:00.000000Z:id%2\n~\"T-1\"\"received\"}",
		"c:2026-01-01T00:00:00.000000Z:id%zz\n~\"T-1\"\"received\"}",
	} {
		if rec, err := decode[referrals.Referral](key, damaged); !errors.Is(err, ErrCorrupt) {
			t.Errorf("decode %q = %+v, %v; want ErrCorrupt", damaged, rec, err)
		}
	}
}
