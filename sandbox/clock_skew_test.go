package sandbox_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi/contract"
)

// Options.ClockSkew (--clock-skew) reaches token validation: a token is
// accepted that long past exp, and refused after.
func TestOptionsClockSkewReachesTheAPI(t *testing.T) {
	clk := clock.NewAdjustable(nil)
	in, err := sandbox.Open(sandbox.Config{ClockSkew: 30 * time.Second, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close() })
	ts := httptest.NewServer(in.Server)
	t.Cleanup(ts.Close)

	client := contract.New(t, ts.URL).Client()
	form := tokenForm(partner, partner+"-secret", apiScope)
	resp, err := client.Post(ts.URL+tokenPath, formType, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	token := accessTokenOf(t, &response{Status: resp.StatusCode, Header: resp.Header, Body: body})
	ping := func() int {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+pingPath, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	clk.Advance(idp.DefaultTokenLifetime + 20*time.Second)
	if got := ping(); got != http.StatusOK {
		t.Errorf("20s past exp with a 30s skew: %d, want 200", got)
	}
	clk.Advance(11 * time.Second)
	if got := ping(); got != http.StatusUnauthorized {
		t.Errorf("31s past exp with a 30s skew: %d, want 401", got)
	}
}
