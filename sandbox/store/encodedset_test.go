package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// resetFixtures is a set with what a reset must bring back exactly:
// timestamps not yet canonical, identifiers that need escaping, two
// clients, and qualified referrals with audit trails longer than the
// record carries.
func resetFixtures(n int) *fixtures.Set {
	set := &fixtures.Set{}
	for i := range n {
		client := []string{"alice", "bob:%x"}[i%2]
		r := referral(client, fmt.Sprintf("R:%d", i), fmt.Sprintf("2025-10-13T10:%02d:%02d.5+01:00", i/60%60, i%60))
		r.Patient.FirstName = fmt.Sprintf("Patient %d", i)
		r.Notes = "<notes> & more"
		set.Referrals = append(set.Referrals, r)
	}
	for i := range 3 {
		q := qualified([]string{"alice", "bob:%x"}[i%2], fmt.Sprintf("Q-%d", i), "2025-10-13T10:00:00Z")
		for j := range store.TrailInRecord + 5 {
			q.AuditTrail = append(q.AuditTrail, referrals.AuditEntry{
				At: fmt.Sprintf("2025-10-13T11:00:%02d.25Z", j), Action: referrals.AuditViewed, Actor: "alice"})
		}
		set.QualifiedReferrals = append(set.QualifiedReferrals, q)
	}
	return set
}

// dump is everything a client can read of the store, as the API would
// write it: every page of both listings, each record read directly, each
// qualified referral's whole audit trail, and the clients.
func dump(t *testing.T, s store.Store) string {
	t.Helper()
	var b strings.Builder
	write := func(v any) {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	clients, err := s.Clients(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	write(clients)
	for _, c := range clients {
		for cursor := ""; ; {
			page, next, err := s.ListReferrals(context.Background(), c, store.Page{Limit: 7, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			write(page)
			for _, r := range page {
				got, err := s.GetReferral(context.Background(), c, r.OutcomesID)
				if err != nil {
					t.Fatal(err)
				}
				write(got)
			}
			if cursor = next; cursor == "" {
				break
			}
		}
		qs, _, err := s.ListQualified(context.Background(), c, store.Page{Limit: store.MaxLimit}, nil)
		if err != nil {
			t.Fatal(err)
		}
		write(qs)
		for _, q := range qs {
			for cursor := ""; ; {
				trail, next, err := s.QualifiedAuditTrail(context.Background(), c, q.ExternalSourceID, store.Page{Limit: 10, Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				write(trail)
				if cursor = next; cursor == "" {
					break
				}
			}
		}
	}
	return b.String()
}

// change does to the store what a day of testing does: updates, new
// records of both kinds, audited reads.
func change(t *testing.T, s store.Store) {
	t.Helper()
	noErr(t, s.CreateReferral(context.Background(), referral("alice", "NEW", "2025-10-14T00:00:00Z")))
	noErr(t, s.CreateReferral(context.Background(), referral("carol", "NEW", "2025-10-14T00:00:00Z")))
	_, err := s.UpdateReferral(context.Background(), "alice", "R:0", func(r *referrals.Referral) error { r.Status = referrals.StatusEnrolled; return nil })
	noErr(t, err)
	_, err = s.UpdateReferral(context.Background(), "bob:%x", "R:1", func(r *referrals.Referral) error { r.Notes = "changed"; return nil })
	noErr(t, err)
	noErr(t, s.CreateQualified(context.Background(), qualified("alice", "Q-NEW", "2025-10-14T00:00:00Z")))
	viewed := referrals.AuditEntry{At: "2025-10-14T01:00:00.000000Z", Action: referrals.AuditViewed, Actor: "alice", RequestID: "req-1"}
	_, err = s.GetQualified(context.Background(), "alice", "Q-0", &viewed)
	noErr(t, err)
}

// decodedOnly hides the embedded store's encoded loading, so the store is
// given the fixtures decoded, as the Redis store is.
type decodedOnly struct{ store.Store }

// TestResetFromRestoresFixturesExactly: whatever changed, a reset to the
// encoded fixtures gives back, byte for byte, what seeding them gave, and
// what loading the decoded fixtures gives: on a memory store (which
// shares the encoded set's strings), a file (rebuilt from them), and a
// store given them decoded.
func TestResetFromRestoresFixturesExactly(t *testing.T) {
	set := resetFixtures(40)
	reference := mustOpen(t, store.MemoryPath)
	noErr(t, reference.Load(context.Background(), set))
	want := dump(t, reference)

	encoded, err := store.EncodeSet(set)
	if err != nil {
		t.Fatal(err)
	}
	for name, open := range map[string]func(t *testing.T) store.Store{
		"memory":  func(t *testing.T) store.Store { return mustOpen(t, store.MemoryPath) },
		"file":    func(t *testing.T) store.Store { return mustOpen(t, filepath.Join(t.TempDir(), "data.db")) },
		"decoded": func(t *testing.T) store.Store { return decodedOnly{mustOpen(t, store.MemoryPath)} },
	} {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			defer func() { noErr(t, s.Close()) }()
			noErr(t, store.SeedFrom(context.Background(), s, encoded))
			if got := dump(t, s); got != want {
				t.Fatalf("seeded from the encoded set:\n%s\nwant, as loading the fixtures gives:\n%s", got, want)
			}
			for round := range 2 {
				change(t, s)
				if dump(t, s) == want {
					t.Fatal("the changes changed nothing: the test would prove nothing")
				}
				noErr(t, store.ResetFrom(context.Background(), s, encoded))
				if got := dump(t, s); got != want {
					t.Fatalf("after changes and reset %d:\n%s\nwant:\n%s", round+1, got, want)
				}
			}
		})
	}
}

// TestResetClientFromRestoresOnlyThatClient: a client's reset brings its
// fixtures back exactly and leaves every other client's records as they
// are, changes included.
func TestResetClientFromRestoresOnlyThatClient(t *testing.T) {
	set := resetFixtures(20)
	encoded, err := store.EncodeSet(set)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]store.Store{
		"memory":  mustOpen(t, store.MemoryPath),
		"decoded": decodedOnly{mustOpen(t, store.MemoryPath)},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() { noErr(t, s.Close()) }()
			noErr(t, store.SeedFrom(context.Background(), s, encoded))
			seeded := clientDump(t, s, "bob:%x")
			change(t, s)
			changedAlice, changedCarol := clientDump(t, s, "alice"), clientDump(t, s, "carol")
			noErr(t, store.ResetClientFrom(context.Background(), s, "bob:%x", encoded))
			if got := clientDump(t, s, "bob:%x"); got != seeded {
				t.Errorf("bob:%%x after its reset:\n%s\nwant its fixtures:\n%s", got, seeded)
			}
			if got := clientDump(t, s, "alice"); got != changedAlice {
				t.Errorf("alice changed by bob's reset:\n%s\nwant:\n%s", got, changedAlice)
			}
			if got := clientDump(t, s, "carol"); got != changedCarol {
				t.Errorf("carol changed by bob's reset:\n%s\nwant:\n%s", got, changedCarol)
			}
		})
	}
}

// clientDump is what one client reads: its listings and trails.
func clientDump(t *testing.T, s store.Store, client string) string {
	t.Helper()
	refs, _, err := s.ListReferrals(context.Background(), client, store.Page{Limit: store.MaxLimit})
	noErr(t, err)
	qs, _, err := s.ListQualified(context.Background(), client, store.Page{Limit: store.MaxLimit}, nil)
	noErr(t, err)
	data, err := json.Marshal([]any{refs, qs})
	noErr(t, err)
	return string(data)
}

// TestFileOfManyRecordsReopensIntact: a data file seeded with thousands of
// records and then changed opens again with every record as it was, in
// the same order, and a reset after reopening still restores the
// fixtures.
func TestFileOfManyRecordsReopensIntact(t *testing.T) {
	set := resetFixtures(5000)
	encoded, err := store.EncodeSet(set)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "data.db")
	s := mustOpen(t, path)
	noErr(t, store.SeedFrom(context.Background(), s, encoded))
	seeded := dump(t, s)
	change(t, s)
	changed := dump(t, s)
	noErr(t, s.Close())

	s = mustOpen(t, path)
	defer func() { noErr(t, s.Close()) }()
	if got := dump(t, s); got != changed {
		t.Fatalf("after reopening, the store reads %d bytes that differ from the %d written", len(got), len(changed))
	}
	noErr(t, store.ResetFrom(context.Background(), s, encoded))
	if got := dump(t, s); got != seeded {
		t.Fatal("a reset after reopening does not restore the fixtures")
	}
}

