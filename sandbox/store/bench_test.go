package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// BenchmarkListReferrals lists one page of 50 for a client holding 100 and
// 100,000 referrals, among 10,000 of other clients whose ids sort on both
// sides of hers. The first page and a page from the middle of the listing
// should cost about the same at both sizes: a page is an index seek plus 51
// records, whatever the store holds.
func BenchmarkListReferrals(b *testing.B) {
	for _, n := range []int{100, 100_000} {
		s := seedBench(b, n)
		benchPages(b, s, n)
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// benchPages times the first page of 50 of client-b's referrals and one
// from the middle of her n.
func benchPages(b *testing.B, s store.Store, n int) {
	middle := cursorAt(b, s, n/2)
	for _, page := range []struct{ name, cursor string }{{"first", ""}, {"middle", middle}} {
		b.Run(fmt.Sprintf("n=%d/%s", n, page.name), func(b *testing.B) {
			for b.Loop() {
				got, _, err := s.ListReferrals(context.Background(), "client-b", store.Page{Limit: 50, Cursor: page.cursor})
				if err != nil || len(got) != 50 {
					b.Fatalf("listed %d records: %v", len(got), err)
				}
			}
		})
	}
}

func seedBench(b *testing.B, n int) *store.BuntStore {
	b.Helper()
	s, err := store.Open(store.MemoryPath)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Load(context.Background(), benchSet(n)); err != nil {
		b.Fatal(err)
	}
	return s
}

// benchSet is n referrals of client-b among 10,000 of client-a and
// client-c, whose ids sort on both sides of hers.
func benchSet(n int) *fixtures.Set {
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	set := &fixtures.Set{}
	add := func(client string, i int) {
		r := referral(client, fmt.Sprintf("OUT-%s-%07d", client, i), start.Add(time.Duration(i)*time.Minute).Format(referrals.TimestampLayout))
		r.Patient = referrals.Patient{FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1990-01-02", Gender: "female", Email: "ada@example.test"}
		set.Referrals = append(set.Referrals, r)
	}
	for i := range n {
		add("client-b", i)
	}
	for _, noise := range []string{"client-a", "client-c"} {
		for i := range 5_000 {
			add(noise, i)
		}
	}
	return set
}

// cursorAt returns the cursor that resumes the listing after its first
// skip records.
func cursorAt(b *testing.B, s store.Store, skip int) string {
	b.Helper()
	cursor := ""
	for skip > 0 {
		limit := min(skip, store.MaxLimit)
		_, next, err := s.ListReferrals(context.Background(), "client-b", store.Page{Limit: limit, Cursor: cursor})
		if err != nil {
			b.Fatal(err)
		}
		cursor, skip = next, skip-limit
	}
	return cursor
}

// BenchmarkOpenDataFile opens a data file of 100,000 referrals (and the
// 10,000 of other clients), as a restart does, and times apart the check
// for damage that Open runs before buntdb loads the file: its share of
// the open is what the check costs a start.
func BenchmarkOpenDataFile(b *testing.B) {
	path := filepath.Join(b.TempDir(), "data.db")
	s, err := store.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Seed(context.Background(), benchSet(100_000)); err != nil {
		b.Fatal(err)
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	b.Run("open", func(b *testing.B) {
		for b.Loop() {
			s, err := store.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("check", func(b *testing.B) {
		b.SetBytes(fi.Size())
		for b.Loop() {
			if err := store.CheckDamage(path); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkAppendReferralsJSON writes a page of 50 of client-b's referrals
// through, as the listing handler does once their stored JSON is verified:
// each compact record is expanded into the page.
func BenchmarkAppendReferralsJSON(b *testing.B) {
	s := seedBench(b, 100)
	b.Cleanup(func() { _ = s.Close() })
	var buf []byte
	for b.Loop() {
		var err error
		if buf, _, err = s.AppendReferralsJSON(context.Background(), buf[:0], "client-b", store.Page{Limit: 50}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkResetEncoded resets an in-memory store to 100,000 encoded
// referrals, as the sandbox seeds --fixtures. Its allocations per record
// (allocs/op over 100,000) are what stays resident after start beside the
// records: a small object allocated for each record and dropped leaves the
// spans of the objects kept for the records partly used.
func BenchmarkResetEncoded(b *testing.B) {
	e, err := store.EncodeSet(benchSet(100_000))
	if err != nil {
		b.Fatal(err)
	}
	s, err := store.Open(store.MemoryPath)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	for b.Loop() {
		if err := s.ResetEncoded(context.Background(), e); err != nil {
			b.Fatal(err)
		}
	}
}
