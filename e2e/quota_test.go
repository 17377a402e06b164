package e2e

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// TestQuotaFlagRefusesBeyondIt: serve's --quota-records reaches the store:
// a partner whose fixtures already fill a quota of one record gets 507
// with the quota-exceeded problem for a submission, nothing is stored,
// and its stored records still read.
func TestQuotaFlagRefusesBeyondIt(t *testing.T) {
	sb := startSandbox(t, "--quota-records", "1", "--log-level", "warn")
	client := newClient(2)
	p := partners[0]
	token := mustToken(t, client, sb.base, p.id, p.secret)
	listURL := sb.base + "/__sandbox/data/qualified?clientId=" + url.QueryEscape(p.id)
	before := listAll[referrals.QualifiedReferral](t, client, listURL, "qualifiedReferrals", "", 10_000)
	if len(before) == 0 {
		t.Fatal("the partner has no fixture record: the test would prove nothing")
	}

	body, err := submission("quota", 0, 1).body()
	if err != nil {
		t.Fatal(err)
	}
	a, err := do(t.Context(), client, http.MethodPost, sb.base+"/api/v1/referrals/qualified", token, "application/json", body, nil)
	if err != nil {
		t.Fatal(err)
	}
	var problem struct {
		Type   string `json:"type"`
		Status int    `json:"status"`
	}
	if a.status != http.StatusInsufficientStorage || a.header.Get("Content-Type") != "application/problem+json" ||
		json.Unmarshal(a.body, &problem) != nil || problem.Type != "urn:referrals-sandbox:problem:quota-exceeded" || problem.Status != a.status {
		t.Fatalf("submission beyond the quota: %d %s %s", a.status, a.header.Get("Content-Type"), a.body)
	}

	after := listAll[referrals.QualifiedReferral](t, client, listURL, "qualifiedReferrals", "", 10_000)
	if len(after) != len(before) {
		t.Errorf("%d qualified referrals stored after the refusal, %d before", len(after), len(before))
	}
	read, err := do(t.Context(), client, http.MethodGet, sb.base+"/api/v1/referrals/qualified/"+url.PathEscape(before[0].ExternalSourceID), token, "", nil, nil)
	if err != nil || read.status != http.StatusOK {
		t.Errorf("reading a stored record under a full records quota: %v %d %s", err, read.status, read.body)
	}
}
