package admin

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/gorilla/mux"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi"
)

// Every route the admin API registers is in one of the OpenAPI documents,
// so a route added without documentation fails here. (Which methods each
// path answers is checked over HTTP by TestDocumentedMethodsAreAnswered.)
func TestEveryAdminRouteIsDocumented(t *testing.T) {
	documented := map[string]bool{}
	admin, err := openapi.AdminDocument()
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range [][]byte{openapi.Document(), admin} {
		var doc struct{ Paths map[string]json.RawMessage }
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		for path := range doc.Paths {
			documented[path] = true
		}
	}
	r := mux.NewRouter()
	a := &API{cfg: Config{Handle: func(r *mux.Router, path string, _ map[string]http.Handler) {
		r.Handle(path, http.NotFoundHandler())
	}}}
	a.Routes(r)
	n := 0
	err = r.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if err != nil {
			return err
		}
		n++
		if !documented[tpl] {
			t.Errorf("admin route %s is in neither OpenAPI document", tpl)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 15 {
		t.Fatalf("walked %d admin routes; the walk is broken", n)
	}
}
