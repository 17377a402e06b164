package sandbox_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store/storetest"
)

// TestAPI_RecordThatNoLongerDecodes: a --data file in which one referral
// and one qualified referral of the partner no longer decode. Listings
// answer 200 with every other record and the log names each bad key;
// reading a bad record directly is a 500 problem saying the stored record
// cannot be read and pointing at the log, with the key in the log and not
// in the body.
func TestAPI_RecordThatNoLongerDecodes(t *testing.T) {
	set, err := fixtures.Default()
	if err != nil {
		t.Fatal(err)
	}
	badRef, badQ := set.Referrals[0], set.QualifiedReferrals[0]
	refKey := "r:" + badRef.OutcomesID + ":" + badRef.ClientID
	qKey := "q:" + badQ.ExternalSourceID + ":" + badQ.ClientID

	path := filepath.Join(t.TempDir(), "data.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Load(context.Background(), set); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	storetest.DamageRecords(t, path, refKey, qKey)

	var storeLogs bytes.Buffer
	st, err = store.Open(path, store.WithLogger(slog.New(slog.NewTextHandler(&storeLogs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	sb := newSandbox(t, useStore(st))
	token := sb.token(badRef.ClientID)

	for _, tc := range []struct {
		list apiList
		bad  string
		all  int
	}{
		{referralsList, badRef.OutcomesID, fixtureReferrals},
		{qualifiedList, badQ.ExternalSourceID, fixtureQualified},
	} {
		ids, _ := sb.collect(tc.list, token, "2")
		if len(ids) != tc.all-1 || slices.Contains(ids, tc.bad) {
			t.Errorf("%s lists %d records %q, want the %d others than %s", tc.list.path, len(ids), ids, tc.all-1, tc.bad)
		}
	}
	for _, key := range []string{refKey, qKey} {
		if !strings.Contains(storeLogs.String(), "key="+key) {
			t.Errorf("the log does not name the bad key %s:\n%s", key, storeLogs.String())
		}
	}

	for _, p := range []string{referralPath(badRef), "/api/v1/referrals/qualified/" + badQ.ExternalSourceID} {
		r := sb.do(request{path: p, token: token})
		prob := r.problem(t)
		if r.Status != http.StatusInternalServerError || prob.Type != sandbox.ProblemTypeInternalError || !strings.Contains(prob.Detail, "can no longer read") || !strings.Contains(prob.Detail, "sandbox log") {
			t.Errorf("GET %s: %d %+v, want a 500 problem saying the record cannot be read and pointing at the log", p, r.Status, prob)
		}
		if bytes.Contains(r.Body, []byte("r:")) || bytes.Contains(r.Body, []byte("q:")) {
			t.Errorf("GET %s: the body shows the store's key: %s", p, r.Body)
		}
		if !strings.Contains(sb.Logs.String(), prob.TraceID) || !strings.Contains(sb.Logs.String(), "stored record does not decode") {
			t.Errorf("GET %s: the log has no entry for trace id %s saying what failed", p, prob.TraceID)
		}
	}
}
