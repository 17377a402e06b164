package openapi

import (
	"os"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// transitions renders the server's one transition table
// (referrals.NextStatuses) as the sentence the document and docs/api.md use,
// with arrow between a status and where it may go.
func transitions(arrow string) string {
	var moves, final []string
	for _, from := range referrals.Statuses() {
		next := referrals.NextStatuses(from)
		if len(next) == 0 {
			final = append(final, "`"+from+"`")
			continue
		}
		quoted := make([]string, len(next))
		for i, s := range next {
			quoted[i] = "`" + s + "`"
		}
		moves = append(moves, "`"+from+"` "+arrow+" "+list(quoted, "or"))
	}
	return strings.Join(moves, "; ") + ". " + list(final, "and") + " are final."
}

// list joins items as English: "a, b or c".
func list(items []string, conj string) string {
	if len(items) == 1 {
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " " + conj + " " + items[len(items)-1]
}

// The document's Status schema and info.description, and the API page of
// the docs (docs/api.md, "Statuses"), must
// state exactly the moves the server allows: they once said rejected could
// follow accepted, which the server refuses.
func TestStatusTransitionsAgreeWithTheServer(t *testing.T) {
	doc := loadDocument(t)
	want := transitions("->")
	for name, text := range map[string]string{
		"info.description":                      doc.Info.Description,
		"components.schemas.Status.description": doc.Components.Schemas["Status"].Value.Description,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("%s does not state the transition table; want it to contain\n%s", name, want)
		}
	}
	page, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := transitions("→"); !strings.Contains(string(page), want) {
		t.Errorf("docs/api.md does not state the transition table; want it to contain\n%s", want)
	}
}
