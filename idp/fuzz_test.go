package idp

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzTokenRequest posts arbitrary form bodies and Authorization headers to
// the token endpoint: every answer is 200 with a token or a documented error
// status with Entra's JSON body; never a panic or a 500.
func FuzzTokenRequest(f *testing.F) {
	f.Add("grant_type=client_credentials&client_id=sandbox-partner&client_secret=sandbox-partner-secret&scope=api%3A%2F%2Freferrals-sandbox%2F.default", "")
	f.Add("grant_type=client_credentials&scope=api://referrals-sandbox/.default", "Basic c2FuZGJveC1wYXJ0bmVyOnNhbmRib3gtcGFydG5lci1zZWNyZXQ=")
	f.Add("grant_type=password&client_id=%ZZ", "Basic !!!")
	f.Add("scope=openid+profile+offline_access&grant_type=client_credentials&client_id=a&client_secret=b", "Bearer x")
	f.Add(strings.Repeat("a=b&", 100), "Basic "+strings.Repeat("A", 300))
	p, _ := benchProvider(f)
	h := p.Handler()
	f.Fuzz(func(t *testing.T, form, authorization string) {
		r := httptest.NewRequest(http.MethodPost, "/"+DefaultTenant+"/oauth2/v2.0/token", strings.NewReader(form))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if authorization != "" {
			r.Header["Authorization"] = []string{authorization}
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var body map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Fatalf("status %d with a body that is not JSON: %q", w.Code, w.Body.String())
		}
		switch w.Code {
		case http.StatusOK:
			if body["access_token"] == nil {
				t.Fatalf("200 without access_token: %v", body)
			}
		case http.StatusBadRequest, http.StatusUnauthorized, http.StatusRequestEntityTooLarge:
			if body["error"] == nil || body["error_codes"] == nil {
				t.Fatalf("%d without Entra error fields: %v", w.Code, body)
			}
		default:
			t.Fatalf("undocumented status %d: %v", w.Code, body)
		}
	})
}
