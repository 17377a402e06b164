package recording

import (
	"strings"
	"testing"
)

// The words the served document declares are what a recording keeps of
// the real service's values; a divergence message keeps the document's
// words and array indexes and nothing the real service sent.
func TestRecordingsKeepOnlyTheDocumentsWords(t *testing.T) {
	placeholders, err := newPlaceholders(nil, []string{"trialId"})
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{placeholders: placeholders}
	for _, kept := range []string{"received", "female", "invalid_client"} {
		if got := placeholders.String(kept); got != kept {
			t.Errorf("the document's enum value %q became %q", kept, got)
		}
	}
	if got := placeholders.Path("/api/v1/referrals/qualified/MRN-1/audit-trail"); !strings.HasPrefix(got, "/api/v1/referrals/qualified/") || !strings.HasSuffix(got, "/audit-trail") || strings.Contains(got, "MRN-1") {
		t.Errorf("path: %s", got)
	}
	if got := placeholders.MemberName("AltTrialID"); got == "AltTrialID" {
		t.Error("a capitalised name the document does not declare was kept")
	}
	if got := placeholders.Header("trialId", "T-REAL-1"); got != "T-REAL-1" {
		t.Errorf("an --upstream-keep name's value: %s", got)
	}

	d := p.placeholderDivergence(`the real service answered a string at /referrals/0/Marguerite Okonkwo/dateOfBirth of its 200 body; the document says property "Marguerite Okonkwo" is unsupported, "firstName" is missing`)
	if strings.Contains(d, "Marguerite") || strings.Contains(d, "Okonkwo") {
		t.Errorf("the divergence quotes the real service's data: %s", d)
	}
	if !strings.Contains(d, " at /referrals/0/") || !strings.Contains(d, "/dateOfBirth of its 200 body") || !strings.Contains(d, `"firstName" is missing`) {
		t.Errorf("the divergence lost the document's words: %s", d)
	}
}
