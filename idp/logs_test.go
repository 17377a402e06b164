package idp_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
)

// TestLogsHoldNoSecretsOrTokens logs at debug level while clients succeed
// and fail with both auth styles, then searches the log for every secret and
// token in every encoding it crossed the wire in.
func TestLogsHoldNoSecretsOrTokens(t *testing.T) {
	t.Parallel()
	var logs testutil.LockedBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := newSandbox(t, withClients(oddClient()), func(c *idp.Config) { c.Logger = logger })

	const wrongSecret = "mistyped-Secret-42"
	basicForm := url.Values{"grant_type": {"client_credentials"}, "scope": {defaultScope}}
	requests := []tokenRequest{
		{form: postForm(partnerID, partnerSecret, defaultScope)},
		{form: basicForm, authorization: basicAuth(partnerID, partnerSecret)},
		{form: postForm(oddID, oddSecret, defaultScope)},
		{form: basicForm, authorization: basicAuth(oddID, oddSecret)},
		{form: postForm(partnerID, wrongSecret, defaultScope)},
		{form: basicForm, authorization: basicAuth(partnerID, wrongSecret)},
		{form: postForm(oddID, wrongSecret, defaultScope)},
		{form: postForm("nobody", wrongSecret, defaultScope)},
		{form: postForm(partnerID, partnerSecret, defaultScope), authorization: basicAuth(partnerID, partnerSecret)},
		{form: postForm(partnerID, partnerSecret, otherAPIScope)},
		{form: with(postForm(partnerID, partnerSecret, defaultScope), "grant_type", "password")},
	}
	var tokens []string
	for _, req := range requests {
		rep := s.do(t, req)
		if rep.status == http.StatusOK {
			tokens = append(tokens, requireToken(t, rep).AccessToken)
		}
	}
	if len(tokens) != 4 {
		t.Fatalf("%d tokens issued, want 4", len(tokens))
	}

	log := logs.String()
	if !strings.Contains(log, `"`+partnerID+`"`) {
		t.Fatalf("the log does not name client %s, so this test could not see a leak:\n%s", partnerID, log)
	}
	forbidden := map[string]string{}
	for _, secret := range []string{partnerSecret, oddSecret, wrongSecret} {
		forbidden["secret "+secret] = secret
		forbidden["url-encoded secret "+secret] = url.QueryEscape(secret)
	}
	for _, id := range []string{partnerID, oddID} {
		for _, secret := range []string{partnerSecret, oddSecret, wrongSecret} {
			forbidden["Basic credentials "+id+":"+secret] = strings.TrimPrefix(basicAuth(id, secret), "Basic ")
		}
	}
	for i, tok := range tokens {
		parts := strings.Split(tok, ".")
		forbidden[fmt.Sprintf("token %d", i+1)] = tok
		forbidden[fmt.Sprintf("signature of token %d", i+1)] = parts[2]
		forbidden[fmt.Sprintf("payload of token %d", i+1)] = parts[1]
	}
	for what, value := range forbidden {
		if strings.Contains(log, value) {
			t.Errorf("the log contains the %s", what)
		}
	}
}
