package sandbox_test

import (
	"bytes"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi"
)

// The admin API's document is served at /__sandbox/openapi.json without
// the admin token, as the package builds it.
func TestAdminDocumentIsServed(t *testing.T) {
	s := newSandbox(t, func(c *sandboxConfig) { c.AdminToken = "qa-token" })
	r := s.do(request{path: openapi.AdminPath})
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != openapi.ContentType {
		t.Errorf("Content-Type %q, want %s", ct, openapi.ContentType)
	}
	want, err := openapi.ServedAdmin(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(r.Body, want) {
		t.Error("the served admin document differs from openapi.AdminDocument() with this sandbox's address")
	}
}

// Every documented path answers exactly the documented methods (and HEAD
// where it answers GET): another method gets 405 with that Allow list,
// except on the token endpoint, which answers as Entra does.
func TestDocumentedMethodsAreAnswered(t *testing.T) {
	s := newSandbox(t, func(c *sandboxConfig) { c.CADir = t.TempDir() }) // serves /__sandbox/ca.pem
	admin, err := openapi.AdminDocument()
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range [][]byte{openapi.Document(), admin} {
		doc, err := openapi3.NewLoader().LoadFromData(data)
		if err != nil {
			t.Fatal(err)
		}
		for path, item := range doc.Paths.Map() {
			var want []string
			for method := range item.Operations() {
				want = append(want, method)
				if method == http.MethodGet {
					want = append(want, http.MethodHead)
				}
			}
			sort.Strings(want)
			concrete := strings.NewReplacer("{tenant}", "common", "{", "x", "}", "").Replace(path)
			if strings.HasSuffix(path, "/oauth2/v2.0/token") {
				// Entra answers a wrong method on its token endpoint with
				// 400 AADSTS900561, not 405 (idp's TestTokenEndpointWrongMethod).
				r := s.do(request{method: "PATCH", path: concrete, plain: true})
				if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "AADSTS900561") {
					t.Errorf("PATCH %s: %d %s, want Entra's 400 AADSTS900561", concrete, r.Status, r.Body)
				}
				continue
			}
			r := s.do(request{method: "PATCH", path: concrete, unknownRoute: true})
			if r.Status != http.StatusMethodNotAllowed {
				t.Errorf("PATCH %s: status %d, want 405", concrete, r.Status)
				continue
			}
			if got := r.Header.Get("Allow"); got != strings.Join(want, ", ") {
				t.Errorf("PATCH %s: Allow %q, want %q", concrete, got, strings.Join(want, ", "))
			}
		}
	}
}