// TestEncodeSetRefusesWhatLoadRefuses: a record no key can be built for,
// or with a timestamp that is not one, is refused when the set is
// encoded, naming the record, as Load refuses it; two records with one
// key are refused when seeded, and nothing is loaded.
func TestEncodeSetRefusesWhatLoadRefuses(t *testing.T) {
	for name, r := range map[string]referrals.Referral{
		"no client":     referral("", "R-1", "2025-10-13T10:00:00Z"),
		"no id":         referral("alice", "", "2025-10-13T10:00:00Z"),
		"bad instant":   referral("alice", "R-1", "yesterday"),
		"empty instant": referral("alice", "R-1", ""),
	} {
		set := &fixtures.Set{Referrals: []referrals.Referral{referral("alice", "R-0", "2025-10-13T10:00:00Z"), r}}
		_, err := store.EncodeSet(set)
		if err == nil || !strings.Contains(err.Error(), "referral 1") {
			t.Errorf("%s: EncodeSet error %v, want one naming referral 1", name, err)
		}
		if loadErr := mustOpen(t, store.MemoryPath).Load(context.Background(), set); loadErr == nil {
			t.Errorf("%s: Load accepted what EncodeSet refused", name)
		}
	}
	dup := &fixtures.Set{Referrals: []referrals.Referral{
		referral("alice", "R-1", "2025-10-13T10:00:00Z"), referral("alice", "R-1", "2025-10-13T11:00:00Z")}}
	encoded, err := store.EncodeSet(dup)
	if err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, store.MemoryPath)
	if err := store.SeedFrom(context.Background(), s, encoded); err == nil {
		t.Fatal("seeding two records with one key succeeded")
	}
	if empty, err := s.Empty(context.Background()); err != nil || !empty {
		t.Errorf("after a refused seed the store is not empty (%v)", err)
	}
}
