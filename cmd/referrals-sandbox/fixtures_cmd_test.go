package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
)

// readDir returns every file of dir by name.
func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = data
	}
	return files
}

func generate(t *testing.T, environ map[string]string, args ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "fixtures")
	res := runCLI(t, environ, append([]string{"fixtures", "generate", "--out", out}, args...)...)
	if res.code != 0 {
		t.Fatalf("generate %v: exit %d, %s", args, res.code, res.stderr)
	}
	return out
}

func TestFixturesGenerateIsReproducible(t *testing.T) {
	args := []string{"--seed", "42", "--referrals", "25", "--qualified", "7", "--now", "2026-03-04T05:06:07Z"}
	first, second := generate(t, nil, args...), generate(t, nil, args...)
	a, b := readDir(t, first), readDir(t, second)
	names := []string{fixtures.ClientsFile, fixtures.TrialsFile, fixtures.ReferralsFile, fixtures.QualifiedReferralsFile}
	for _, name := range names {
		if len(a[name]) == 0 {
			t.Errorf("%s missing or empty", name)
		}
		if !bytes.Equal(a[name], b[name]) {
			t.Errorf("%s differs between two runs with the same seed", name)
		}
	}
	if len(a) != len(names) {
		t.Errorf("wrote %d files, want %d", len(a), len(names))
	}
	set, err := fixtures.LoadDir(first)
	if err != nil {
		t.Fatalf("generated directory does not load: %v", err)
	}
	if len(set.Referrals) != 25 || len(set.QualifiedReferrals) != 7 {
		t.Errorf("loaded %d referrals and %d qualified, want 25 and 7", len(set.Referrals), len(set.QualifiedReferrals))
	}
	// The same through the environment.
	viaEnv := generate(t, map[string]string{"SANDBOX_SEED": "42", "SANDBOX_REFERRALS": "25", "SANDBOX_QUALIFIED": "7", "SANDBOX_NOW": "2026-03-04T05:06:07Z"})
	if c := readDir(t, viaEnv); !bytes.Equal(c[fixtures.ReferralsFile], a[fixtures.ReferralsFile]) {
		t.Error("environment variables give other referrals than the same flags")
	}
	// Another seed gives other records.
	other := readDir(t, generate(t, nil, "--seed", "43", "--referrals", "25", "--qualified", "7", "--now", "2026-03-04T05:06:07Z"))
	if bytes.Equal(other[fixtures.ReferralsFile], a[fixtures.ReferralsFile]) {
		t.Error("seeds 42 and 43 gave the same referrals")
	}
}

// TestFixturesGenerateDefaultsReproduceTheEmbeddedReferrals proves the
// defaults are fixtures.DefaultGenerateOptions (seed and fixed Now
// included): they write the embedded referral files byte for byte.
func TestFixturesGenerateDefaultsReproduceTheEmbeddedReferrals(t *testing.T) {
	got := readDir(t, generate(t, nil))
	for _, name := range []string{fixtures.ReferralsFile, fixtures.QualifiedReferralsFile} {
		want, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "default", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[name], want) {
			t.Errorf("%s differs from the embedded one", name)
		}
	}
}

func TestFixturesGenerateKeepsTheBaseClients(t *testing.T) {
	base := filepath.Join("..", "..", "examples", "production-fixtures")
	out := generate(t, nil, "--fixtures", base, "--referrals", "3", "--qualified", "0")
	set, err := fixtures.LoadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	baseSet, err := fixtures.LoadDir(base)
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, c := range set.Clients {
		got = append(got, c.ClientID)
	}
	for _, c := range baseSet.Clients {
		want = append(want, c.ClientID)
	}
	if !slices.Equal(got, want) || len(set.Referrals) != 3 {
		t.Errorf("clients %v and %d referrals, want %v and 3", got, len(set.Referrals), want)
	}
	for _, r := range set.Referrals {
		if !slices.Contains(want, r.ClientID) {
			t.Errorf("referral owned by %s, not a base client", r.ClientID)
		}
	}
}
