package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// testColonsInIDs: ':' (and the '%' an escaping scheme might use, and
// control characters) inside client ids and record ids must not let two
// records share a key or one client's range swallow another's.
func testColonsInIDs(t *testing.T, s store.Store) {
	records := []struct{ client, id string }{
		{"a", "b:c"},
		{"a:b", "c"},
		{"a%3Ab", "c"},
		{"a:", "b:c"},
		{":a", "urn:x:1"},
		{"a", "b%3Ac"},
		{"a", "b"},
		{"line\nbreak", "id\nwith\x00controls"},
	}
	for _, k := range kinds() {
		t.Run(k.name, func(t *testing.T) {
			if err := s.Reset(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			for i, r := range records {
				if err := k.create(s, r.client, r.id, at(i)); err != nil {
					t.Fatalf("create %q/%q: %v", r.client, r.id, err)
				}
			}
			perClient := map[string]int{}
			for i, r := range records {
				perClient[r.client]++
				got, err := k.get(s, r.client, r.id)
				must(t, err)
				if got.client != r.client || got.id != r.id || got.submittedAt != at(i) {
					t.Errorf("get %q/%q = %+v", r.client, r.id, got)
				}
			}
			for client, n := range perClient {
				all := listAll(t, k, s, client, 1)
				if len(all) != n {
					t.Errorf("client %q lists %d records, want %d: %+v", client, len(all), n, all)
				}
				for _, e := range all {
					if e.client != client {
						t.Errorf("client %q lists %+v", client, e)
					}
				}
			}
			checkClients(t, s, []string{":a", "a", "a%3Ab", "a:", "a:b", "line\nbreak"})
			_, err := k.get(s, "a:b", "b:c")
			wantErr(t, fmt.Sprintf("%s a:b/b:c", k.name), err, store.ErrNotFound)
		})
	}
}
