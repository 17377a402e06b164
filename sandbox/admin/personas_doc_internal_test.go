package admin

import (
	"flag"
	"os"
	"strings"
	"testing"
)

// personasDoc is the page whose table personaTable generates.
const personasDoc = "../../docs/personas.md"

// The markers around the generated table in personasDoc.
const (
	personasBegin = "<!-- personas: generated from sandbox/admin/personas.go by `go test ./sandbox/admin -run TestPersonasDocMatchesTheSource -update-personas`; do not edit by hand -->\n"
	personasEnd   = "<!-- end of personas -->\n"
)

var updatePersonas = flag.Bool("update-personas", false, "rewrite the persona table of docs/personas.md from personaList")

// TestPersonasDocMatchesTheSource: the table in docs/personas.md is the one
// personaList renders, so the page says what GET /__sandbox/personas lists
// and what the sandbox does. -update-personas rewrites it.
func TestPersonasDocMatchesTheSource(t *testing.T) {
	data, err := os.ReadFile(personasDoc)
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	before, rest, ok := strings.Cut(page, personasBegin)
	table, after, ok2 := strings.Cut(rest, personasEnd)
	if !ok || !ok2 {
		t.Fatalf("%s lacks the markers %q and %q around the table", personasDoc, personasBegin, personasEnd)
	}
	want := personaTable()
	if *updatePersonas {
		if err := os.WriteFile(personasDoc, []byte(before+personasBegin+want+personasEnd+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if table != want {
		t.Errorf("%s's persona table is not what personaList gives; run go test ./sandbox/admin -run TestPersonasDocMatchesTheSource -update-personas\nhave:\n%s\nwant:\n%s", personasDoc, table, want)
	}
}
