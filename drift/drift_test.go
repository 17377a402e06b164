package drift_test

import (
	"context"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/drift"
)

func TestSandboxAgainstItselfHasNoDrift(t *testing.T) {
	up, sb := startSandbox(t), startSandbox(t)
	cfg := config(targetOf(t, "upstream", up), targetOf(t, "sandbox", sb))
	cfg.WritesTrial = "TRIAL-CARDIO-001"
	report, err := drift.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range report.Differences {
		t.Errorf("difference %s: upstream %s, sandbox %s (%s)", d.Key, d.Upstream, d.Sandbox, d.Detail)
	}
	for _, s := range report.Skipped {
		t.Errorf("skipped %s: %s", s.Name, s.Reason)
	}
	if len(report.Probes) < 50 {
		t.Errorf("%d probes ran, want every probe (over 50)", len(report.Probes))
	}
}
