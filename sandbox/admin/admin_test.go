package admin_test

import (
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/admin"
)

// New refuses a Config that lacks a part every call needs, naming it,
// rather than building an API that panics on its first request.
func TestNewRefusesAnIncompleteConfig(t *testing.T) {
	_, err := admin.New(admin.Config{})
	if err == nil || !strings.Contains(err.Error(), "no backend") {
		t.Fatalf("New(Config{}) = %v, want an error naming the missing backend", err)
	}
}
