package store

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/tidwall/buntdb"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

func auditedRecord(client, id string) referrals.QualifiedReferral {
	at := "2025-10-13T09:00:00.000000Z"
	return referrals.QualifiedReferral{ExternalSourceID: id, ClientID: client, Status: referrals.StatusReceived, SubmittedAt: at,
		Patient:    referrals.Patient{FirstName: "Grace", LastName: "Hopper", DateOfBirth: "1985-12-09", Gender: "female"},
		AuditTrail: []referrals.AuditEntry{{At: at, Action: referrals.AuditSubmitted, Actor: client}}}
}

func readView(i int) *referrals.AuditEntry {
	return &referrals.AuditEntry{At: "2025-10-13T10:00:00.000000Z", Action: referrals.AuditViewed, Actor: "alice", RequestID: fmt.Sprintf("%08d", i)}
}

// storedValue is the record's value as buntdb holds it.
func storedValue(t *testing.T, s *BuntStore, client, id string) string {
	t.Helper()
	var v string
	err := s.db.View(func(tx *buntdb.Tx) error {
		var err error
		v, err = tx.Get(recordKey(qualifiedPrefix, client, id))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestAuditedReadsCostConstantBytes: a read records its view without
// rewriting the record, so the record's stored value stays the same and
// every read adds the same few bytes to the file, the 500th as the 1st.
// Before, each read rewrote the whole record with a trail one entry longer.
func TestAuditedReadsCostConstantBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.db")
	s, err := Open(path, WithoutAutoShrink())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CreateQualified(context.Background(), auditedRecord("alice", "Q-1")); err != nil {
		t.Fatal(err)
	}
	record := storedValue(t, s, "alice", "Q-1")
	growth := func(i int) int64 {
		before := fileSize(path)
		if _, err := s.GetQualified(context.Background(), "alice", "Q-1", readView(i)); err != nil {
			t.Fatal(err)
		}
		return fileSize(path) - before
	}
	first := growth(1)
	for i := 2; i < 500; i++ {
		growth(i)
	}
	last := growth(500)
	if first != last || first > 400 {
		t.Errorf("the first read wrote %d bytes and the 500th %d; want the same few hundred", first, last)
	}
	if got := storedValue(t, s, "alice", "Q-1"); got != record {
		t.Errorf("500 reads rewrote the record: %d bytes, was %d", len(got), len(record))
	}
	q, err := s.GetQualified(context.Background(), "alice", "Q-1", nil)
	if err != nil || q.AuditTrailTotal != 501 || len(q.AuditTrail) != TrailInRecord {
		t.Errorf("after 500 reads: total %d, %d entries in the record (err %v); want 501 and %d", q.AuditTrailTotal, len(q.AuditTrail), err, TrailInRecord)
	}
}

// TestLegacyTrailMigrates: a record written by an older sandbox, with its
// whole trail inside, reads the same, and its first audited read moves the
// trail to audit keys, after which the record no longer holds it.
func TestLegacyTrailMigrates(t *testing.T) {
	s, err := Open(MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	legacy := auditedRecord("alice", "Q-1")
	for i := range TrailInRecord + 5 {
		legacy.AuditTrail = append(legacy.AuditTrail, *readView(i))
	}
	b, err := json.Marshal(legacy)
	if err != nil {
		t.Fatal(err)
	}
	// What an older sandbox stored: the sort line, then the whole record.
	key := recordKey(qualifiedPrefix, "alice", "Q-1")
	err = s.db.Update(func(tx *buntdb.Tx) error {
		_, _, err := tx.Set(key, sortLine("alice", legacy.SubmittedAt, "Q-1")+"\n"+string(b), nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	total := len(legacy.AuditTrail)
	before, err := s.GetQualified(context.Background(), "alice", "Q-1", nil)
	if err != nil || before.AuditTrailTotal != total || len(before.AuditTrail) != TrailInRecord {
		t.Fatalf("legacy record: total %d, %d in the record (err %v); want %d and %d", before.AuditTrailTotal, len(before.AuditTrail), err, total, TrailInRecord)
	}
	page, _, err := s.QualifiedAuditTrail(context.Background(), "alice", "Q-1", Page{Limit: MaxLimit})
	if err != nil || len(page) != total {
		t.Fatalf("legacy trail pages %d entries (err %v), want %d", len(page), err, total)
	}

	after, err := s.GetQualified(context.Background(), "alice", "Q-1", readView(999))
	if err != nil || after.AuditTrailTotal != total+1 || after.AuditTrail[len(after.AuditTrail)-1].RequestID != "00000999" {
		t.Fatalf("first audited read: total %d, last %+v (err %v)", after.AuditTrailTotal, after.AuditTrail[len(after.AuditTrail)-1], err)
	}
	var stored referrals.QualifiedReferral
	if _, record := splitValue(storedValue(t, s, "alice", "Q-1")); json.Unmarshal([]byte(record), &stored) != nil || len(stored.AuditTrail) != 0 {
		t.Errorf("the record still holds %d audit entries after migrating", len(stored.AuditTrail))
	}
	page, _, err = s.QualifiedAuditTrail(context.Background(), "alice", "Q-1", Page{Limit: MaxLimit})
	if err != nil || len(page) != total+1 || page[0].Action != referrals.AuditSubmitted || page[1].RequestID != "00000000" {
		t.Errorf("migrated trail: %d entries (err %v), want %d in the old order", len(page), err, total+1)
	}
}

// TestAuditKey pins the audit keys' spelling, which data files hold: the
// seq zero-padded to 20 digits, so keys order by it.
func TestAuditKey(t *testing.T) {
	for seq, want := range map[uint64]string{
		0:              "a:x:c:00000000000000000000",
		42:             "a:x:c:00000000000000000042",
		math.MaxUint64: "a:x:c:18446744073709551615",
	} {
		if got := auditKey("a:x:c:", seq); got != want {
			t.Errorf("auditKey(%d) = %q, want %q", seq, got, want)
		}
		if got, ok := auditSeq("a:x:c:", want); !ok || got != seq {
			t.Errorf("auditSeq(%q) = %d, %v", want, got, ok)
		}
	}
}

// TestNewRecordStartsANewTrail: audit entries under an id that has no
// record (a transaction a crash tore, which buntdb replays write by write,
// or a client reset of an earlier version, which kept them) are not the
// history of a new record submitted under that id: it reads back with its
// own trail only, by every path that writes it, and after a reopen.
func TestNewRecordStartsANewTrail(t *testing.T) {
	for _, kind := range Backings {
		for _, how := range []string{"CreateQualified", "CreateQualifiedJSON"} {
			t.Run(kind+"/"+how, func(t *testing.T) {
				s, path := openBacking(t, kind)
				defer func() { _ = s.Close() }()
				stale, _ := json.Marshal(readView(1))
				err := s.updateTx(func(tx *storeTx) error {
					prefix := auditKeyPrefix("alice", "Q-1")
					for seq := uint64(1); seq <= 2; seq++ {
						if _, _, err := tx.Set(auditKey(prefix, seq), string(stale), nil); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				q := auditedRecord("alice", "Q-1")
				if how == "CreateQualified" {
					err = s.CreateQualified(context.Background(), q)
				} else {
					var answer []byte
					answer, err = s.CreateQualifiedJSON(context.Background(), nil, q)
					var got referrals.QualifiedReferral
					if jerr := json.Unmarshal(answer, &got); err == nil && (jerr != nil || got.AuditTrailTotal != 1 || len(got.AuditTrail) != 1) {
						t.Errorf("the answer's trail: %d of %d entries (%v): %s; want the new record's one", len(got.AuditTrail), got.AuditTrailTotal, jerr, answer)
					}
				}
				if err != nil {
					t.Fatal(err)
				}
				check := func(when string) {
					got, err := s.GetQualified(context.Background(), "alice", "Q-1", nil)
					if err != nil {
						t.Fatal(err)
					}
					if got.AuditTrailTotal != 1 || len(got.AuditTrail) != 1 || got.AuditTrail[0].Action != referrals.AuditSubmitted {
						t.Errorf("%s: trail %+v (total %d); want only the new record's submission", when, got.AuditTrail, got.AuditTrailTotal)
					}
				}
				check("created")
				if kind == "file" {
					_ = s.Close()
					if s, err = Open(path); err != nil {
						t.Fatal(err)
					}
					check("reopened")
				}
			})
		}
	}
}
